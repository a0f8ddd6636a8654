/*
 * quant.c
 *	  QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear (ai.onnx),
 *	  and the quant family table.
 *
 *	  QuantizeLinear	y = saturate(round(x / scale) + zero_point)
 *	  DequantizeLinear	y = (x - zero_point) * scale
 *
 * Scale and zero point are per tensor (a scalar or one-element vector), per
 * axis (a vector along "axis", opset 13) or blocked (opset 21: the shape of
 * x with the axis dimension divided by block_size, rounded up).  Rounding is
 * half to even (rint in the default rounding mode), as ONNX specifies.
 *
 * Quantized element types are uint8, int8, uint16 and int16, and through
 * quant_lowbit.c int4, uint4, int2, uint2 (one value a byte, clamped to
 * their range), float8 and float4 (a float conversion of x / scale, zero
 * point zero).
 *
 * The work is a walk over contiguous segments of x that share one scale
 * (or step through the scales one by one), split across the intra-op pool.
 */
#include "kernels/kernel.h"
#include "kernels/cpu/qgemm.h"
#include "kernels/cpu/quant_lowbit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* attributes, parsed once per session */
typedef struct quant_state
{
	int64_t		axis;
	int64_t		block_size;		/* 0: not blocked */
	ox_dtype	output_dtype;	/* OX_UNDEFINED when not given */
	ox_dtype	precision;		/* QuantizeLinear-23; OX_UNDEFINED: float32 */
	bool		saturate;		/* float8 outputs */
} quant_state;

/* how scale entries map onto x */
typedef struct quant_layout
{
	bool		per_tensor;
	int64_t		outer;			/* product of x dims before axis */
	int64_t		axis_len;
	int64_t		inner;			/* product of x dims after axis */
	int64_t		block;			/* block_size, 0 when per axis */
	int64_t		n_blocks;		/* scale dims[axis] when blocked */
	int64_t		n_params;		/* scale element count */
} quant_layout;

typedef struct quant_job quant_job;

/* process x[start, start + len) with scale index p0 + i * pstep */
typedef void (*quant_seg_fn) (const quant_job *j, int64_t start, int64_t len,
							  int64_t p0, int64_t pstep);

struct quant_job
{
	const quant_layout *l;
	quant_seg_fn seg;
	const void *x;
	void	   *y;
	const float *scale;			/* n_params, as float */
	const int32_t *zp;			/* n_params, zeros when absent */
	ox_dtype	precision;		/* quotient rounding, OX_UNDEFINED: none */
	ox_dtype	qtype;			/* the quantized type (float8/float4 kernels) */
	bool		saturate;		/* float8 outputs */
};

/* ---- element types ------------------------------------------------------ */

static const char *
quant_type_name(ox_dtype dt, char *buf, size_t len)
{
	if ((int) dt >= 0 && dt < OX_DTYPE_COUNT)
		return ox_dtype_name(dt);
	snprintf(buf, len, "element type %d", (int) dt);
	return buf;
}

static bool
quant_is_qtype(ox_dtype dt)
{
	return dt == OX_UINT8 || dt == OX_INT8 || dt == OX_UINT16 || dt == OX_INT16 ||
		ox_quant_lowbit_is_qtype(dt);
}

static bool
quant_is_ftype(ox_dtype dt)
{
	return dt == OX_FLOAT || dt == OX_FLOAT16 || dt == OX_BFLOAT16;
}

/*
 * A wrong element type: types the engine does not know (numbered past
 * its dtype enum) are unsupported, anything else is an invalid argument.
 */
static ox_code
quant_bad_type(ox_status *st, const char *op, const char *what, ox_dtype dt, const char *expected)
{
	char		buf[32];

	if ((int) dt >= OX_DTYPE_COUNT)
		return ox_fail(st, OX_UNSUPPORTED,
					   "%s: %s has %s, which is not supported",
					   op, what, quant_type_name(dt, buf, sizeof(buf)));
	return ox_fail(st, OX_INVALID_ARGUMENT, "%s: %s has type %s but expected %s",
				   op, what, quant_type_name(dt, buf, sizeof(buf)), expected);
}

/* round a float32 quotient to a narrower precision, as the precision attribute asks */
static inline float
quant_round_prec(float v, ox_dtype prec)
{
	if (prec == OX_FLOAT16)
		return ox_half_to_float(ox_float_to_half(v));
	if (prec == OX_BFLOAT16)
		return ox_bf16_to_float(ox_float_to_bf16(v));
	return v;
}

