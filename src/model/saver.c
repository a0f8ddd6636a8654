/*
 * saver.c
 *	  IR -> ONNX protobuf: the inverse of the loader, for models the engine
 *	  produces (optimized and quantized models stored back in the catalog).
 *
 * The protobuf-c message structs are built in a scratch arena that points
 * at the IR's own strings and tensor data (nothing is copied), packed into
 * one malloc'ed buffer, and the arena is dropped.
 */
#include "model/loader.h"
#include "model/saver.h"

#include <stdlib.h>
#include <string.h>

typedef struct save_ctx
{
	ox_arena	arena;
	ox_status  *st;
} save_ctx;

static void *
alloc(save_ctx *c, size_t bytes)
{
	void	   *p = ox_arena_alloc(&c->arena, bytes ? bytes : 1);

	if (!p)
		ox_fail(c->st, OX_OUT_OF_MEMORY, "could not allocate while saving the model");
	return p;
}

/* protobuf-c wants char * for strings it will only read */
static char *
str(const char *s)
{
	return (char *) (s ? s : "");
}

/*
 * 4-bit and 2-bit elements, one a byte in memory, are packed in the file:
 * two (four) a byte, the first element in the least significant bits.
 */
static bool
pack_narrow(save_ctx *c, Onnx__TensorProto *tp, const ox_tensor *t, int64_t n)
{
	int			bits = ox_dtype_bits(t->dtype);
	int			per_byte = 8 / bits;
	size_t		len = (size_t) ((n + per_byte - 1) / per_byte);
	uint8_t		mask = (uint8_t) ((1u << bits) - 1);
	const uint8_t *src = t->data;
	uint8_t    *dst = alloc(c, len);

	if (!dst)
		return false;
	memset(dst, 0, len);
	for (int64_t i = 0; i < n; i++)
		dst[i / per_byte] |= (uint8_t) ((src[i] & mask) << ((i % per_byte) * bits));
	tp->raw_data.data = dst;
	tp->raw_data.len = len;
	return true;
}

static Onnx__TensorProto *
tensor_to_proto(save_ctx *c, const ox_tensor *t, const char *name)
{
	Onnx__TensorProto *tp = alloc(c, sizeof(*tp));
	int64_t		n = ox_tensor_numel(t);

	if (!tp)
		return NULL;
	onnx__tensor_proto__init(tp);
	tp->name = str(name);
	tp->has_data_type = true;
	tp->data_type = (int32_t) t->dtype;
	tp->n_dims = (size_t) t->rank;
	tp->dims = (int64_t *) t->dims;
	if (n <= 0)
		return tp;
	if (t->dtype == OX_STRING)
	{
		const ox_string *s = t->data;

		tp->n_string_data = (size_t) n;
		tp->string_data = alloc(c, sizeof(ProtobufCBinaryData) * n);
		if (!tp->string_data)
			return NULL;
		for (int64_t i = 0; i < n; i++)
		{
			tp->string_data[i].data = (uint8_t *) s[i].data;
			tp->string_data[i].len = s[i].len;
		}
		return tp;
	}
	/* raw_data is little-endian, as x86-64 and aarch64 store it */
	tp->has_raw_data = true;
	if (ox_dtype_bits(t->dtype) > 0 && ox_dtype_bits(t->dtype) < 8)
		return pack_narrow(c, tp, t, n) ? tp : NULL;
	tp->raw_data.data = t->data;
	tp->raw_data.len = (size_t) n * ox_dtype_size(t->dtype);
	return tp;
}

