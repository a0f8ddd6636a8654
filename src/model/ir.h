/*
 * ir.h
 *	  The engine's in-memory model: graphs of nodes and values, parsed from
 *	  ONNX protobuf by the loader and rewritten by optimizer passes.
 *
 * Memory: names, attributes and small arrays live in the model's arena and
 * die with the model.  Tensor data (initializers, tensor attributes) is
 * registered with ox_model_own_tensor and freed with the model.  A graph's
 * value and node arrays are growable (passes add to them); a node removed by
 * a pass is marked dead and dropped by ox_graph_compact.
 *
 * Values are referred to by index into graph->values; -1 marks an omitted
 * optional input or output.  Subgraphs (If/Loop/Scan bodies) refer to values
 * of enclosing graphs through "outer" values: entries with is_outer set whose
 * name is resolved in the parent scope at session creation.
 */
#ifndef OX_IR_H
#define OX_IR_H

#include <stdbool.h>
#include <stdint.h>

#include "util/arena.h"
#include "util/status.h"
#include "util/tensor.h"

/* Numbering follows onnx.AttributeProto.AttributeType. */
typedef enum ox_attr_type
{
	OX_ATTR_UNDEFINED = 0,
	OX_ATTR_FLOAT = 1,
	OX_ATTR_INT = 2,
	OX_ATTR_STRING = 3,
	OX_ATTR_TENSOR = 4,
	OX_ATTR_GRAPH = 5,
	OX_ATTR_FLOATS = 6,
	OX_ATTR_INTS = 7,
	OX_ATTR_STRINGS = 8,
	OX_ATTR_TENSORS = 9,
	OX_ATTR_GRAPHS = 10,
	OX_ATTR_SPARSE_TENSOR = 11,
	OX_ATTR_SPARSE_TENSORS = 12,
	OX_ATTR_TYPE_PROTO = 13,
	OX_ATTR_TYPE_PROTOS = 14
} ox_attr_type;

typedef enum ox_type_kind
{
	OX_TYPE_UNKNOWN = 0,
	OX_TYPE_TENSOR,
	OX_TYPE_SEQUENCE,
	OX_TYPE_MAP,
	OX_TYPE_OPTIONAL,
	OX_TYPE_SPARSE_TENSOR
} ox_type_kind;

typedef struct ox_dim
{
	int64_t		value;			/* >= 0 when known, -1 when symbolic/unknown */
	const char *param;			/* symbolic name ("batch"), or NULL */
} ox_dim;

typedef struct ox_type ox_type;
struct ox_type
{
	ox_type_kind kind;
	ox_dtype	elem;			/* tensor element type */
	int			rank;			/* -1 when the shape is not declared */
	ox_dim	   *dims;
	ox_dtype	map_key;		/* OX_TYPE_MAP */
	ox_type    *inner;			/* sequence/optional element, map value */
};

typedef struct ox_graph ox_graph;
typedef struct ox_model ox_model;
typedef struct ox_uses ox_uses;

typedef struct ox_attr
{
	const char *name;
	ox_attr_type type;
	bool		untyped;		/* the file gave no type (IR version 1): inferred from the fields set */
	const char *ref_attr_name;	/* function attribute reference, unused for graphs */
	float		f;
	int64_t		i;
	const char *s;				/* NUL-terminated copy */
	size_t		s_len;
	ox_tensor  *t;
	ox_graph   *g;
	int			n;				/* element count of the list forms */
	float	   *floats;
	int64_t    *ints;
	const char **strings;
	size_t	   *string_lens;
	ox_tensor **tensors;
	ox_graph  **graphs;
	ox_type    *tp;				/* TYPE_PROTO */
} ox_attr;

typedef struct ox_value_def
{
	const char *name;
	ox_type		type;			/* declared or inferred; kind UNKNOWN if neither */
	int			producer;		/* node index, -1 for inputs/initializers/outer */
	int			producer_slot;	/* output index within the producer */
	bool		is_input;		/* listed in graph.input */
	bool		is_output;		/* listed in graph.output */
	bool		is_outer;		/* defined in an enclosing graph */
	ox_tensor  *init;			/* constant data (initializer), else NULL */
	int			n_consumers;	/* filled by ox_graph_analyze */
} ox_value_def;

typedef struct ox_node
{
	const char *name;			/* never NULL: generated when the model has none */
	const char *op_type;
	const char *domain;			/* "" for ai.onnx (also for "ai.onnx") */
	const char *doc;
	int			opset;			/* opset version the model imports for domain */
	int			n_inputs;
	int		   *inputs;			/* value ids; -1 = omitted optional input */
	int			n_outputs;
	int		   *outputs;		/* value ids; -1 = omitted optional output */
	int			n_attrs;
	ox_attr    *attrs;
	/* values of enclosing graphs read by this node's subgraphs */
	int			n_implicit;
	int		   *implicit_inputs;
	bool		dead;			/* removed by a pass; dropped by compact */
	const char *fused_from;		/* set by fusion passes: what it replaced */
} ox_node;

struct ox_graph
{
	const char *name;
	const char *doc;
	ox_model   *model;
	ox_graph   *parent;			/* enclosing graph for subgraphs */
	ox_value_def *values;
	int			n_values;
	int			cap_values;
	ox_node    *nodes;			/* topologically sorted after load */
	int			n_nodes;
	int			cap_nodes;
	int		   *inputs;			/* graph.input, in declared order */
	int			n_inputs;
	int		   *outputs;
	int			n_outputs;
	int		   *outer;			/* values with is_outer set */
	int			n_outer;
	ox_uses    *uses;			/* consumers of each value while optimizing (uses.h) */
};