/* ---- segment kernels ---------------------------------------------------- */

/*
 * q = rint(x / s) + zp, saturated; NaN goes to the low end (what the ONNX
 * reference produces on x86).  int32 inputs divide in double so that large
 * values keep their precision.
 */
#define DEFINE_QUANTIZE(NAME, IN_T, CALC_T, RINT, OUT_T, LO, HI) \
static void \
NAME(const quant_job *j, int64_t start, int64_t len, int64_t p0, int64_t ps) \
{ \
	const IN_T *x = (const IN_T *) j->x + start; \
	OUT_T	   *y = (OUT_T *) j->y + start; \
	const float *sc = j->scale + p0; \
	const int32_t *zp = j->zp + p0; \
	for (int64_t i = 0; i < len; i++) \
	{ \
		CALC_T		q = (CALC_T) x[i] / (CALC_T) sc[i * ps]; \
		if (j->precision != OX_UNDEFINED) \
			q = quant_round_prec((float) q, j->precision); \
		q = RINT(q) + (CALC_T) zp[i * ps]; \
		y[i] = (OUT_T) (!(q >= LO) ? LO : (q > HI ? HI : q)); \
	} \
}

DEFINE_QUANTIZE(quantize_f32_u8, float, float, rintf, uint8_t, 0, 255)
DEFINE_QUANTIZE(quantize_f32_i8, float, float, rintf, int8_t, -128, 127)
DEFINE_QUANTIZE(quantize_f32_u16, float, float, rintf, uint16_t, 0, 65535)
DEFINE_QUANTIZE(quantize_f32_i16, float, float, rintf, int16_t, -32768, 32767)
DEFINE_QUANTIZE(quantize_i32_u8, int32_t, double, rint, uint8_t, 0, 255)
DEFINE_QUANTIZE(quantize_i32_i8, int32_t, double, rint, int8_t, -128, 127)
DEFINE_QUANTIZE(quantize_i32_u16, int32_t, double, rint, uint16_t, 0, 65535)
DEFINE_QUANTIZE(quantize_i32_i16, int32_t, double, rint, int16_t, -32768, 32767)
DEFINE_QUANTIZE(quantize_f32_u4, float, float, rintf, uint8_t, 0, 15)
DEFINE_QUANTIZE(quantize_f32_i4, float, float, rintf, int8_t, -8, 7)
DEFINE_QUANTIZE(quantize_f32_u2, float, float, rintf, uint8_t, 0, 3)
DEFINE_QUANTIZE(quantize_f32_i2, float, float, rintf, int8_t, -2, 1)
DEFINE_QUANTIZE(quantize_i32_u4, int32_t, double, rint, uint8_t, 0, 15)
DEFINE_QUANTIZE(quantize_i32_i4, int32_t, double, rint, int8_t, -8, 7)
DEFINE_QUANTIZE(quantize_i32_u2, int32_t, double, rint, uint8_t, 0, 3)
DEFINE_QUANTIZE(quantize_i32_i2, int32_t, double, rint, int8_t, -2, 1)

/* float8 / float4: a float conversion of x / scale */
static void
quantize_f32_narrow_float(const quant_job *j, int64_t start, int64_t len, int64_t p0, int64_t ps)
{
	ox_quant_lowbit_quantize((uint8_t *) j->y + start, j->qtype, (const float *) j->x + start,
							 OX_FLOAT, j->scale + p0, ps, len, j->precision, j->saturate);
}

static void
quantize_i32_narrow_float(const quant_job *j, int64_t start, int64_t len, int64_t p0, int64_t ps)
{
	ox_quant_lowbit_quantize((uint8_t *) j->y + start, j->qtype, (const int32_t *) j->x + start,
							 OX_INT32, j->scale + p0, ps, len, j->precision, j->saturate);
}

static void
dequantize_narrow_float(const quant_job *j, int64_t start, int64_t len, int64_t p0, int64_t ps)
{
	ox_quant_lowbit_dequantize((float *) j->y + start, (const uint8_t *) j->x + start, j->qtype,
							   j->scale + p0, ps, len);
}

