/*
 * registry.c
 *	  The one kernel table: family tables concatenated, looked up by
 *	  (domain, op type, opset).
 */
#include "kernels/kernel.h"
#ifdef OX_WITH_CUDA
#include "kernels/cuda/cuda_provider.h"
#endif

#include <string.h>

/*
 * Empty weak tables stand in for families whose kernels are not linked, so
 * that a family can be developed (or left out) without breaking the link.
 */
#define OX_WEAK_FAMILY(fam) \
	__attribute__((weak)) const ox_kernel_def ox_kernels_##fam[1] = {{"", "", 1 << 30, 0, 0, 0}}; \
	__attribute__((weak)) const int ox_kernels_##fam##_count = 0

OX_WEAK_FAMILY(elementwise);
OX_WEAK_FAMILY(activation);
OX_WEAK_FAMILY(reduce);
OX_WEAK_FAMILY(gemm);
OX_WEAK_FAMILY(conv);
OX_WEAK_FAMILY(pool);
OX_WEAK_FAMILY(pool_nhwc);
OX_WEAK_FAMILY(nchwc);
OX_WEAK_FAMILY(norm);
OX_WEAK_FAMILY(tensor);
OX_WEAK_FAMILY(ml_tree);
OX_WEAK_FAMILY(ml_misc);
OX_WEAK_FAMILY(control);
OX_WEAK_FAMILY(sequence);
OX_WEAK_FAMILY(rnn);
OX_WEAK_FAMILY(quant);
OX_WEAK_FAMILY(vision);
OX_WEAK_FAMILY(transformer);
OX_WEAK_FAMILY(loss);
OX_WEAK_FAMILY(signal);
OX_WEAK_FAMILY(text);
OX_WEAK_FAMILY(random);
OX_WEAK_FAMILY(preview);
#ifdef OX_WITH_CUDA
OX_WEAK_FAMILY(cuda);
#endif

typedef struct kernel_family
{
	const ox_kernel_def *table;
	const int  *count;
} kernel_family;

static const kernel_family families[] = {
	{ox_kernels_elementwise, &ox_kernels_elementwise_count},
	{ox_kernels_activation, &ox_kernels_activation_count},
	{ox_kernels_reduce, &ox_kernels_reduce_count},
	{ox_kernels_gemm, &ox_kernels_gemm_count},
	{ox_kernels_conv, &ox_kernels_conv_count},
	{ox_kernels_pool, &ox_kernels_pool_count},
	{ox_kernels_pool_nhwc, &ox_kernels_pool_nhwc_count},
	{ox_kernels_nchwc, &ox_kernels_nchwc_count},
	{ox_kernels_norm, &ox_kernels_norm_count},
	{ox_kernels_tensor, &ox_kernels_tensor_count},
	{ox_kernels_ml_tree, &ox_kernels_ml_tree_count},
	{ox_kernels_ml_misc, &ox_kernels_ml_misc_count},
	{ox_kernels_control, &ox_kernels_control_count},
	{ox_kernels_sequence, &ox_kernels_sequence_count},
	{ox_kernels_rnn, &ox_kernels_rnn_count},
	{ox_kernels_quant, &ox_kernels_quant_count},
	{ox_kernels_vision, &ox_kernels_vision_count},
	{ox_kernels_transformer, &ox_kernels_transformer_count},
	{ox_kernels_loss, &ox_kernels_loss_count},
	{ox_kernels_signal, &ox_kernels_signal_count},
	{ox_kernels_text, &ox_kernels_text_count},
	{ox_kernels_random, &ox_kernels_random_count},
	{ox_kernels_preview, &ox_kernels_preview_count},
#ifdef OX_WITH_CUDA
	{ox_kernels_cuda, &ox_kernels_cuda_count},	/* com.onnx_pg CudaPartition */
#endif
};

static bool
domain_equal(const char *a, const char *b)
{
	if (!a || strcmp(a, "ai.onnx") == 0)
		a = "";
	if (!b || strcmp(b, "ai.onnx") == 0)
		b = "";
	return strcmp(a, b) == 0;
}

const ox_kernel_def *
ox_kernel_find(const char *domain, const char *op_type, int opset)
{
	const ox_kernel_def *best = NULL;

	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++)
	{
		for (int i = 0; i < *families[f].count; i++)
		{
			const ox_kernel_def *k = &families[f].table[i];

			if (strcmp(k->op_type, op_type) != 0 || !domain_equal(k->domain, domain))
				continue;
			if (k->since_version > opset)
				continue;
			if (!best || k->since_version > best->since_version)
				best = k;
		}
	}
	return best;
}

ox_code
ox_kernel_prepare(const ox_kernel_def *k, ox_prepare_ctx *pc)
{
	ox_code		rc = k->prepare ? k->prepare(pc) : OX_OK;

	if (rc != OX_OK && pc->state)
	{
		if (k->free_state)
			k->free_state(pc->state);
		pc->state = NULL;
	}
	return rc;
}

int
ox_kernel_count(void)
{
	int			n = 0;

	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++)
		n += *families[f].count;
	return n;
}

const ox_kernel_def *
ox_kernel_at(int i)
{
	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++)
	{
		if (i < *families[f].count)
			return &families[f].table[i];
		i -= *families[f].count;
	}
	return NULL;
}
