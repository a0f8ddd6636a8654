/*
 * placement.h
 *	  The provider placement pass (private to the runtime and its tests).
 *
 * After the optimizer, a session that asked for a device provider assigns
 * the main graph's nodes: a node goes to the device when the provider's
 * supports() accepts it, and maximal groups of such nodes become one
 * partition node (domain com.onnx_pg) whose "body" graph attribute holds
 * them.  The contracted graph stays acyclic: a partition never takes a node
 * that needs a CPU node which itself depends on the partition; such a node
 * opens the next partition.  Partition inputs are the values coming from
 * outside (graph inputs, CPU node outputs, overridable initializers); its
 * outputs are the values read outside.  Constant initializers the nodes use
 * go into the body (the provider uploads them once).  A node input the
 * device kernel reads on the host (host_input(): Reshape's shape, Slice's
 * starts...) must not be computed on the device: such nodes stay on the CPU.
 */
#ifndef OX_PLACEMENT_H
#define OX_PLACEMENT_H

#include "model/ir.h"

#define OX_PARTITION_DOMAIN "com.onnx_pg"

typedef struct ox_placement_rules
{
	const char *op_type;		/* of partition nodes, e.g. "CudaPartition" */
	bool		(*supports) (const ox_graph *g, const ox_node *n, void *arg);
	bool		(*host_input) (const ox_node *n, int i, void *arg);	/* may be NULL */
	void	   *arg;
} ox_placement_rules;

/*
 * Partition m's main graph.  On success *n_partitions is the number of
 * partition nodes made, and their body graphs are appended to m->graphs
 * (the runtime builds no CPU plan for them).
 */
ox_code		ox_place_partitions(ox_model *m, const ox_placement_rules *rules, int *n_partitions,
								ox_status *st);

/*
 * Test hook: optimize m as a session would and partition it with the CUDA
 * provider's rules, without a device (OX_UNSUPPORTED when built without
 * CUDA).  Lets placement be checked on machines with no GPU.
 */
ox_code		ox_cuda_place_dry(ox_model *m, int opt_level, int *n_partitions, ox_status *st);
/* the CUDA provider's partitioning of an (optimized) model, without a device */
ox_code		ox_cuda_partition_model(ox_model *m, int *n_partitions, ox_status *st);

/* whether n is a partition node made by ox_place_partitions */
bool		ox_node_is_partition(const ox_node *n);
/*
 * Where a main-graph node runs: "cpu", or for a partition node its device
 * provider ("cuda": the only provider that makes partitions), with the
 * number of nodes in its body and the names of the first and last of them
 * (n_inner = 0 and NULL names for other nodes).
 */
const char *ox_node_provider(const ox_node *n, int *n_inner, const char **first,
							 const char **last);
/* whether g is the body of a partition node */
bool		ox_graph_is_partition_body(const ox_graph *g);

#endif							/* OX_PLACEMENT_H */