/* y = (x - zp) * s into float; the difference is exact in int64 */
#define DEFINE_DEQUANTIZE(NAME, IN_T) \
static void \
NAME(const quant_job *j, int64_t start, int64_t len, int64_t p0, int64_t ps) \
{ \
	const IN_T *x = (const IN_T *) j->x + start; \
	float	   *y = (float *) j->y + start; \
	const float *sc = j->scale + p0; \
	const int32_t *zp = j->zp + p0; \
	for (int64_t i = 0; i < len; i++) \
		y[i] = (float) ((int64_t) x[i] - zp[i * ps]) * sc[i * ps]; \
}

DEFINE_DEQUANTIZE(dequantize_u8, uint8_t)
DEFINE_DEQUANTIZE(dequantize_i8, int8_t)
DEFINE_DEQUANTIZE(dequantize_u16, uint16_t)
DEFINE_DEQUANTIZE(dequantize_i16, int16_t)
DEFINE_DEQUANTIZE(dequantize_i32, int32_t)

static quant_seg_fn
quantize_fn(bool int_input, ox_dtype out)
{
	switch (out)
	{
		case OX_UINT8:
			return int_input ? quantize_i32_u8 : quantize_f32_u8;
		case OX_INT8:
			return int_input ? quantize_i32_i8 : quantize_f32_i8;
		case OX_UINT16:
			return int_input ? quantize_i32_u16 : quantize_f32_u16;
		case OX_INT16:
			return int_input ? quantize_i32_i16 : quantize_f32_i16;
		case OX_UINT4:
			return int_input ? quantize_i32_u4 : quantize_f32_u4;
		case OX_INT4:
			return int_input ? quantize_i32_i4 : quantize_f32_i4;
		case OX_UINT2:
			return int_input ? quantize_i32_u2 : quantize_f32_u2;
		case OX_INT2:
			return int_input ? quantize_i32_i2 : quantize_f32_i2;
		default:
			if (ox_quant_lowbit_is_float(out))
				return int_input ? quantize_i32_narrow_float : quantize_f32_narrow_float;
			return NULL;
	}
}

static quant_seg_fn
dequantize_fn(ox_dtype in)
{
	switch (in)
	{
		case OX_UINT8:
		case OX_UINT4:
		case OX_UINT2:
			return dequantize_u8;
		case OX_INT8:
		case OX_INT4:
		case OX_INT2:
			return dequantize_i8;
		case OX_UINT16:
			return dequantize_u16;
		case OX_INT16:
			return dequantize_i16;
		case OX_INT32:
			return dequantize_i32;
		default:
			return ox_quant_lowbit_is_float(in) ? dequantize_narrow_float : NULL;
	}
}

/* ---- walking x in segments ------------------------------------------------ */

static void
quant_walk(void *arg, int64_t begin, int64_t end)
{
	const quant_job *j = arg;
	const quant_layout *l = j->l;
	int64_t		idx = begin;

	if (l->per_tensor)
	{
		if (end > begin)
			j->seg(j, begin, end - begin, 0, 0);
		return;
	}
	while (idx < end)
	{
		int64_t		row = idx / l->inner;	/* o * axis_len + k */
		int64_t		i = idx % l->inner;
		int64_t		o = row / l->axis_len;
		int64_t		k = row % l->axis_len;
		int64_t		len;
		int64_t		p0;
		int64_t		ps;

		if (l->inner == 1 && l->block == 0)
		{
			/* axis is the last dim: one segment steps through the scales */
			len = l->axis_len - k;
			p0 = k;
			ps = 1;
		}
		else if (l->inner == 1)
		{
			/* blocked along the last dim: one segment per block */
			len = l->block - k % l->block;
			if (len > l->axis_len - k)
				len = l->axis_len - k;
			p0 = o * l->n_blocks + k / l->block;
			ps = 0;
		}
		else if (l->block == 0)
		{
			len = l->inner - i;
			p0 = k;
			ps = 0;
		}
		else
		{
			len = l->inner - i;
			p0 = (o * l->n_blocks + k / l->block) * l->inner + i;
			ps = 1;
		}
		if (len > end - idx)
			len = end - idx;
		j->seg(j, idx, len, p0, ps);
		idx += len;
	}
}

static void
quant_execute(ox_kernel_ctx *ctx, quant_job *j, int64_t n)
{
	ox_parallel_for(ctx, n, 1 << 16, quant_walk, j);
}

/*
 * Work out how scale (and zero point, which must have the same shape) map
 * onto x: per tensor, per axis or blocked.
 */
