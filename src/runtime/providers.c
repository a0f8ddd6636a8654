/*
 * providers.c
 *	  Execution providers of a session: the CUDA placement decision, the
 *	  fallback reason, and per-node placement for inspection.
 *
 * Nothing here calls CUDA unless the session's providers include "cuda":
 * the probe (which initializes the CUDA runtime and the driver) runs in
 * ox_session_create of such a session, never at library load.
 */
#include "runtime/exec.h"
#include "runtime/placement.h"
#ifdef OX_WITH_CUDA
#include "kernels/cuda/cuda_provider.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool
ox_cuda_device_usable(int device_id, char *why, size_t why_len)
{
#ifdef OX_WITH_CUDA
	return ox_cuda_probe(device_id, why, why_len);
#else
	(void) device_id;
	if (why && why_len)
		snprintf(why, why_len, "onnx_pg was built without CUDA");
	return false;
#endif
}

bool
ox_cuda_libraries_load(char *why, size_t why_len)
{
#ifdef OX_WITH_CUDA
	return ox_cuda_libs_load(why, why_len);
#else
	if (why && why_len)
		snprintf(why, why_len, "onnx_pg was built without CUDA");
	return false;
#endif
}

/* the distinct "domain.op (opset N)" of main-graph nodes left on the CPU */
static void
cpu_node_list(const ox_graph *g, char *list, size_t len, int *count)
{
	size_t		off = 0;

	list[0] = '\0';
	*count = 0;
	for (int k = 0; k < g->n_nodes; k++)
	{
		const ox_node *n = &g->nodes[k];
		char		item[192];

		if (ox_node_is_partition(n))
			continue;
		snprintf(item, sizeof(item), "%s%s%s (opset %d)", n->domain[0] ? n->domain : "",
				 n->domain[0] ? "." : "", n->op_type, n->opset);
		if (strstr(list, item))
			continue;
		if (off < len)
			off += snprintf(list + off, len - off, "%s%s", *count ? ", " : "", item);
		(*count)++;
	}
}

#ifdef OX_WITH_CUDA
static bool
cuda_supports(const ox_graph *g, const ox_node *n, void *arg)
{
	(void) arg;
	return ox_cuda_supports(g, n);
}

static bool
cuda_host_input(const ox_node *n, int i, void *arg)
{
	(void) arg;
	return ox_cuda_host_input(n, i);
}
#endif

static ox_code
fall_back(ox_session *s, const char *why, ox_status *st)
{
	if (s->opts.provider_no_fallback)
		return ox_fail(st, OX_UNSUPPORTED, "the CUDA provider cannot run this session: %s", why);
	s->fallback_reason = strdup(why);
	if (!s->fallback_reason)
		return ox_fail(st, OX_OUT_OF_MEMORY, "could not allocate a session");
	s->effective_providers = "cpu";
	return OX_OK;
}

ox_code
ox_session_place(ox_session *s, ox_status *st)
{
	bool		want_cuda = false;

	s->effective_providers = "cpu";
	OX_TRY(ox_parse_providers(s->providers, &want_cuda, st));
	if (!want_cuda)
		return OX_OK;
#ifndef OX_WITH_CUDA
	return fall_back(s, "onnx_pg was built without CUDA", st);
#else
	{
		char		why[512];
		ox_placement_rules rules;
		char		list[OX_STATUS_MSG_LEN - 128];
		int			left = 0;

		if (s->opts.cuda_device_id < 0)
		{
			snprintf(why, sizeof(why), "CUDA device %d does not exist", s->opts.cuda_device_id);
			return fall_back(s, why, st);
		}
		if (!ox_cuda_probe(s->opts.cuda_device_id, why, sizeof(why)))
			return fall_back(s, why, st);
		s->device = ox_cuda_ctx_create(s->opts.cuda_device_id, s->opts.cuda_memory_limit,
									   s->opts.cuda_fp16, st);
		if (!s->device)
		{
			snprintf(why, sizeof(why), "could not set up CUDA device %d: %s", s->opts.cuda_device_id,
					 st->msg);
			ox_status_clear(st);
			return fall_back(s, why, st);
		}
		rules.op_type = OX_CUDA_PARTITION_OP;
		rules.supports = cuda_supports;
		rules.host_input = cuda_host_input;
		rules.arg = NULL;
		OX_TRY(ox_place_partitions(s->model, &rules, &s->n_partitions, st));
		cpu_node_list(s->model->graph, list, sizeof(list), &left);
		if (left > 0 && s->opts.provider_no_fallback)
			return ox_fail(st, OX_UNSUPPORTED, "the CUDA provider does not support %s (and provider_no_fallback is set): %s",
						   left > 1 ? "these operators" : "this operator", list);
		if (s->n_partitions == 0)
		{
			ox_cuda_ctx_free((ox_cuda_ctx *) s->device);
			s->device = NULL;
			return fall_back(s, "no node of this model can run on the CUDA provider", st);
		}
		s->effective_providers = "cuda,cpu";
		return OX_OK;
	}
#endif
}

ox_code
ox_cuda_partition_model(ox_model *m, int *n_partitions, ox_status *st)
{
	*n_partitions = 0;
#ifdef OX_WITH_CUDA
	{
		ox_placement_rules rules = {OX_CUDA_PARTITION_OP, cuda_supports, cuda_host_input, NULL};

		return ox_place_partitions(m, &rules, n_partitions, st);
	}
#else
	(void) m;
	return ox_fail(st, OX_UNSUPPORTED, "onnx_pg was built without CUDA");
#endif
}

void
ox_session_unplace(ox_session *s)
{
#ifdef OX_WITH_CUDA
	if (s->device)
		ox_cuda_ctx_free((ox_cuda_ctx *) s->device);
#endif
	s->device = NULL;
	free(s->fallback_reason);
	s->fallback_reason = NULL;
}

const char *
ox_session_fallback_reason(const ox_session *s)
{
	return s->fallback_reason;
}

const char *
ox_session_effective_providers(const ox_session *s)
{
	return s->effective_providers ? s->effective_providers : "cpu";
}

int
ox_session_node_count(const ox_session *s)
{
	const ox_graph *g = s->model->graph;
	int			n = 0;

	for (int k = 0; k < g->n_nodes; k++)
	{
		if (ox_node_is_partition(&g->nodes[k]))
			n += ox_attr_graph(&g->nodes[k], "body")->n_nodes;
		else
			n++;
	}
	return n;
}

ox_code
ox_session_node_info(const ox_session *s, int i, const char **name, const char **op_type,
					 const char **provider, ox_status *st)
{
	const ox_graph *g = s->model->graph;
	int			idx = i;

	if (i < 0)
		return ox_fail(st, OX_NOT_FOUND, "no node %d", i);
	for (int k = 0; k < g->n_nodes; k++)
	{
		const ox_node *n = &g->nodes[k];
		const ox_graph *body = ox_node_is_partition(n) ? ox_attr_graph(n, "body") : NULL;
		int			span = body ? body->n_nodes : 1;

		if (idx >= span)
		{
			idx -= span;
			continue;
		}
		if (body)
			n = &body->nodes[idx];
		if (name)
			*name = n->name;
		if (op_type)
			*op_type = n->op_type;
		if (provider)
			*provider = body ? "cuda" : "cpu";
		return OX_OK;
	}
	return ox_fail(st, OX_NOT_FOUND, "no node %d (the session has %d)", i, ox_session_node_count(s));
}