static Onnx__TypeProto *
type_to_proto(save_ctx *c, const ox_type *t)
{
	Onnx__TypeProto *tp;

	if (!t || t->kind == OX_TYPE_UNKNOWN)
		return NULL;
	/* onnx readers reject element type 0: an unknown type is left out */
	if ((t->kind == OX_TYPE_TENSOR || t->kind == OX_TYPE_SPARSE_TENSOR) && t->elem == OX_UNDEFINED)
		return NULL;
	tp = alloc(c, sizeof(*tp));
	if (!tp)
		return NULL;
	onnx__type_proto__init(tp);
	switch (t->kind)
	{
		case OX_TYPE_TENSOR:
		case OX_TYPE_SPARSE_TENSOR:
			{
				Onnx__TypeProto__Tensor *tt = alloc(c, sizeof(*tt));
				Onnx__TensorShapeProto *shape = NULL;

				if (!tt)
					return NULL;
				onnx__type_proto__tensor__init(tt);
				tt->has_elem_type = true;
				tt->elem_type = (int32_t) t->elem;
				if (t->rank >= 0)
				{
					shape = alloc(c, sizeof(*shape));
					if (!shape)
						return NULL;
					onnx__tensor_shape_proto__init(shape);
					shape->n_dim = (size_t) t->rank;
					shape->dim = alloc(c, sizeof(void *) * (t->rank + 1));
					if (!shape->dim)
						return NULL;
					for (int i = 0; i < t->rank; i++)
					{
						Onnx__TensorShapeProto__Dimension *d = alloc(c, sizeof(*d));

						if (!d)
							return NULL;
						onnx__tensor_shape_proto__dimension__init(d);
						if (t->dims[i].value >= 0)
						{
							d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
							d->dim_value = t->dims[i].value;
						}
						else if (t->dims[i].param)
						{
							d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
							d->dim_param = str(t->dims[i].param);
						}
						shape->dim[i] = d;
					}
				}
				tt->shape = shape;
				if (t->kind == OX_TYPE_TENSOR)
				{
					tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
					tp->tensor_type = tt;
				}
				else
				{
					/* same wire layout: elem_type = 1, shape = 2 */
					tp->value_case = ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE;
					tp->sparse_tensor_type = (Onnx__TypeProto__SparseTensor *) tt;
					tt->base.descriptor = &onnx__type_proto__sparse_tensor__descriptor;
				}
				return tp;
			}
		case OX_TYPE_SEQUENCE:
			{
				Onnx__TypeProto__Sequence *sq = alloc(c, sizeof(*sq));

				if (!sq)
					return NULL;
				onnx__type_proto__sequence__init(sq);
				sq->elem_type = type_to_proto(c, t->inner);
				tp->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
				tp->sequence_type = sq;
				return tp;
			}
		case OX_TYPE_OPTIONAL:
			{
				Onnx__TypeProto__Optional *op = alloc(c, sizeof(*op));

				if (!op)
					return NULL;
				onnx__type_proto__optional__init(op);
				op->elem_type = type_to_proto(c, t->inner);
				tp->value_case = ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE;
				tp->optional_type = op;
				return tp;
			}
		case OX_TYPE_MAP:
			{
				Onnx__TypeProto__Map *mp = alloc(c, sizeof(*mp));

				if (!mp)
					return NULL;
				onnx__type_proto__map__init(mp);
				mp->has_key_type = true;
				mp->key_type = (int32_t) t->map_key;
				mp->value_type = type_to_proto(c, t->inner);
				tp->value_case = ONNX__TYPE_PROTO__VALUE_MAP_TYPE;
				tp->map_type = mp;
				return tp;
			}
		default:
			return NULL;
	}
}

static Onnx__ValueInfoProto *
value_info(save_ctx *c, const ox_value_def *v)
{
	Onnx__ValueInfoProto *vi = alloc(c, sizeof(*vi));

	if (!vi)
		return NULL;
	onnx__value_info_proto__init(vi);
	vi->name = str(v->name);
	vi->type = type_to_proto(c, &v->type);
	return vi;
}

static Onnx__GraphProto *graph_to_proto(save_ctx *c, const ox_graph *g);

static Onnx__AttributeProto *
attr_to_proto(save_ctx *c, const ox_attr *a)
{
	Onnx__AttributeProto *ap = alloc(c, sizeof(*ap));

	if (!ap)
		return NULL;
	onnx__attribute_proto__init(ap);
	ap->name = str(a->name);
	ap->has_type = true;
	ap->type = (Onnx__AttributeProto__AttributeType) a->type;
	switch (a->type)
	{
		case OX_ATTR_FLOAT:
			ap->has_f = true;
			ap->f = a->f;
			break;
		case OX_ATTR_INT:
			ap->has_i = true;
			ap->i = a->i;
			break;
		case OX_ATTR_STRING:
			ap->has_s = true;
			ap->s.data = (uint8_t *) a->s;
			ap->s.len = a->s_len;
			break;
		case OX_ATTR_FLOATS:
			ap->n_floats = (size_t) a->n;
			ap->floats = a->floats;
			break;
		case OX_ATTR_INTS:
			ap->n_ints = (size_t) a->n;
			ap->ints = a->ints;
			break;
		case OX_ATTR_STRINGS:
			ap->n_strings = (size_t) a->n;
			ap->strings = alloc(c, sizeof(ProtobufCBinaryData) * (a->n + 1));
			if (!ap->strings)
				return NULL;
			for (int i = 0; i < a->n; i++)
			{
				ap->strings[i].data = (uint8_t *) a->strings[i];
				ap->strings[i].len = a->string_lens ? a->string_lens[i] : strlen(a->strings[i]);
			}
			break;
		case OX_ATTR_TENSOR:
		case OX_ATTR_SPARSE_TENSOR:
			/* sparse attributes were densified at load; save them dense */
			ap->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
			ap->t = tensor_to_proto(c, a->t, "");
			if (!ap->t)
				return NULL;
			break;
		case OX_ATTR_TENSORS:
			ap->n_tensors = (size_t) a->n;
			ap->tensors = alloc(c, sizeof(void *) * (a->n + 1));
			if (!ap->tensors)
				return NULL;
			for (int i = 0; i < a->n; i++)
				if (!(ap->tensors[i] = tensor_to_proto(c, a->tensors[i], "")))
					return NULL;
			break;
		case OX_ATTR_GRAPH:
			ap->g = graph_to_proto(c, a->g);
			if (!ap->g)
				return NULL;
			break;
		case OX_ATTR_GRAPHS:
			ap->n_graphs = (size_t) a->n;
			ap->graphs = alloc(c, sizeof(void *) * (a->n + 1));
			if (!ap->graphs)
				return NULL;
			for (int i = 0; i < a->n; i++)
				if (!(ap->graphs[i] = graph_to_proto(c, a->graphs[i])))
					return NULL;
			break;
		case OX_ATTR_TYPE_PROTO:
			ap->tp = type_to_proto(c, a->tp);
			break;
		default:
			ox_fail(c->st, OX_UNSUPPORTED, "cannot save attribute \"%s\" of type %s", a->name,
					ox_attr_type_name(a->type));
			return NULL;
	}
	return ap;
}