static ox_code
quant_layout_of(ox_kernel_ctx *ctx, const char *op, const quant_state *s, const ox_tensor *x,
				const ox_tensor *scale, const ox_tensor *zp, quant_layout *l)
{
	char		a[128];
	char		b[128];
	int64_t		axis = s->axis;
	int64_t		n_params = ox_tensor_numel(scale);

	memset(l, 0, sizeof(*l));
	/* a scalar and a one-element vector are the same per-tensor parameter */
	if (zp && !ox_shape_equal(zp->rank, zp->dims, scale->rank, scale->dims) &&
		!(zp->rank <= 1 && scale->rank <= 1 && ox_tensor_numel(zp) == 1 && n_params == 1))
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "%s: zero point has shape %s but scale has shape %s", op,
					   ox_shape_str(zp->rank, zp->dims, a, sizeof(a)),
					   ox_shape_str(scale->rank, scale->dims, b, sizeof(b)));
	l->n_params = n_params;
	if (scale->rank == 0 || (scale->rank == 1 && n_params == 1))
	{
		l->per_tensor = true;
		return OX_OK;
	}
	if (axis < -x->rank || axis >= x->rank)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "%s: axis %lld is out of range for x of rank %d", op, (long long) axis, x->rank);
	if (axis < 0)
		axis += x->rank;
	l->outer = ox_shape_numel((int) axis, x->dims);
	l->axis_len = x->dims[axis];
	l->inner = ox_shape_numel(x->rank - (int) axis - 1, x->dims + axis + 1);
	if (s->block_size > 0)
	{
		bool		ok = scale->rank == x->rank;

		l->block = s->block_size;
		l->n_blocks = (l->axis_len + s->block_size - 1) / s->block_size;
		for (int i = 0; ok && i < x->rank; i++)
			ok = scale->dims[i] == (i == axis ? l->n_blocks : x->dims[i]);
		if (!ok)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "%s: scale has shape %s but blocked quantization of x %s along axis %lld with block_size %lld needs %lld blocks on that axis and x's other dims",
						   op, ox_shape_str(scale->rank, scale->dims, a, sizeof(a)),
						   ox_shape_str(x->rank, x->dims, b, sizeof(b)), (long long) axis,
						   (long long) s->block_size, (long long) l->n_blocks);
		return OX_OK;
	}
	if (scale->rank != 1 || scale->dims[0] != l->axis_len)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
					   "%s: scale has shape %s but expected a scalar or [%lld] (x dim %lld of %s)",
					   op, ox_shape_str(scale->rank, scale->dims, a, sizeof(a)),
					   (long long) l->axis_len, (long long) axis,
					   ox_shape_str(x->rank, x->dims, b, sizeof(b)));
	return OX_OK;
}

/* scale as float32 and zero point as int32 (zeros when absent), in one block */
static ox_code
quant_params(ox_kernel_ctx *ctx, const ox_tensor *scale, const ox_tensor *zp,
			 float **scale_out, int32_t **zp_out)
{
	int64_t		n = ox_tensor_numel(scale);
	void	   *block = ox_workspace_alloc((size_t) n * (sizeof(float) + sizeof(int32_t)) + 1, ctx->st, "QuantizeLinear");

	*scale_out = block;
	*zp_out = NULL;
	if (!block)
		return ox_fail(ctx->st, OX_OUT_OF_MEMORY, "out of memory for %lld scales", (long long) n);
	*zp_out = (int32_t *) (*scale_out + n);
	OX_TRY(ox_convert_elements(*scale_out, OX_FLOAT, scale->data, scale->dtype, n, ctx->st));
	if (zp)
		return ox_convert_elements(*zp_out, OX_INT32, zp->data, zp->dtype, n, ctx->st);
	memset(*zp_out, 0, sizeof(int32_t) * (size_t) n);
	return OX_OK;
}

/* ---- attributes ----------------------------------------------------------- */