typedef struct ox_opset
{
	const char *domain;			/* "" for ai.onnx */
	int64_t		version;
} ox_opset;

typedef struct ox_meta_prop
{
	const char *key;
	const char *value;
} ox_meta_prop;

struct ox_model
{
	ox_arena	arena;
	int64_t		ir_version;
	int64_t		model_version;
	const char *producer_name;
	const char *producer_version;
	const char *domain;
	const char *doc;
	ox_opset   *opsets;
	int			n_opsets;
	ox_meta_prop *meta;
	int			n_meta;
	ox_graph   *graph;
	/* everything below is bookkeeping for freeing */
	ox_tensor **tensors;
	int			n_tensors;
	int			cap_tensors;
	ox_graph  **graphs;
	int			n_graphs;
	int			cap_graphs;
	int			name_counter;	/* for generated names */
};

/* model lifetime */
ox_model   *ox_model_new(ox_status *st);
void		ox_model_free(ox_model *m);
/* opset imported for a domain ("" or "ai.onnx" = default), -1 if none */
int64_t		ox_model_opset(const ox_model *m, const char *domain);
/* a new empty tensor owned by the model */
ox_tensor  *ox_model_new_tensor(ox_model *m, ox_status *st);
/* a unique name with the given prefix, allocated in the arena */
const char *ox_model_unique_name(ox_model *m, const char *prefix);

/* graph building */
ox_graph   *ox_graph_new(ox_model *m, ox_graph *parent, ox_status *st);
int			ox_graph_add_value(ox_graph *g, const char *name, ox_status *st);	/* -1 on OOM */
ox_node    *ox_graph_add_node(ox_graph *g, ox_status *st);	/* zeroed; may move nodes[] */
int			ox_graph_find_value(const ox_graph *g, const char *name);	/* -1 if none */

/*
 * Recompute producers and consumer counts, drop dead nodes and sort nodes
 * topologically.  Fails with OX_INVALID_MODEL on a cycle, a value produced
 * twice, or a node input that nothing defines.
 */
ox_code		ox_graph_analyze(ox_graph *g, ox_status *st);

/* attribute access; the getters return def when the attribute is absent */
const ox_attr *ox_node_attr(const ox_node *n, const char *name);
int64_t		ox_attr_int(const ox_node *n, const char *name, int64_t def);
float		ox_attr_float(const ox_node *n, const char *name, float def);
const char *ox_attr_string(const ox_node *n, const char *name, const char *def);
/* list forms: return count (0 if absent) and set *out */
int			ox_attr_ints(const ox_node *n, const char *name, const int64_t **out);
int			ox_attr_floats(const ox_node *n, const char *name, const float **out);
int			ox_attr_strings(const ox_node *n, const char *name, const char *const **out);
const ox_tensor *ox_attr_tensor(const ox_node *n, const char *name);
const ox_graph *ox_attr_graph(const ox_node *n, const char *name);

/* the value behind input i of a node, or NULL when omitted */
static inline const ox_value_def *
ox_node_input_def(const ox_graph *g, const ox_node *n, int i)
{
	if (i < 0 || i >= n->n_inputs || n->inputs[i] < 0)
		return 0;
	return &g->values[n->inputs[i]];
}

/*
 * Every value a node reads, counted as its plain inputs followed by its
 * subgraphs' implicit inputs: for (i = 0; i < ox_node_n_reads(n); i++)
 * visits ox_node_read(n, i), -1 where an optional input is omitted.
 */
static inline int
ox_node_n_reads(const ox_node *n)
{
	return n->n_inputs + n->n_implicit;
}

static inline int
ox_node_read(const ox_node *n, int i)
{
	return i < n->n_inputs ? n->inputs[i] : n->implicit_inputs[i - n->n_inputs];
}

/*
 * Whether the node's outputs may differ between two runs on the same
 * inputs: the random generators, and Dropout (random in training mode).
 * Constant folding and the runtime's shape memo (runtime/memo.c) leave
 * such nodes alone.
 */
bool		ox_node_is_random(const ox_node *n);

const char *ox_attr_type_name(ox_attr_type t);
/* the exact type of a constant tensor (dims allocated in the model's arena) */
void		ox_type_from_tensor(ox_model *m, ox_type *out, const ox_tensor *t);
/* human-readable type, e.g. "tensor(float)[N, 4]" or "seq(map(int64, float))" */
const char *ox_type_str(const ox_type *t, char *buf, size_t len);


/*
 * The domain of the engine-private channel-blocked CNN operators
 * (kernels/cpu/conv_nchwc.c, made by passes/layout_nchwc.c).
 */
#define OX_NCHWC_DOMAIN "onnx_pg.nchwc"
/*
 * The domain of the engine-private fused operators that only sessions
 * which run their graph get (ScaledDotProductAttention and GatherReduce,
 * made by passes/fuse_attention.c and passes/fuse_gather_reduce.c).  Every
 * engine-private domain starts with OX_PRIVATE_DOMAIN_PREFIX: no other
 * runtime runs them, so a graph that holds one is not saved.
 */
#define OX_PRIVATE_FUSED_DOMAIN "onnx_pg.fused"
#define OX_PRIVATE_DOMAIN_PREFIX "onnx_pg."

#endif							/* OX_IR_H */