static Onnx__GraphProto *
graph_to_proto(save_ctx *c, const ox_graph *g)
{
	Onnx__GraphProto *gp = alloc(c, sizeof(*gp));
	int			n_init = 0;
	int			n_vi = 0;

	if (!gp)
		return NULL;
	onnx__graph_proto__init(gp);
	gp->name = str(g->name);
	gp->doc_string = g->doc && *g->doc ? (char *) g->doc : NULL;

	gp->node = alloc(c, sizeof(void *) * (g->n_nodes + 1));
	if (!gp->node)
		return NULL;
	for (int k = 0; k < g->n_nodes; k++)
	{
		const ox_node *n = &g->nodes[k];
		Onnx__NodeProto *np;

		if (n->dead)
			continue;
		np = alloc(c, sizeof(*np));
		if (!np)
			return NULL;
		onnx__node_proto__init(np);
		np->name = str(n->name);
		np->op_type = str(n->op_type);
		np->domain = n->domain[0] ? (char *) n->domain : NULL;
		np->doc_string = n->doc && *n->doc ? (char *) n->doc : NULL;
		np->n_input = (size_t) n->n_inputs;
		np->input = alloc(c, sizeof(char *) * (n->n_inputs + 1));
		np->n_output = (size_t) n->n_outputs;
		np->output = alloc(c, sizeof(char *) * (n->n_outputs + 1));
		np->n_attribute = (size_t) n->n_attrs;
		np->attribute = alloc(c, sizeof(void *) * (n->n_attrs + 1));
		if (!np->input || !np->output || !np->attribute)
			return NULL;
		for (int i = 0; i < n->n_inputs; i++)
			np->input[i] = n->inputs[i] >= 0 ? (char *) g->values[n->inputs[i]].name : "";
		for (int i = 0; i < n->n_outputs; i++)
			np->output[i] = n->outputs[i] >= 0 ? (char *) g->values[n->outputs[i]].name : "";
		for (int i = 0; i < n->n_attrs; i++)
			if (!(np->attribute[i] = attr_to_proto(c, &n->attrs[i])))
				return NULL;
		gp->node[gp->n_node++] = np;
	}

	for (int v = 0; v < g->n_values; v++)
		if (g->values[v].init && !g->values[v].is_outer)
			n_init++;
	gp->initializer = alloc(c, sizeof(void *) * (n_init + 1));
	gp->value_info = alloc(c, sizeof(void *) * (g->n_values + 1));
	gp->input = alloc(c, sizeof(void *) * (g->n_inputs + 1));
	gp->output = alloc(c, sizeof(void *) * (g->n_outputs + 1));
	if (!gp->initializer || !gp->value_info || !gp->input || !gp->output)
		return NULL;
	for (int v = 0; v < g->n_values; v++)
	{
		const ox_value_def *vd = &g->values[v];

		if (vd->init && !vd->is_outer)
		{
			/* an initializer nothing reads any more (folded away) is dropped */
			if (vd->n_consumers == 0 && !vd->is_output && !vd->is_input)
				continue;
			if (!(gp->initializer[gp->n_initializer++] = tensor_to_proto(c, vd->init, vd->name)))
				return NULL;
		}
		else if (vd->producer >= 0 && !vd->is_output && vd->type.kind != OX_TYPE_UNKNOWN &&
				 !(vd->type.kind == OX_TYPE_TENSOR && vd->type.elem == OX_UNDEFINED))
		{
			if (!(gp->value_info[n_vi++] = value_info(c, vd)))
				return NULL;
		}
	}
	gp->n_value_info = (size_t) n_vi;
	for (int i = 0; i < g->n_inputs; i++)
		if (!(gp->input[gp->n_input++] = value_info(c, &g->values[g->inputs[i]])))
			return NULL;
	for (int i = 0; i < g->n_outputs; i++)
		if (!(gp->output[gp->n_output++] = value_info(c, &g->values[g->outputs[i]])))
			return NULL;
	return gp;
}