static ox_code
quant_prepare_op(ox_prepare_ctx *pc, bool quantize)
{
	const char *op = quantize ? "QuantizeLinear" : "DequantizeLinear";
	const ox_node *node = pc->node;
	quant_state s;
	quant_state *copy;
	int64_t		out_dt = ox_attr_int(node, "output_dtype", 0);
	int64_t		prec = ox_attr_int(node, "precision", 0);
	int64_t		saturate = ox_attr_int(node, "saturate", 1);

	memset(&s, 0, sizeof(s));
	s.axis = ox_attr_int(node, "axis", 1);
	s.block_size = ox_attr_int(node, "block_size", 0);
	if (s.block_size < 0)
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "%s: block_size must be >= 0, got %lld",
					   op, (long long) s.block_size);
	/* saturate only changes float8 results */
	if (saturate != 0 && saturate != 1)
		return ox_fail(pc->st, OX_INVALID_ARGUMENT, "%s: saturate must be 0 or 1, got %lld",
					   op, (long long) saturate);
	s.saturate = saturate != 0;
	if (out_dt != 0)
	{
		ox_dtype	dt = (ox_dtype) out_dt;

		if (out_dt < 0 || out_dt > 64 ||
			(quantize ? !quant_is_qtype(dt) : !quant_is_ftype(dt)))
			return quant_bad_type(pc->st, op, "output_dtype", dt,
								  quantize ? "an 8/16/4/2-bit integer, float8 or float4 type" :
								  "float, float16 or bfloat16");
		s.output_dtype = dt;
	}
	if (prec != 0)
	{
		if (prec != OX_FLOAT && prec != OX_FLOAT16 && prec != OX_BFLOAT16)
			return ox_fail(pc->st, OX_UNSUPPORTED,
						   "%s: precision %lld is not supported (expected float, float16 or bfloat16)",
						   op, (long long) prec);
		s.precision = prec == OX_FLOAT ? OX_UNDEFINED : (ox_dtype) prec;
	}

	copy = malloc(sizeof(s));
	if (!copy)
		return ox_fail(pc->st, OX_OUT_OF_MEMORY, "%s: out of memory for kernel state", op);
	*copy = s;
	pc->state = copy;
	return OX_OK;
}

static ox_code
quantize_prepare(ox_prepare_ctx *pc)
{
	return quant_prepare_op(pc, true);
}

static ox_code
dequantize_prepare(ox_prepare_ctx *pc)
{
	return quant_prepare_op(pc, false);
}

static void
quant_free(void *state)
{
	free(state);
}

/* ---- QuantizeLinear ------------------------------------------------------- */

static ox_code
quantize_run(ox_kernel_ctx *ctx)
{
	const char *op = "QuantizeLinear";
	const quant_state *s = ctx->state;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *scale = ox_in_tensor(ctx, 1);
	const ox_tensor *zp = ox_in_tensor(ctx, 2);
	ox_dtype	out_dt;
	quant_layout l;
	quant_job	j;
	ox_tensor  *y;
	float	   *staged = NULL;
	float	   *sc = NULL;
	int32_t    *zps = NULL;
	int64_t		n;
	ox_code		rc = OX_OK;

	if (!x || !scale)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: inputs x and y_scale are required", op);
	if (!quant_is_ftype(x->dtype) && x->dtype != OX_INT32)
		return quant_bad_type(ctx->st, op, "x", x->dtype, "float, float16, bfloat16 or int32");
	if (!quant_is_ftype(scale->dtype) && scale->dtype != OX_INT32)
		return quant_bad_type(ctx->st, op, "y_scale", scale->dtype,
							  "float, float16, bfloat16 or int32");

	/* the zero point's type is the output type; output_dtype must agree */
	if (zp)
	{
		if (!quant_is_qtype(zp->dtype))
			return quant_bad_type(ctx->st, op, "y_zero_point", zp->dtype,
								  "an 8/16/4/2-bit integer, float8 or float4 type");
		OX_TRY(ox_quant_lowbit_check_zero_point(ctx->st, op, zp));
		if (s->output_dtype != OX_UNDEFINED && s->output_dtype != zp->dtype)
			return ox_fail(ctx->st, OX_INVALID_ARGUMENT,
						   "%s: output_dtype is %s but y_zero_point has type %s", op,
						   ox_dtype_name(s->output_dtype), ox_dtype_name(zp->dtype));
		out_dt = zp->dtype;
	}
	else
		out_dt = s->output_dtype != OX_UNDEFINED ? s->output_dtype : OX_UINT8;

	OX_TRY(quant_layout_of(ctx, op, s, x, scale, zp, &l));
	n = ox_tensor_numel(x);
	if (!(y = ox_out_tensor(ctx, 0, out_dt, x->rank, x->dims)))
		return ctx->st->code;
	if (n == 0)
		return OX_OK;

	rc = quant_params(ctx, scale, zp, &sc, &zps);
	memset(&j, 0, sizeof(j));
	j.x = x->data;
	if (rc == OX_OK && (x->dtype == OX_FLOAT16 || x->dtype == OX_BFLOAT16 ||
						s->precision != OX_UNDEFINED))
	{
		/* narrow inputs run through float32; the precision attribute rounds x and scale too */
		staged = ox_workspace_alloc(sizeof(float) * (size_t) n, ctx->st, "QuantizeLinear");
		if (!staged)
			rc = ox_fail(ctx->st, OX_OUT_OF_MEMORY, "%s: out of memory staging %lld elements",
						 op, (long long) n);
		else
			rc = ox_convert_elements(staged, OX_FLOAT, x->data, x->dtype, n, ctx->st);
		if (rc == OX_OK && s->precision != OX_UNDEFINED)
		{
			for (int64_t i = 0; i < n; i++)
				staged[i] = quant_round_prec(staged[i], s->precision);
			for (int64_t i = 0; i < l.n_params; i++)
				sc[i] = quant_round_prec(sc[i], s->precision);
		}
		j.x = staged;
	}
	/* x / 0 has no quantization: refuse the scale rather than saturate everything */
	if (rc == OX_OK)
		rc = ox_quant_check_scales(ctx->st, op, "y_scale", sc, l.n_params, true);
	if (rc == OX_OK && l.per_tensor && x->dtype == OX_FLOAT && !staged &&
		s->precision == OX_UNDEFINED && (out_dt == OX_UINT8 || out_dt == OX_INT8))
	{
		/* the common case of quantized models, vectorized (qgemm.c) */
		ox_qgemm_quantize(x->data, n, sc[0], zps[0], out_dt, y->data);
		free(sc);
		return OX_OK;
	}
	if (rc == OX_OK)
	{
		j.l = &l;
		j.seg = quantize_fn(x->dtype == OX_INT32 && !staged, out_dt);
		j.y = y->data;
		j.scale = sc;
		j.zp = zps;
		j.precision = s->precision;
		j.qtype = out_dt;
		j.saturate = s->saturate;
		quant_execute(ctx, &j, n);
	}
	free(staged);
	free(sc);
	return rc;
}

/* ---- DequantizeLinear ----------------------------------------------------- */

static ox_code
dequantize_run(ox_kernel_ctx *ctx)
{
	const char *op = "DequantizeLinear";
	const quant_state *s = ctx->state;
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	const ox_tensor *scale = ox_in_tensor(ctx, 1);
	const ox_tensor *zp = ox_in_tensor(ctx, 2);
	ox_dtype	out_dt;
	quant_layout l;
	quant_job	j;
	ox_tensor  *y;
	float	   *staged = NULL;
	float	   *sc = NULL;
	int32_t    *zps = NULL;
	int64_t		n;
	ox_code		rc;

	if (!x || !scale)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: inputs x and x_scale are required", op);
	if (!quant_is_qtype(x->dtype) && x->dtype != OX_INT32)
		return quant_bad_type(ctx->st, op, "x", x->dtype,
							  "an 8/16/32/4/2-bit integer, float8 or float4 type");
	if (!quant_is_ftype(scale->dtype))
		return quant_bad_type(ctx->st, op, "x_scale", scale->dtype, "float, float16 or bfloat16");
	if (zp && zp->dtype != x->dtype)
	{
		char		buf[32];

		return ox_fail(ctx->st, (int) zp->dtype >= OX_DTYPE_COUNT ? OX_UNSUPPORTED : OX_INVALID_ARGUMENT,
					   "%s: x_zero_point has type %s but x has type %s", op,
					   quant_type_name(zp->dtype, buf, sizeof(buf)), ox_dtype_name(x->dtype));
	}
	OX_TRY(ox_quant_lowbit_check_zero_point(ctx->st, op, zp));
	out_dt = s->output_dtype != OX_UNDEFINED ? s->output_dtype : scale->dtype;

	OX_TRY(quant_layout_of(ctx, op, s, x, scale, zp, &l));
	n = ox_tensor_numel(x);
	if (!(y = ox_out_tensor(ctx, 0, out_dt, x->rank, x->dims)))
		return ctx->st->code;
	if (n == 0)
		return OX_OK;

	rc = quant_params(ctx, scale, zp, &sc, &zps);
	if (rc == OX_OK && out_dt != OX_FLOAT)
	{
		staged = ox_workspace_alloc(sizeof(float) * (size_t) n, ctx->st, "DequantizeLinear");
		if (!staged)
			rc = ox_fail(ctx->st, OX_OUT_OF_MEMORY, "%s: out of memory staging %lld elements",
						 op, (long long) n);
	}
	if (rc == OX_OK)
	{
		memset(&j, 0, sizeof(j));
		j.l = &l;
		j.seg = dequantize_fn(x->dtype);
		j.qtype = x->dtype;
		j.x = x->data;
		j.y = staged ? (void *) staged : y->data;
		j.scale = sc;
		j.zp = zps;
		quant_execute(ctx, &j, n);
		if (staged)
			rc = ox_convert_elements(y->data, out_dt, staged, OX_FLOAT, n, ctx->st);
	}
	free(staged);
	free(sc);
	return rc;
}