ox_code
ox_model_save(const ox_model *m, void **bytes, size_t *len, ox_status *st)
{
	save_ctx	c;
	Onnx__ModelProto mp;
	ox_code		rc = OX_OK;

	*bytes = NULL;
	*len = 0;
	/* a graph other runtimes cannot run is not saved as ONNX */
	for (int gi = 0; gi < m->n_graphs; gi++)
		for (int k = 0; k < m->graphs[gi]->n_nodes; k++)
		{
			const ox_node *n = &m->graphs[gi]->nodes[k];

			if (!n->dead && strncmp(n->domain, OX_PRIVATE_DOMAIN_PREFIX, strlen(OX_PRIVATE_DOMAIN_PREFIX)) == 0)
				return ox_fail(st, OX_UNSUPPORTED,
							   "the graph holds the engine-private operator %s.%s (%s); optimize it with "
							   "portable_graph set to save it", n->domain, n->op_type,
							   strcmp(n->domain, OX_NCHWC_DOMAIN) == 0 ? "the channel-blocked layout of level 3" :
							   "a fusion for sessions that run the graph");
		}
	/* ... nor one whose session freed a constant after packing it */
	for (int gi = 0; gi < m->n_graphs; gi++)
		for (int v = 0; v < m->graphs[gi]->n_values; v++)
		{
			const ox_value_def *vd = &m->graphs[gi]->values[v];

			if (vd->init && vd->init->released)
				return ox_fail(st, OX_UNSUPPORTED,
							   "the session released the data of initializer \"%s\" after packing it; "
							   "create the session without release_weights to save its model",
							   vd->name);
		}
	memset(&c, 0, sizeof(c));
	ox_arena_init(&c.arena);
	c.st = st;
	onnx__model_proto__init(&mp);
	mp.has_ir_version = true;
	mp.ir_version = m->ir_version;
	mp.producer_name = str(m->producer_name);
	mp.producer_version = str(m->producer_version);
	mp.domain = m->domain && *m->domain ? (char *) m->domain : NULL;
	mp.has_model_version = m->model_version != 0;
	mp.model_version = m->model_version;
	mp.doc_string = m->doc && *m->doc ? (char *) m->doc : NULL;
	mp.opset_import = alloc(&c, sizeof(void *) * (m->n_opsets + 1));
	mp.metadata_props = alloc(&c, sizeof(void *) * (m->n_meta + 1));
	if (!mp.opset_import || !mp.metadata_props)
		goto fail;
	for (int i = 0; i < m->n_opsets; i++)
	{
		Onnx__OperatorSetIdProto *op = alloc(&c, sizeof(*op));

		if (!op)
			goto fail;
		onnx__operator_set_id_proto__init(op);
		op->domain = str(m->opsets[i].domain);
		op->has_version = true;
		op->version = m->opsets[i].version;
		mp.opset_import[mp.n_opset_import++] = op;
	}
	for (int i = 0; i < m->n_meta; i++)
	{
		Onnx__StringStringEntryProto *e = alloc(&c, sizeof(*e));

		if (!e)
			goto fail;
		onnx__string_string_entry_proto__init(e);
		e->key = str(m->meta[i].key);
		e->value = str(m->meta[i].value);
		mp.metadata_props[mp.n_metadata_props++] = e;
	}
	mp.graph = graph_to_proto(&c, m->graph);
	if (!mp.graph)
		goto fail;
	*len = onnx__model_proto__get_packed_size(&mp);
	*bytes = malloc(*len ? *len : 1);
	if (!*bytes)
	{
		rc = ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate %zu bytes for the saved model", *len);
		*len = 0;
	}
	else
		onnx__model_proto__pack(&mp, *bytes);
	ox_arena_free(&c.arena);
	return rc;

fail:
	ox_arena_free(&c.arena);
	if (st->code == OX_OK)
		ox_fail(st, OX_INTERNAL, "could not save the model");
	return st->code;
}