/* ---- DynamicQuantizeLinear ------------------------------------------------ */

/*
 * uint8 with the range widened to include 0:
 *	 scale = (max(0, max x) - min(0, min x)) / 255  (1 / 255 when that is 0)
 *	 zero_point = saturate(round(-min / scale))
 * NaNs take no part in the range.
 */
static ox_code
dynamic_quantize_run(ox_kernel_ctx *ctx)
{
	const char *op = "DynamicQuantizeLinear";
	const ox_tensor *x = ox_in_tensor(ctx, 0);
	ox_tensor  *y;
	ox_tensor  *ys;
	ox_tensor  *yzp;
	const float *xd;
	float		mn = 0;
	float		mx = 0;
	float		scale;
	float		zpf;
	int32_t		zp;
	int64_t		n;
	quant_layout l;
	quant_job	j;

	if (!x)
		return ox_fail(ctx->st, OX_INVALID_ARGUMENT, "%s: input x is required", op);
	if (x->dtype != OX_FLOAT)
		return quant_bad_type(ctx->st, op, "x", x->dtype, "float");
	n = ox_tensor_numel(x);
	xd = OX_DATA(x, float);
	for (int64_t i = 0; i < n; i++)
	{
		if (xd[i] < mn)
			mn = xd[i];
		if (xd[i] > mx)
			mx = xd[i];
	}
	scale = (mx == mn ? 1.0f : mx - mn) / 255.0f;
	zpf = 0.0f - mn / scale;
	zpf = zpf < 0 ? 0 : (zpf > 255 ? 255 : zpf);
	zp = (int32_t) rintf(zpf);

	if (!(y = ox_out_tensor(ctx, 0, OX_UINT8, x->rank, x->dims)) ||
		!(ys = ox_out_tensor(ctx, 1, OX_FLOAT, 0, NULL)) ||
		!(yzp = ox_out_tensor(ctx, 2, OX_UINT8, 0, NULL)))
		return ctx->st->code;
	*OX_DATA(ys, float) = scale;
	*OX_DATA(yzp, uint8_t) = (uint8_t) zp;

	memset(&l, 0, sizeof(l));
	l.per_tensor = true;
	l.n_params = 1;
	memset(&j, 0, sizeof(j));
	j.l = &l;
	j.seg = quantize_f32_u8;
	j.x = xd;
	j.y = y->data;
	j.scale = &scale;
	j.zp = &zp;
	quant_execute(ctx, &j, n);
	return OX_OK;
}

const ox_kernel_def ox_kernels_quant[] = {
	{"", "QuantizeLinear", 10, quantize_prepare, quantize_run, quant_free},
	{"", "DequantizeLinear", 10, dequantize_prepare, dequantize_run, quant_free},
	{"", "DynamicQuantizeLinear", 11, NULL, dynamic_quantize_run, NULL},
	/* fused by the QDQ pass (qgemm_ops.c) */
	{"com.microsoft", "QGemm", 1, ox_qop_qgemm_prepare, ox_qop_qgemm_run, ox_qop_free},
	{"com.microsoft", "DynamicQuantizeMatMul", 1, ox_qop_dqmatmul_prepare, ox_qop_dqmatmul_run, ox_qop_free},
	{"com.onnx_pg", "DynamicQuantizeMatMulRows", 1, ox_qop_dqmatmul_rows_prepare, ox_qop_dqmatmul_rows_run,
	ox_qop_free},
	{"com.microsoft", "QLinearAdd", 1, NULL, ox_qop_qlinear_add_run, NULL},
	{"com.microsoft", "QLinearGlobalAveragePool", 1, NULL, ox_qop_qlinear_gap_run, NULL},
};
const int	ox_kernels_quant_count = OX_KERNEL_COUNT(ox_kernels_quant);
