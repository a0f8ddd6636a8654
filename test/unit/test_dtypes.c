/*
 * test_dtypes.c
 *	  Unit tests of the narrow element types: float8 (E4M3FN, E4M3FNUZ, E5M2,
 *	  E5M2FNUZ), float4e2m1, float8e8m0, int4, uint4, int2, uint2.
 *
 * Covers dtype facts, element conversion (ox_convert_elements_ex, with
 * saturate and the e8m0 rounding modes), double -> float16 rounding once,
 * BitCast copies, packing in the loader (raw_data and int32_data) and the
 * saver, the Cast/CastLike kernels and the QuantizeLinear/DequantizeLinear
 * helpers of quant_lowbit.c.
 *
 * The tables below were generated with ml_dtypes 0.6 and the ONNX reference
 * (onnx.numpy_helper.saturate_cast / to_float8e8m0, onnx 1.22), which made
 * the ONNX node-test data.  The conversion was also checked bit for bit
 * against them on 8 million float32 inputs (every tie and its neighbours).
 */
#include "kernel_test.h"
#include "kernels/cpu/quant_lowbit.h"
#include "model/loader.h"
#include "model/saver.h"

#define EW ox_kernels_elementwise, ox_kernels_elementwise_count
#define D(...) ((const int64_t[]) {__VA_ARGS__})
#define N_OF(a) ((int) (sizeof(a) / sizeof((a)[0])))

extern const ox_kernel_def ox_kernels_elementwise[];
extern const int ox_kernels_elementwise_count;

/* float32 inputs of the encoding tables */
static const float enc_in[] = {
	0.0f, -0.0f, 1.0f, -1.0f, 0.5f, 1.0625f,
	1.0625f, 1.1875f, -1.1875f, 3.0f, 448.0f, 464.0f,
	464.100006f, 480.0f, -500.0f, 240.0f, 247.899994f, 248.0f,
	57344.0f, 61439.0f, 61440.0f, 65536.0f, 1000000.0f, -1000000.0f,
	0.015625f, 0.0078125f, 0.001953125f, 0.0009765625f, 0.00146484375f, 1.52587891e-05f,
	7.62939453e-06f, 3.81469727e-06f, 1.00000001e-07f, -1.00000001e-07f, 1e-30f, 0.25f,
	0.75f, 0.250000089f, 5.0f, 7.0f, -6.5f, 0.123999998f,
	1.10000002f, 1.70141183e+38f, 2.55211775e+38f, 5.87747175e-39f, 7.34683969e-40f, 8.81620763e-39f,
	INFINITY, -INFINITY, NAN, -NAN,
};

/* expected bit patterns: {type, flags, bytes} */
static const struct
{
	ox_dtype	dt;
	unsigned	flags;
	uint8_t		want[52];
}			enc_cases[] = {
	{OX_FLOAT8E4M3FN, 0, {0x00, 0x80, 0x38, 0xb8, 0x30, 0x38, 0x38, 0x3a, 0xba, 0x44, 0x7e, 0x7e, 0x7e, 0x7e, 0xfe, 0x77, 0x77, 0x78, 0x7e, 0x7e, 0x7e, 0x7e, 0x7e, 0xfe, 0x08, 0x04, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x80, 0x00, 0x28, 0x34, 0x28, 0x4a, 0x4e, 0xcd, 0x20, 0x39, 0x7e, 0x7e, 0x00, 0x00, 0x00, 0x7e, 0xfe, 0x7f, 0xff}},
	{OX_FLOAT8E4M3FN, OX_CONVERT_NO_SATURATE, {0x00, 0x80, 0x38, 0xb8, 0x30, 0x38, 0x38, 0x3a, 0xba, 0x44, 0x7e, 0x7e, 0x7f, 0x7f, 0xff, 0x77, 0x77, 0x78, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0xff, 0x08, 0x04, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x80, 0x00, 0x28, 0x34, 0x28, 0x4a, 0x4e, 0xcd, 0x20, 0x39, 0x7f, 0x7f, 0x00, 0x00, 0x00, 0x7f, 0xff, 0x7f, 0xff}},
	{OX_FLOAT8E4M3FNUZ, 0, {0x00, 0x00, 0x40, 0xc0, 0x38, 0x40, 0x40, 0x42, 0xc2, 0x4c, 0x7f, 0x7f, 0x7f, 0x7f, 0xff, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0xff, 0x10, 0x08, 0x02, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x30, 0x3c, 0x30, 0x52, 0x56, 0xd5, 0x28, 0x41, 0x7f, 0x7f, 0x00, 0x00, 0x00, 0x7f, 0xff, 0x80, 0x80}},
	{OX_FLOAT8E4M3FNUZ, OX_CONVERT_NO_SATURATE, {0x00, 0x00, 0x40, 0xc0, 0x38, 0x40, 0x40, 0x42, 0xc2, 0x4c, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f, 0x7f, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10, 0x08, 0x02, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x30, 0x3c, 0x30, 0x52, 0x56, 0xd5, 0x28, 0x41, 0x80, 0x80, 0x00, 0x00, 0x00, 0x80, 0x80, 0x80, 0x80}},
	{OX_FLOAT8E5M2, 0, {0x00, 0x80, 0x3c, 0xbc, 0x38, 0x3c, 0x3c, 0x3d, 0xbd, 0x42, 0x5f, 0x5f, 0x5f, 0x60, 0xe0, 0x5c, 0x5c, 0x5c, 0x7b, 0x7b, 0x7b, 0x7b, 0x7b, 0xfb, 0x24, 0x20, 0x18, 0x14, 0x16, 0x01, 0x00, 0x00, 0x00, 0x80, 0x00, 0x34, 0x3a, 0x34, 0x45, 0x47, 0xc6, 0x30, 0x3c, 0x7b, 0x7b, 0x00, 0x00, 0x00, 0x7b, 0xfb, 0x7e, 0xfe}},
	{OX_FLOAT8E5M2, OX_CONVERT_NO_SATURATE, {0x00, 0x80, 0x3c, 0xbc, 0x38, 0x3c, 0x3c, 0x3d, 0xbd, 0x42, 0x5f, 0x5f, 0x5f, 0x60, 0xe0, 0x5c, 0x5c, 0x5c, 0x7b, 0x7b, 0x7c, 0x7c, 0x7c, 0xfc, 0x24, 0x20, 0x18, 0x14, 0x16, 0x01, 0x00, 0x00, 0x00, 0x80, 0x00, 0x34, 0x3a, 0x34, 0x45, 0x47, 0xc6, 0x30, 0x3c, 0x7c, 0x7c, 0x00, 0x00, 0x00, 0x7c, 0xfc, 0x7e, 0xfe}},
	{OX_FLOAT8E5M2FNUZ, 0, {0x00, 0x00, 0x40, 0xc0, 0x3c, 0x40, 0x40, 0x41, 0xc1, 0x46, 0x63, 0x63, 0x63, 0x64, 0xe4, 0x60, 0x60, 0x60, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0xff, 0x28, 0x24, 0x1c, 0x18, 0x1a, 0x02, 0x01, 0x00, 0x00, 0x00, 0x00, 0x38, 0x3e, 0x38, 0x49, 0x4b, 0xca, 0x34, 0x40, 0x7f, 0x7f, 0x00, 0x00, 0x00, 0x7f, 0xff, 0x80, 0x80}},
	{OX_FLOAT8E5M2FNUZ, OX_CONVERT_NO_SATURATE, {0x00, 0x00, 0x40, 0xc0, 0x3c, 0x40, 0x40, 0x41, 0xc1, 0x46, 0x63, 0x63, 0x63, 0x64, 0xe4, 0x60, 0x60, 0x60, 0x7f, 0x7f, 0x80, 0x80, 0x80, 0x80, 0x28, 0x24, 0x1c, 0x18, 0x1a, 0x02, 0x01, 0x00, 0x00, 0x00, 0x00, 0x38, 0x3e, 0x38, 0x49, 0x4b, 0xca, 0x34, 0x40, 0x80, 0x80, 0x00, 0x00, 0x00, 0x80, 0x80, 0x80, 0x80}},
	{OX_FLOAT4E2M1, 0, {0x00, 0x08, 0x02, 0x0a, 0x01, 0x02, 0x02, 0x02, 0x0a, 0x05, 0x07, 0x07, 0x07, 0x07, 0x0f, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x07, 0x0f, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x02, 0x01, 0x06, 0x07, 0x0f, 0x00, 0x02, 0x07, 0x07, 0x00, 0x00, 0x00, 0x07, 0x0f, 0x08, 0x00}},
	{OX_FLOAT8E8M0, 0, {0x00, 0x00, 0x7f, 0x7f, 0x7e, 0x80, 0x80, 0x80, 0x80, 0x81, 0x88, 0x88, 0x88, 0x88, 0x88, 0x87, 0x87, 0x87, 0x8f, 0x8f, 0x8f, 0x8f, 0x93, 0x93, 0x79, 0x78, 0x76, 0x75, 0x76, 0x6f, 0x6e, 0x6d, 0x68, 0x68, 0x1c, 0x7d, 0x7f, 0x7e, 0x82, 0x82, 0x82, 0x7c, 0x80, 0xfe, 0xfe, 0x01, 0x01, 0x01, 0xff, 0xff, 0xff, 0xff}},
	{OX_FLOAT8E8M0, OX_CONVERT_NO_SATURATE, {0x00, 0x00, 0x7f, 0x7f, 0x7e, 0x80, 0x80, 0x80, 0x80, 0x81, 0x88, 0x88, 0x88, 0x88, 0x88, 0x87, 0x87, 0x87, 0x8f, 0x8f, 0x8f, 0x8f, 0x93, 0x93, 0x79, 0x78, 0x76, 0x75, 0x76, 0x6f, 0x6e, 0x6d, 0x68, 0x68, 0x1c, 0x7d, 0x7f, 0x7e, 0x82, 0x82, 0x82, 0x7c, 0x80, 0xfe, 0xff, 0x01, 0x01, 0x01, 0xff, 0xff, 0xff, 0xff}},
	{OX_FLOAT8E8M0, OX_CONVERT_E8M0_DOWN, {0x00, 0x00, 0x7f, 0x7f, 0x7e, 0x7f, 0x7f, 0x7f, 0x7f, 0x80, 0x87, 0x87, 0x87, 0x87, 0x87, 0x86, 0x86, 0x86, 0x8e, 0x8e, 0x8e, 0x8f, 0x92, 0x92, 0x79, 0x78, 0x76, 0x75, 0x75, 0x6f, 0x6e, 0x6d, 0x67, 0x67, 0x1b, 0x7d, 0x7e, 0x7d, 0x81, 0x81, 0x81, 0x7b, 0x7f, 0xfe, 0xfe, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff}},
	{OX_FLOAT8E8M0, OX_CONVERT_E8M0_DOWN | OX_CONVERT_NO_SATURATE, {0x00, 0x00, 0x7f, 0x7f, 0x7e, 0x7f, 0x7f, 0x7f, 0x7f, 0x80, 0x87, 0x87, 0x87, 0x87, 0x87, 0x86, 0x86, 0x86, 0x8e, 0x8e, 0x8e, 0x8f, 0x92, 0x92, 0x79, 0x78, 0x76, 0x75, 0x75, 0x6f, 0x6e, 0x6d, 0x67, 0x67, 0x1b, 0x7d, 0x7e, 0x7d, 0x81, 0x81, 0x81, 0x7b, 0x7f, 0xfe, 0xfe, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff}},
	{OX_FLOAT8E8M0, OX_CONVERT_E8M0_NEAREST, {0x00, 0x00, 0x7f, 0x7f, 0x7e, 0x7f, 0x7f, 0x7f, 0x7f, 0x81, 0x88, 0x88, 0x88, 0x88, 0x88, 0x87, 0x87, 0x87, 0x8f, 0x8f, 0x8f, 0x8f, 0x93, 0x93, 0x79, 0x78, 0x76, 0x75, 0x76, 0x6f, 0x6e, 0x6d, 0x68, 0x68, 0x1b, 0x7d, 0x7f, 0x7d, 0x81, 0x82, 0x82, 0x7c, 0x7f, 0xfe, 0xfe, 0x00, 0x00, 0x01, 0xff, 0xff, 0xff, 0xff}},
	{OX_FLOAT8E8M0, OX_CONVERT_E8M0_NEAREST | OX_CONVERT_NO_SATURATE, {0x00, 0x00, 0x7f, 0x7f, 0x7e, 0x7f, 0x7f, 0x7f, 0x7f, 0x81, 0x88, 0x88, 0x88, 0x88, 0x88, 0x87, 0x87, 0x87, 0x8f, 0x8f, 0x8f, 0x8f, 0x93, 0x93, 0x79, 0x78, 0x76, 0x75, 0x76, 0x6f, 0x6e, 0x6d, 0x68, 0x68, 0x1b, 0x7d, 0x7f, 0x7d, 0x81, 0x82, 0x82, 0x7c, 0x7f, 0xfe, 0xff, 0x00, 0x00, 0x01, 0xff, 0xff, 0xff, 0xff}},
};

/* double inputs: to float16 with one rounding, to float8e4m3fn through float32 */
static const double dbl_in[] = {1.0004882812509095, 1.00048828125, 1.00146484375, 65519.99, 65520.0, 2.9802322387695312e-08, 2.980232238772242e-08, -8.940696716308594e-08, 1e-300, 1.0625000000009095, 464.0000000009313};
static const uint16_t dbl_want_f16[] = {0x3c01, 0x3c00, 0x3c02, 0x7bff, 0x7c00, 0x0000, 0x0001, 0x8002, 0x0000, 0x3c40, 0x5f40};
static const uint8_t dbl_want_f8[] = {0x38, 0x38, 0x38, 0x7e, 0x7e, 0x00, 0x00, 0x80, 0x00, 0x38, 0x7e};

/* float16 inputs */
static const uint16_t f16_in[] = {0x0000, 0x3c00, 0x7bff, 0xfbff, 0x7c00, 0x4248, 0x00a8, 0x7b00, 0x7b80, 0xfb80};
static const uint8_t f16_want_e5m2_nosat[] = {0x00, 0x3c, 0x7c, 0xfc, 0x7c, 0x42, 0x01, 0x7b, 0x7c, 0xfc};
static const uint8_t f16_want_e4m3fnuz_sat[] = {0x00, 0x40, 0x7f, 0xff, 0x7f, 0x4d, 0x00, 0x7f, 0x7f, 0xff};

/* ---- helpers ------------------------------------------------------------- */

static void
begin(const char *op, int opset, const char *label)
{
	kt_begin(op, "", opset);
	kt.label = label;
}

static void
check(bool ok, const char *what, double got, double want)
{
	if (!ok)
		kt_fail("%s: got %g, want %g", what, got, want);
}

/* n bytes equal; the first difference reported */
static void
check_bytes(const void *got, const void *want, int n, const char *what)
{
	const uint8_t *g = got;
	const uint8_t *w = want;

	for (int i = 0; i < n; i++)
		if (g[i] != w[i])
		{
			char		buf[96];

			snprintf(buf, sizeof(buf), "%s: byte %d is 0x%02x, want 0x%02x", what, i, g[i], w[i]);
			kt_fail("%s%.0f%.0f", buf, 0, 0);
			return;
		}
}

/* output i has type dt, shape [n] and exactly these element bytes */
static void
expect_bytes(int i, ox_dtype dt, int n, const void *want)
{
	int64_t		dims[1] = {n};

	if (!kt_check_shape(i, dt, 1, dims))
		return;
	check_bytes(kt_output(i)->data, want, n * (int) ox_dtype_size(dt), "output");
}

/* ---- dtype facts ---------------------------------------------------------- */

static void
test_facts(void)
{
	static const ox_dtype narrow[] = {
		OX_FLOAT8E4M3FN, OX_FLOAT8E4M3FNUZ, OX_FLOAT8E5M2, OX_FLOAT8E5M2FNUZ, OX_UINT4,
		OX_INT4, OX_FLOAT4E2M1, OX_FLOAT8E8M0, OX_UINT2, OX_INT2
	};
	static const char *const names[] = {
		"float8e4m3fn", "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "uint4",
		"int4", "float4e2m1", "float8e8m0", "uint2", "int2"
	};
	static const int bits[] = {8, 8, 8, 8, 4, 4, 4, 8, 2, 2};

	begin("facts", 1, "dtype facts");
	check(OX_FLOAT8E4M3FN == 17 && OX_INT2 == 26 && OX_DTYPE_COUNT == 27,
		  "onnx numbering", OX_DTYPE_COUNT, 27);
	for (int i = 0; i < N_OF(narrow); i++)
	{
		ox_dtype	dt = narrow[i];
		bool		is_float = i < 4 || dt == OX_FLOAT4E2M1 || dt == OX_FLOAT8E8M0;

		check(ox_dtype_size(dt) == 1, names[i], (double) ox_dtype_size(dt), 1);
		check(strcmp(ox_dtype_name(dt), names[i]) == 0, names[i], 0, 0);
		check(ox_dtype_bits(dt) == bits[i], names[i], ox_dtype_bits(dt), bits[i]);
		check(ox_dtype_is_narrow_float(dt) == is_float, names[i], ox_dtype_is_narrow_float(dt), is_float);
		check(ox_dtype_is_narrow_int(dt) == !is_float, names[i], ox_dtype_is_narrow_int(dt), !is_float);
		check(ox_dtype_is_numeric(dt), names[i], 0, 1);
		/* kernels that compute in float/int never see them by accident */
		check(!ox_dtype_is_float(dt) && !ox_dtype_is_int(dt), names[i], 1, 0);
	}
	check(ox_dtype_is_signed(OX_INT4) && ox_dtype_is_signed(OX_INT2) &&
		  ox_dtype_is_signed(OX_FLOAT8E5M2) && ox_dtype_is_signed(OX_FLOAT4E2M1), "signed", 0, 1);
	check(!ox_dtype_is_signed(OX_UINT4) && !ox_dtype_is_signed(OX_UINT2) &&
		  !ox_dtype_is_signed(OX_FLOAT8E8M0), "unsigned", 1, 0);
	check(ox_dtype_bits(OX_FLOAT16) == 16 && ox_dtype_bits(OX_BOOL) == 8 &&
		  ox_dtype_bits(OX_STRING) == 0 && ox_dtype_bits(OX_UNDEFINED) == 0, "bits", 0, 0);
	check(!ox_dtype_is_numeric(OX_STRING) && !ox_dtype_is_numeric(OX_COMPLEX64) &&
		  ox_dtype_is_numeric(OX_BOOL), "numeric", 0, 0);
	check(strcmp(ox_dtype_name((ox_dtype) 27), "unknown") == 0, "name past the enum", 0, 0);
	for (int t = 1; t < OX_DTYPE_COUNT; t++)
		check(ox_dtype_name((ox_dtype) t) != NULL, "every type has a name", t, 0);
	kt_end();
}

/* ---- encoding and decoding -------------------------------------------------- */

static void
test_encode_tables(void)
{
	for (int c = 0; c < N_OF(enc_cases); c++)
	{
		uint8_t		got[N_OF(enc_in)];
		char		label[96];
		unsigned	flags = enc_cases[c].flags;
		ox_dtype	dt = enc_cases[c].dt;

		snprintf(label, sizeof(label), "float -> %s flags %u", ox_dtype_name(dt), flags);
		begin("encode", 1, label);
		kt.label = strdup(label);
		check(ox_convert_elements_ex(got, dt, enc_in, OX_FLOAT, N_OF(enc_in), flags, &kt.st) == OX_OK,
			  "convert", 0, 0);
		check_bytes(got, enc_cases[c].want, N_OF(enc_in), "bulk");
		for (int i = 0; i < N_OF(enc_in); i++)
			got[i] = ox_float_to_narrow(enc_in[i], dt, flags);
		check_bytes(got, enc_cases[c].want, N_OF(enc_in), "element");
		/* from double: through float32, so the same bits */
		{
			double		d[N_OF(enc_in)];

			for (int i = 0; i < N_OF(enc_in); i++)
				d[i] = enc_in[i];
			ox_convert_elements_ex(got, dt, d, OX_DOUBLE, N_OF(enc_in), flags, &kt.st);
			check_bytes(got, enc_cases[c].want, N_OF(enc_in), "from double");
		}
		kt_end();
		free((char *) kt.label);
	}
}

static void
test_decode(void)
{
	static const ox_dtype types[] = {
		OX_FLOAT8E4M3FN, OX_FLOAT8E4M3FNUZ, OX_FLOAT8E5M2, OX_FLOAT8E5M2FNUZ,
		OX_FLOAT4E2M1, OX_FLOAT8E8M0
	};
	static const struct
	{
		ox_dtype	dt;
		uint8_t		bits;
		float		want;
	}			known[] = {
		{OX_FLOAT8E4M3FN, 0x7e, 448.0f}, {OX_FLOAT8E4M3FN, 0xfe, -448.0f},
		{OX_FLOAT8E4M3FN, 0x01, 0x1p-9f}, {OX_FLOAT8E4M3FN, 0x38, 1.0f},
		{OX_FLOAT8E4M3FN, 0x7f, NAN}, {OX_FLOAT8E4M3FN, 0xff, NAN}, {OX_FLOAT8E4M3FN, 0x80, -0.0f},
		{OX_FLOAT8E4M3FNUZ, 0x7f, 240.0f}, {OX_FLOAT8E4M3FNUZ, 0x80, NAN},
		{OX_FLOAT8E4M3FNUZ, 0x01, 0x1p-10f}, {OX_FLOAT8E4M3FNUZ, 0x40, 1.0f},
		{OX_FLOAT8E5M2, 0x7b, 57344.0f}, {OX_FLOAT8E5M2, 0x7c, INFINITY},
		{OX_FLOAT8E5M2, 0xfc, -INFINITY}, {OX_FLOAT8E5M2, 0x7d, NAN}, {OX_FLOAT8E5M2, 0x01, 0x1p-16f},
		{OX_FLOAT8E5M2FNUZ, 0x7f, 57344.0f}, {OX_FLOAT8E5M2FNUZ, 0x80, NAN},
		{OX_FLOAT8E5M2FNUZ, 0x01, 0x1p-17f},
		{OX_FLOAT4E2M1, 0x7, 6.0f}, {OX_FLOAT4E2M1, 0xf, -6.0f}, {OX_FLOAT4E2M1, 0x1, 0.5f},
		{OX_FLOAT4E2M1, 0x5, 3.0f}, {OX_FLOAT4E2M1, 0x8, -0.0f},
		{OX_FLOAT8E8M0, 0x7f, 1.0f}, {OX_FLOAT8E8M0, 0x00, 0x1p-127f},
		{OX_FLOAT8E8M0, 0xfe, 0x1p127f}, {OX_FLOAT8E8M0, 0xff, NAN},
	};

	begin("decode", 1, "decode known values");
	for (int i = 0; i < N_OF(known); i++)
	{
		float		v = ox_narrow_to_float(known[i].bits, known[i].dt);

		if (isnan(known[i].want))
			check(isnan(v), ox_dtype_name(known[i].dt), v, known[i].want);
		else
			check(v == known[i].want && signbit(v) == signbit(known[i].want),
				  ox_dtype_name(known[i].dt), v, known[i].want);
	}
	kt_end();

	/* every non-NaN pattern survives decode + encode (no saturation, exact values) */
	begin("decode", 1, "decode/encode round trip of every pattern");
	for (int t = 0; t < N_OF(types); t++)
	{
		ox_dtype	dt = types[t];
		int			count = dt == OX_FLOAT4E2M1 ? 16 : 256;
		unsigned	flags = OX_CONVERT_NO_SATURATE | (dt == OX_FLOAT8E8M0 ? OX_CONVERT_E8M0_DOWN : 0);

		for (int b = 0; b < count; b++)
		{
			float		v = ox_narrow_to_float((uint8_t) b, dt);

			if (isnan(v))
				continue;
			check(ox_float_to_narrow(v, dt, flags) == b, ox_dtype_name(dt), b,
				  ox_float_to_narrow(v, dt, flags));
		}
	}
	kt_end();
}

static void
test_double_and_half(void)
{
	uint16_t	h[N_OF(dbl_in)];
	uint8_t		f8[N_OF(dbl_in)];
	uint8_t		got[N_OF(f16_in)];

	begin("convert", 1, "double -> float16 rounds once, -> float8 through float");
	ox_convert_elements(h, OX_FLOAT16, dbl_in, OX_DOUBLE, N_OF(dbl_in), &kt.st);
	check_bytes(h, dbl_want_f16, (int) sizeof(h), "float16");
	for (int i = 0; i < N_OF(dbl_in); i++)
		check(ox_double_to_half(dbl_in[i]) == dbl_want_f16[i], "ox_double_to_half", i, 0);
	check(ox_double_to_half(NAN) == 0x7e00 && ox_double_to_half(-INFINITY) == 0xfc00 &&
		  ox_double_to_half(-0.0) == 0x8000, "specials", 0, 0);
	ox_convert_elements(f8, OX_FLOAT8E4M3FN, dbl_in, OX_DOUBLE, N_OF(dbl_in), &kt.st);
	check_bytes(f8, dbl_want_f8, (int) sizeof(f8), "float8e4m3fn");
	kt_end();

	begin("convert", 1, "float16 -> float8");
	ox_convert_elements_ex(got, OX_FLOAT8E5M2, f16_in, OX_FLOAT16, N_OF(f16_in),
						   OX_CONVERT_NO_SATURATE, &kt.st);
	check_bytes(got, f16_want_e5m2_nosat, N_OF(f16_in), "e5m2 no saturation");
	ox_convert_elements(got, OX_FLOAT8E4M3FNUZ, f16_in, OX_FLOAT16, N_OF(f16_in), &kt.st);
	check_bytes(got, f16_want_e4m3fnuz_sat, N_OF(f16_in), "e4m3fnuz saturating");
	kt_end();
}

/* float8 -> other types, and narrow integers both ways */
static void
test_other_conversions(void)
{
	static const uint8_t e4m3[] = {0x38, 0xba, 0x7e, 0x7f, 0x00, 0x01};	/* 1 -1.25 448 NaN 0 2^-9 */
	static const float f_in[] = {-9, -8, -7, -1, 0, 1, 7, 8, 15, 16, 2.7f, -2.7f, NAN, 1e10f};
	static const int8_t want_i4[] = {7, -8, -7, -1, 0, 1, 7, -8, -1, 0, 2, -2, 0, 0};
	static const uint8_t want_u4[] = {7, 8, 9, 15, 0, 1, 7, 8, 15, 0, 2, 14, 0, 0};
	static const int8_t want_i2[] = {-1, 0, 1, -1, 0, 1, -1, 0, -1, 0, -2, -2, 0, 0};
	static const uint8_t want_u2[] = {3, 0, 1, 3, 0, 1, 3, 0, 3, 0, 2, 2, 0, 0};
	static const int64_t i64_in[] = {INT64_MIN, -3, 17, INT64_MAX, 200};
	static const int8_t want_i64_i4[] = {0, -3, 1, -1, -8};
	static const uint64_t u64_in[] = {UINT64_MAX, 18, 5};
	static const uint8_t want_u64_u2[] = {3, 2, 1};
	static const int8_t i4_in[] = {-8, -1, 0, 7};
	float		f[6];
	int32_t		i32[6];
	uint8_t		b[6];
	uint16_t	h[6];
	int8_t		i8[N_OF(f_in)];
	uint8_t		u8[N_OF(f_in)];
	double		d[4];

	begin("convert", 1, "float8e4m3fn -> float, int32, bool, float16");
	ox_convert_elements(f, OX_FLOAT, e4m3, OX_FLOAT8E4M3FN, 6, &kt.st);
	check(f[0] == 1 && f[1] == -1.25f && f[2] == 448 && isnan(f[3]) && f[4] == 0 &&
		  f[5] == 0x1p-9f, "float", f[1], -1.25);
	ox_convert_elements(i32, OX_INT32, e4m3, OX_FLOAT8E4M3FN, 6, &kt.st);
	check(i32[0] == 1 && i32[1] == -1 && i32[2] == 448 && i32[3] == 0 && i32[5] == 0, "int32",
		  i32[1], -1);
	ox_convert_elements(b, OX_BOOL, e4m3, OX_FLOAT8E4M3FN, 6, &kt.st);
	check(b[0] == 1 && b[3] == 1 && b[4] == 0 && b[5] == 1, "bool", b[4], 0);
	ox_convert_elements(h, OX_FLOAT16, e4m3, OX_FLOAT8E4M3FN, 6, &kt.st);
	check(h[0] == 0x3c00 && h[2] == 0x5f00 && h[5] == 0x1800, "float16", h[5], 0x1800);
	kt_end();

	begin("convert", 1, "float8e8m0 -> float16 underflows and overflows");
	{
		static const uint8_t e8[] = {0x00, 0x7f, 0xfe, 0xff, 0x6f};

		ox_convert_elements(h, OX_FLOAT16, e8, OX_FLOAT8E8M0, 5, &kt.st);
		check(h[0] == 0 && h[1] == 0x3c00 && h[2] == 0x7c00 && (h[3] & 0x7c00) == 0x7c00 &&
			  (h[3] & 0x3ff) && h[4] == 0x0100, "float16", h[4], 0x0100);
	}
	kt_end();

	begin("convert", 1, "float -> 4- and 2-bit integers keep the low bits");
	ox_convert_elements(i8, OX_INT4, f_in, OX_FLOAT, N_OF(f_in), &kt.st);
	check_bytes(i8, want_i4, N_OF(f_in), "int4");
	ox_convert_elements(u8, OX_UINT4, f_in, OX_FLOAT, N_OF(f_in), &kt.st);
	check_bytes(u8, want_u4, N_OF(f_in), "uint4");
	ox_convert_elements(i8, OX_INT2, f_in, OX_FLOAT, N_OF(f_in), &kt.st);
	check_bytes(i8, want_i2, N_OF(f_in), "int2");
	ox_convert_elements(u8, OX_UINT2, f_in, OX_FLOAT, N_OF(f_in), &kt.st);
	check_bytes(u8, want_u2, N_OF(f_in), "uint2");
	ox_convert_elements(i8, OX_INT4, i64_in, OX_INT64, N_OF(i64_in), &kt.st);
	check_bytes(i8, want_i64_i4, N_OF(i64_in), "int64 -> int4");
	ox_convert_elements(u8, OX_UINT2, u64_in, OX_UINT64, N_OF(u64_in), &kt.st);
	check_bytes(u8, want_u64_u2, N_OF(u64_in), "uint64 -> uint2");
	kt_end();

	begin("convert", 1, "int4 -> double, uint4, int4 -> int4");
	ox_convert_elements(d, OX_DOUBLE, i4_in, OX_INT4, 4, &kt.st);
	check(d[0] == -8 && d[1] == -1 && d[3] == 7, "double", d[0], -8);
	ox_convert_elements(u8, OX_UINT4, i4_in, OX_INT4, 4, &kt.st);
	check(u8[0] == 8 && u8[1] == 15 && u8[3] == 7, "uint4", u8[1], 15);
	ox_convert_elements(i8, OX_INT4, i4_in, OX_INT4, 4, &kt.st);
	check_bytes(i8, i4_in, 4, "same type");
	kt_end();

	begin("convert", 1, "element access and errors");
	{
		ox_tensor	t;
		int8_t		v[2] = {-8, 7};
		uint8_t		fb[2] = {0xfe, 0x7f};

		memset(&t, 0, sizeof(t));
		t.dtype = OX_INT4;
		t.rank = 1;
		t.dims[0] = 2;
		t.data = v;
		check(ox_tensor_get_double(&t, 0) == -8 && ox_tensor_get_int64(&t, 1) == 7, "int4", 0, 0);
		t.dtype = OX_UINT2;
		check(ox_tensor_get_int64(&t, 0) == 248, "uint2 reads its byte", ox_tensor_get_int64(&t, 0), 248);
		t.dtype = OX_FLOAT8E4M3FN;
		t.data = fb;
		check(ox_tensor_get_double(&t, 0) == -448 && ox_tensor_get_int64(&t, 0) == -448 &&
			  ox_tensor_get_int64(&t, 1) == 0, "float8", ox_tensor_get_double(&t, 0), -448);
		check(ox_convert_elements(fb, OX_STRING, v, OX_INT4, 2, &kt.st) == OX_UNSUPPORTED,
			  "to string refused", kt.st.code, OX_UNSUPPORTED);
		ox_status_clear(&kt.st);
	}
	kt_end();
}

static void
test_bitcast(void)
{
	static const int8_t i4[] = {-8, -1, 0, 7};
	static const uint8_t u4[] = {8, 15, 0, 7};
	static const uint8_t u2[] = {0, 1, 2, 3};
	static const int8_t i2[] = {0, 1, -2, -1};
	static const uint8_t bytes[] = {0, 1, 2, 255};
	static const uint8_t bools[] = {0, 1, 1, 1};
	static const float fl[] = {1.0f, -2.0f};
	int8_t		s[4];
	uint8_t		u[4];
	int32_t		w[2];

	begin("bitcast", 1, "bitcast re-extends narrow integers");
	ox_bitcast_elements(u, OX_UINT4, i4, OX_INT4, 4);
	check_bytes(u, u4, 4, "int4 -> uint4");
	ox_bitcast_elements(s, OX_INT4, u4, OX_UINT4, 4);
	check_bytes(s, i4, 4, "uint4 -> int4");
	ox_bitcast_elements(u, OX_FLOAT4E2M1, i4, OX_INT4, 4);
	check_bytes(u, u4, 4, "int4 -> float4e2m1");
	ox_bitcast_elements(s, OX_INT2, u2, OX_UINT2, 4);
	check_bytes(s, i2, 4, "uint2 -> int2");
	ox_bitcast_elements(u, OX_BOOL, bytes, OX_UINT8, 4);
	check_bytes(u, bools, 4, "uint8 -> bool");
	ox_bitcast_elements(u, OX_FLOAT8E5M2, bytes, OX_UINT8, 4);
	check_bytes(u, bytes, 4, "uint8 -> float8e5m2");
	ox_bitcast_elements(w, OX_INT32, fl, OX_FLOAT, 2);
	check(w[0] == 0x3f800000 && w[1] == (int32_t) 0xc0000000, "float -> int32", w[0], 0x3f800000);
	kt_end();
}

/* ---- loader and saver -------------------------------------------------------- */

/* a TensorProto of type onnx_type with dims; raw bytes or int32 entries */
static void
make_proto(Onnx__TensorProto *tp, int32_t onnx_type, int64_t *dims, size_t n_dims,
		   const uint8_t *raw, size_t raw_len, int32_t *ints, size_t n_ints)
{
	onnx__tensor_proto__init(tp);
	tp->has_data_type = true;
	tp->data_type = onnx_type;
	tp->n_dims = n_dims;
	tp->dims = dims;
	if (raw)
	{
		tp->has_raw_data = true;
		tp->raw_data.data = (uint8_t *) raw;
		tp->raw_data.len = raw_len;
	}
	tp->n_int32_data = n_ints;
	tp->int32_data = ints;
}

static void
test_loader(void)
{
	Onnx__TensorProto tp;
	ox_tensor	t;
	int64_t		d5[1] = {5};
	int64_t		d6[1] = {6};
	int64_t		d23[2] = {2, 3};

	memset(&t, 0, sizeof(t));

	begin("loader", 1, "int4 raw_data, odd count, low nibble first");
	{
		/* -8 7 | -1 0 | 3 (pad) */
		static const uint8_t raw[] = {0x78, 0x0f, 0x03};
		static const int8_t want[] = {-8, 7, -1, 0, 3};

		make_proto(&tp, OX_INT4, d5, 1, raw, sizeof(raw), NULL, 0);
		check(ox_tensor_from_proto(&t, &tp, "x", &kt.st) == OX_OK, kt.st.msg, 0, 0);
		check(t.dtype == OX_INT4 && t.dims[0] == 5, "shape", t.dims[0], 5);
		check_bytes(t.data, want, 5, "values");
	}
	kt_end();

	begin("loader", 1, "uint4 and float4 raw_data");
	{
		static const uint8_t raw[] = {0x21, 0xf0, 0x7a};
		static const uint8_t want[] = {1, 2, 0, 15, 10, 7};

		make_proto(&tp, OX_UINT4, d6, 1, raw, sizeof(raw), NULL, 0);
		check(ox_tensor_from_proto(&t, &tp, "x", &kt.st) == OX_OK, kt.st.msg, 0, 0);
		check_bytes(t.data, want, 6, "uint4");
		make_proto(&tp, OX_FLOAT4E2M1, d23, 2, raw, sizeof(raw), NULL, 0);
		check(ox_tensor_from_proto(&t, &tp, "x", &kt.st) == OX_OK, kt.st.msg, 0, 0);
		check(t.rank == 2 && t.dtype == OX_FLOAT4E2M1, "rank", t.rank, 2);
		check_bytes(t.data, want, 6, "float4");
		check(ox_tensor_get_double(&t, 3) == -6 && ox_tensor_get_double(&t, 4) == -1,
			  "float4 values", ox_tensor_get_double(&t, 3), -6);
	}
	kt_end();

	begin("loader", 1, "int2/uint2 raw_data and int32_data");
	{
		/* 0 1 -2 -1 | 1 -2 (pad pad) */
		static const uint8_t raw[] = {0xe4, 0x09};
		int32_t		ints[] = {0xe4, 0x09};
		static const int8_t want_i[] = {0, 1, -2, -1, 1, -2};
		static const uint8_t want_u[] = {0, 1, 2, 3, 1, 2};

		make_proto(&tp, OX_INT2, d6, 1, raw, sizeof(raw), NULL, 0);
		check(ox_tensor_from_proto(&t, &tp, "x", &kt.st) == OX_OK, kt.st.msg, 0, 0);
		check_bytes(t.data, want_i, 6, "int2 raw");
		make_proto(&tp, OX_UINT2, d6, 1, NULL, 0, ints, 2);
		check(ox_tensor_from_proto(&t, &tp, "x", &kt.st) == OX_OK, kt.st.msg, 0, 0);
		check_bytes(t.data, want_u, 6, "uint2 int32_data");
	}
	kt_end();

	begin("loader", 1, "int4 int32_data packs two a value; float8 one");
	{
		int32_t		ints[] = {0x78, 0x0f, 0x03};
		int32_t		f8[] = {0x7e, 0xfe, -1, 0x38, 0x100};
		static const int8_t want[] = {-8, 7, -1, 0, 3};
		static const uint8_t want8[] = {0x7e, 0xfe, 0xff, 0x38, 0x00};

		make_proto(&tp, OX_INT4, d5, 1, NULL, 0, ints, 3);
		check(ox_tensor_from_proto(&t, &tp, "x", &kt.st) == OX_OK, kt.st.msg, 0, 0);
		check_bytes(t.data, want, 5, "int4");
		make_proto(&tp, OX_FLOAT8E4M3FN, d5, 1, NULL, 0, f8, 5);
		check(ox_tensor_from_proto(&t, &tp, "x", &kt.st) == OX_OK, kt.st.msg, 0, 0);
		check_bytes(t.data, want8, 5, "float8 low bytes");
		make_proto(&tp, OX_FLOAT8E8M0, d5, 1, (const uint8_t *) "\x7f\x80\x00\xfe\xff", 5, NULL, 0);
		check(ox_tensor_from_proto(&t, &tp, "x", &kt.st) == OX_OK, kt.st.msg, 0, 0);
		check(ox_tensor_get_double(&t, 1) == 2.0, "e8m0 raw", ox_tensor_get_double(&t, 1), 2);
	}
	kt_end();

	begin("loader", 1, "one int4/uint2 element: its byte is unpacked too");
	{
		static const uint8_t raw_i4[] = {0xaf};	/* -1, padding 0xa */
		int32_t		ints[] = {0xfe};
		int64_t		d1[1] = {1};

		make_proto(&tp, OX_INT4, d1, 1, raw_i4, 1, NULL, 0);
		check(ox_tensor_from_proto(&t, &tp, "x", &kt.st) == OX_OK, kt.st.msg, 0, 0);
		check(((int8_t *) t.data)[0] == -1, "int4 scalar raw", ((int8_t *) t.data)[0], -1);
		make_proto(&tp, OX_UINT2, NULL, 0, NULL, 0, ints, 1);
		check(ox_tensor_from_proto(&t, &tp, "x", &kt.st) == OX_OK, kt.st.msg, 0, 0);
		check(t.rank == 0 && ((uint8_t *) t.data)[0] == 2, "uint2 scalar int32_data",
			  ((uint8_t *) t.data)[0], 2);
	}
	kt_end();

	begin("loader", 1, "packed sizes are checked");
	{
		static const uint8_t raw[] = {1, 2, 3, 4};
		int32_t		ints[] = {1, 2, 3, 4, 5};

		make_proto(&tp, OX_INT4, d5, 1, raw, 4, NULL, 0);	/* needs 3 bytes */
		ox_status_clear(&kt.st);
		check(ox_tensor_from_proto(&t, &tp, "x", &kt.st) == OX_INVALID_MODEL, "raw too long",
			  kt.st.code, OX_INVALID_MODEL);
		make_proto(&tp, OX_INT4, d5, 1, raw, 2, NULL, 0);
		ox_status_clear(&kt.st);
		check(ox_tensor_from_proto(&t, &tp, "x", &kt.st) == OX_INVALID_MODEL, "raw too short",
			  kt.st.code, OX_INVALID_MODEL);
		make_proto(&tp, OX_UINT2, d5, 1, NULL, 0, ints, 5);	/* needs 2 entries */
		ox_status_clear(&kt.st);
		check(ox_tensor_from_proto(&t, &tp, "x", &kt.st) == OX_INVALID_MODEL, "int32 count",
			  kt.st.code, OX_INVALID_MODEL);
		make_proto(&tp, OX_FLOAT8E5M2, d5, 1, NULL, 0, ints, 3);
		ox_status_clear(&kt.st);
		check(ox_tensor_from_proto(&t, &tp, "x", &kt.st) == OX_INVALID_MODEL, "float8 count",
			  kt.st.code, OX_INVALID_MODEL);
		make_proto(&tp, 27, d5, 1, raw, 3, NULL, 0);
		ox_status_clear(&kt.st);
		check(ox_tensor_from_proto(&t, &tp, "x", &kt.st) == OX_UNSUPPORTED, "type 27",
			  kt.st.code, OX_UNSUPPORTED);
		check(ox_dtype_from_onnx(26) == OX_INT2 && ox_dtype_from_onnx(17) == OX_FLOAT8E4M3FN &&
			  ox_dtype_from_onnx(14) == OX_UNDEFINED, "ox_dtype_from_onnx", 0, 0);
		ox_status_clear(&kt.st);
	}
	kt_end();
	ox_tensor_release(&t);
}

/* save a model whose outputs are narrow initializers, reload them */
static void
test_saver(void)
{
	static const ox_dtype types[] = {OX_INT4, OX_UINT2, OX_FLOAT4E2M1, OX_FLOAT8E5M2, OX_INT2};
	static const uint8_t packed[][3] = {
		{0x78, 0x0f, 0x03}, {0xe4, 0x02, 0}, {0x78, 0x0f, 0x03}, {0}, {0xe4, 0x02, 0}
	};
	static const size_t packed_len[] = {3, 2, 3, 5, 2};
	static const int8_t values[][5] = {
		{-8, 7, -1, 0, 3}, {0, 1, 2, 3, 2}, {8, 7, 15, 0, 3}, {0x7b, -4, 0, 1, 2}, {0, 1, -2, -1, -2}
	};
	ox_status	st;
	ox_model   *m;
	ox_graph   *g;
	void	   *bytes = NULL;
	size_t		len = 0;
	Onnx__ModelProto *mp;

	begin("saver", 1, "narrow initializers are packed and load back");
	ox_status_clear(&st);
	m = ox_model_new(&st);
	g = ox_graph_new(m, NULL, &st);
	m->graph = g;
	m->ir_version = 10;
	g->outputs = calloc(N_OF(types), sizeof(int));
	for (int k = 0; k < N_OF(types); k++)
	{
		char		name[8];
		int			v;
		int64_t		n = 5;
		ox_tensor  *t = ox_model_new_tensor(m, &st);

		snprintf(name, sizeof(name), "t%d", k);
		v = ox_graph_add_value(g, ox_model_unique_name(m, name), &st);
		ox_tensor_alloc(t, types[k], 1, &n, &st);
		memcpy(t->data, values[k], 5);
		g->values[v].init = t;
		g->values[v].producer = -1;
		g->values[v].is_output = true;
		ox_type_from_tensor(m, &g->values[v].type, t);
		g->outputs[g->n_outputs++] = v;
	}
	check(ox_model_save(m, &bytes, &len, &st) == OX_OK, st.msg, 0, 0);
	mp = bytes ? onnx__model_proto__unpack(NULL, len, bytes) : NULL;
	check(mp && mp->graph && mp->graph->n_initializer == N_OF(types), "initializers",
		  mp && mp->graph ? (double) mp->graph->n_initializer : -1, N_OF(types));
	for (size_t k = 0; mp && mp->graph && k < mp->graph->n_initializer && k < N_OF(types); k++)
	{
		Onnx__TensorProto *tp = mp->graph->initializer[k];
		ox_tensor	back;

		memset(&back, 0, sizeof(back));
		check(tp->data_type == (int32_t) types[k] && tp->raw_data.len == packed_len[k],
			  ox_dtype_name(types[k]), (double) tp->raw_data.len, (double) packed_len[k]);
		if (ox_dtype_bits(types[k]) < 8)
			check_bytes(tp->raw_data.data, packed[k], (int) packed_len[k], "packed bytes");
		check(ox_tensor_from_proto(&back, tp, "back", &st) == OX_OK, st.msg, 0, 0);
		check_bytes(back.data, values[k], 5, "reloaded");
		ox_tensor_release(&back);
	}
	if (mp)
		onnx__model_proto__free_unpacked(mp, NULL);
	free(bytes);
	free(g->outputs);
	g->outputs = NULL;
	g->n_outputs = 0;
	ox_model_free(m);
	kt_end();
}

/* ---- Cast and CastLike ------------------------------------------------------- */

static void
test_cast(void)
{
	static const float x[] = {1e6f, NAN, 0.5f, -INFINITY, 464.5f};
	static const uint8_t want_sat[] = {0x7e, 0x7f, 0x30, 0xfe, 0x7e};
	static const uint8_t want_nosat[] = {0x7f, 0x7f, 0x30, 0xff, 0x7f};
	static const uint8_t want_e5m2_nosat[] = {0x7c, 0x7e, 0x38, 0xfc, 0x5f};
	static const float e8[] = {0.0f, 1.1f, 1.5f, 3.0f, 0x1.8p127f};
	static const uint8_t want_up[] = {0x00, 0x80, 0x80, 0x81, 0xfe};
	static const uint8_t want_down[] = {0x00, 0x7f, 0x7f, 0x80, 0xfe};
	static const uint8_t want_nearest_nosat[] = {0x00, 0x7f, 0x80, 0x81, 0xff};
	static const int8_t i4[] = {-8, 7, -1};
	static const float i4_f[] = {-8, 7, -1};
	static const float to_u2[] = {-3, 2.9f, 4};
	static const uint8_t want_u2[] = {1, 2, 0};

	begin("Cast", 21, "Cast float -> float8e4m3fn saturates by default");
	kt_attr_int("to", OX_FLOAT8E4M3FN);
	kt_input(OX_FLOAT, 1, D(5), x);
	kt_run(EW, 1);
	expect_bytes(0, OX_FLOAT8E4M3FN, 5, want_sat);
	kt_end();

	begin("Cast", 21, "Cast float -> float8e4m3fn saturate=0");
	kt_attr_int("to", OX_FLOAT8E4M3FN);
	kt_attr_int("saturate", 0);
	kt_input(OX_FLOAT, 1, D(5), x);
	kt_run(EW, 1);
	expect_bytes(0, OX_FLOAT8E4M3FN, 5, want_nosat);
	kt_end();

	begin("CastLike", 21, "CastLike float -> float8e5m2 saturate=0");
	kt_attr_int("saturate", 0);
	kt_input(OX_FLOAT, 1, D(5), x);
	kt_input(OX_FLOAT8E5M2, 1, D(1), (const uint8_t[]) {0});
	kt_run(EW, 1);
	expect_bytes(0, OX_FLOAT8E5M2, 5, want_e5m2_nosat);
	kt_end();

	begin("CastLike", 21, "CastLike float -> float8e4m3fn saturates by default");
	kt_input(OX_FLOAT, 1, D(5), x);
	kt_input(OX_FLOAT8E4M3FN, 1, D(1), (const uint8_t[]) {0});
	kt_run(EW, 1);
	expect_bytes(0, OX_FLOAT8E4M3FN, 5, want_sat);
	kt_end();

	begin("Cast", 24, "Cast float -> float8e8m0 round_mode up (default)");
	kt_attr_int("to", OX_FLOAT8E8M0);
	kt_input(OX_FLOAT, 1, D(5), e8);
	kt_run(EW, 1);
	expect_bytes(0, OX_FLOAT8E8M0, 5, want_up);
	kt_end();

	begin("Cast", 24, "Cast float -> float8e8m0 round_mode down");
	kt_attr_int("to", OX_FLOAT8E8M0);
	kt_attr_string("round_mode", "down");
	kt_input(OX_FLOAT, 1, D(5), e8);
	kt_run(EW, 1);
	expect_bytes(0, OX_FLOAT8E8M0, 5, want_down);
	kt_end();

	begin("Cast", 24, "Cast float -> float8e8m0 round_mode nearest saturate=0");
	kt_attr_int("to", OX_FLOAT8E8M0);
	kt_attr_string("round_mode", "nearest");
	kt_attr_int("saturate", 0);
	kt_input(OX_FLOAT, 1, D(5), e8);
	kt_run(EW, 1);
	expect_bytes(0, OX_FLOAT8E8M0, 5, want_nearest_nosat);
	kt_end();

	begin("Cast", 21, "Cast int4 -> float");
	kt_attr_int("to", OX_FLOAT);
	kt_input(OX_INT4, 1, D(3), i4);
	kt_run(EW, 1);
	kt_expect_f32(0, 1, D(3), i4_f, 0);
	kt_end();

	begin("Cast", 21, "Cast float -> uint2 keeps the low bits");
	kt_attr_int("to", OX_UINT2);
	kt_input(OX_FLOAT, 1, D(3), to_u2);
	kt_run(EW, 1);
	expect_bytes(0, OX_UINT2, 3, want_u2);
	kt_end();

	begin("Cast", 1, "Cast opset 1 to \"FLOAT8E5M2FNUZ\"");
	kt_attr_string("to", "FLOAT8E5M2FNUZ");
	kt_input(OX_FLOAT, 1, D(2), (const float[]) {1.0f, NAN});
	kt_run(EW, 1);
	expect_bytes(0, OX_FLOAT8E5M2FNUZ, 2, (const uint8_t[]) {0x40, 0x80});
	kt_end();

	begin("Cast", 21, "Cast float8e4m3fn -> string");
	kt_attr_int("to", OX_STRING);
	kt_input(OX_FLOAT8E4M3FN, 1, D(3), (const uint8_t[]) {0x7e, 0x30, 0x7f});
	kt_run(EW, 1);
	if (kt_check_shape(0, OX_STRING, 1, D(3)))
	{
		const ox_string *s = kt_output(0)->data;

		check(strcmp(s[0].data, "448.0") == 0 && strcmp(s[1].data, "0.5") == 0 &&
			  strcmp(s[2].data, "nan") == 0, s[0].data, 0, 0);
	}
	kt_end();

	begin("Cast", 21, "Cast string -> float8e4m3fn with saturate=0");
	kt_attr_int("to", OX_FLOAT8E4M3FN);
	kt_attr_int("saturate", 0);
	kt_input_strings(1, D(3), (const char *[]) {"1e6", "-0.5", "INF"});
	kt_run(EW, 1);
	expect_bytes(0, OX_FLOAT8E4M3FN, 3, (const uint8_t[]) {0x7f, 0xb0, 0x7f});
	kt_end();

	begin("Cast", 21, "Cast int4 -> string and string -> int4");
	kt_attr_int("to", OX_STRING);
	kt_input(OX_INT4, 1, D(3), i4);
	kt_run(EW, 1);
	if (kt_check_shape(0, OX_STRING, 1, D(3)))
	{
		const ox_string *s = kt_output(0)->data;

		check(strcmp(s[0].data, "-8") == 0 && strcmp(s[2].data, "-1") == 0, s[0].data, 0, 0);
	}
	kt_end();

	begin("Cast", 21, "Cast saturate=2 is refused");
	kt_attr_int("to", OX_FLOAT8E4M3FN);
	kt_attr_int("saturate", 2);
	kt_input(OX_FLOAT, 1, D(5), x);
	kt_run(EW, 1);
	kt_expect_error(OX_INVALID_ARGUMENT);
	kt_end();

	begin("Cast", 24, "Cast round_mode \"odd\" is refused");
	kt_attr_int("to", OX_FLOAT8E8M0);
	kt_attr_string("round_mode", "odd");
	kt_input(OX_FLOAT, 1, D(5), x);
	kt_run(EW, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	begin("Cast", 21, "Cast to type 27 is refused");
	kt_attr_int("to", 27);
	kt_input(OX_FLOAT, 1, D(5), x);
	kt_run(EW, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();

	begin("Cast", 21, "Cast to complex64 is refused");
	kt_attr_int("to", OX_COMPLEX64);
	kt_input(OX_FLOAT, 1, D(5), x);
	kt_run(EW, 1);
	kt_expect_error(OX_UNSUPPORTED);
	kt_end();
}

/* ---- QuantizeLinear / DequantizeLinear helpers ------------------------------------ */

static void
test_quant_lowbit(void)
{
	static const float x[] = {0.0f, 2.0f, 4.0f, 1e5f, 200.0f, -1e9f};
	static const float scale[] = {2.0f, 4.0f};
	static const int32_t xi[] = {0, 2, 1000000, -3};
	uint8_t		y[6];
	float		f[6];
	int32_t		lo;
	int32_t		hi;
	ox_tensor	zp;
	uint8_t		zb[2];

	begin("quant", 1, "quantize to float8 per tensor, saturating or not");
	ox_quant_lowbit_quantize(y, OX_FLOAT8E4M3FN, x, OX_FLOAT, scale, 0, 6, OX_UNDEFINED, true);
	check_bytes(y, (const uint8_t[]) {0x00, 0x38, 0x40, 0x7e, 0x6c, 0xfe}, 6, "e4m3fn");
	ox_quant_lowbit_quantize(y, OX_FLOAT8E5M2, x, OX_FLOAT, scale, 0, 6, OX_UNDEFINED, false);
	check_bytes(y, (const uint8_t[]) {0x00, 0x3c, 0x40, 0x7a, 0x56, 0xfc}, 6, "e5m2 no saturation");
	kt_end();

	begin("quant", 1, "quantize with a scale step, int32 input, precision");
	ox_quant_lowbit_quantize(y, OX_FLOAT4E2M1, x, OX_FLOAT, scale, 1, 2, OX_UNDEFINED, true);
	check_bytes(y, (const uint8_t[]) {0x0, 0x1}, 2, "float4 scale step");
	ox_quant_lowbit_quantize(y, OX_FLOAT8E4M3FNUZ, xi, OX_INT32, scale, 0, 4, OX_UNDEFINED, true);
	check_bytes(y, (const uint8_t[]) {0x00, 0x40, 0x7f, 0xc4}, 4, "int32 input");
	ox_quant_lowbit_quantize(y, OX_FLOAT8E4M3FN, (const float[]) {2.00390625f}, OX_FLOAT,
							 (const float[]) {1.0f}, 0, 1, OX_FLOAT16, true);
	check(y[0] == 0x40, "precision float16", y[0], 0x40);
	kt_end();

	begin("quant", 1, "dequantize float8 and float4");
	ox_quant_lowbit_dequantize(f, (const uint8_t[]) {0x00, 0x30, 0x38, 0x7e, 0xed}, OX_FLOAT8E4M3FN,
							   scale, 0, 5);
	check(f[0] == 0 && f[1] == 1 && f[2] == 2 && f[3] == 896 && f[4] == -208, "e4m3fn", f[4], -208);
	ox_quant_lowbit_dequantize(f, (const uint8_t[]) {0x2, 0xa, 0x7, 0x1}, OX_FLOAT4E2M1, scale, 1, 2);
	check(f[0] == 2 && f[1] == -4, "float4 scale step", f[1], -4);
	kt_end();

	begin("quant", 1, "ranges, types and zero points");
	check(ox_quant_lowbit_int_range(OX_INT4, &lo, &hi) && lo == -8 && hi == 7, "int4", lo, -8);
	check(ox_quant_lowbit_int_range(OX_UINT2, &lo, &hi) && lo == 0 && hi == 3, "uint2", hi, 3);
	check(!ox_quant_lowbit_int_range(OX_INT8, &lo, &hi), "int8 is not narrow", 0, 0);
	check(ox_quant_lowbit_is_qtype(OX_FLOAT8E5M2FNUZ) && ox_quant_lowbit_is_qtype(OX_INT2) &&
		  !ox_quant_lowbit_is_qtype(OX_FLOAT8E8M0) && !ox_quant_lowbit_is_qtype(OX_UINT8),
		  "qtypes", 0, 0);
	memset(&zp, 0, sizeof(zp));
	zp.dtype = OX_FLOAT8E4M3FN;
	zp.rank = 1;
	zp.dims[0] = 2;
	zp.data = zb;
	zb[0] = 0x00;
	zb[1] = 0x80;
	check(ox_quant_lowbit_check_zero_point(&kt.st, "QuantizeLinear", &zp) == OX_OK, "+0 -0", 0, 0);
	zb[1] = 0x38;
	ox_status_clear(&kt.st);
	check(ox_quant_lowbit_check_zero_point(&kt.st, "QuantizeLinear", &zp) == OX_UNSUPPORTED,
		  "1.0 refused", kt.st.code, OX_UNSUPPORTED);
	zp.dtype = OX_FLOAT8E4M3FNUZ;
	zb[1] = 0x80;
	ox_status_clear(&kt.st);
	check(ox_quant_lowbit_check_zero_point(&kt.st, "DequantizeLinear", &zp) == OX_UNSUPPORTED,
		  "FNUZ NaN refused", kt.st.code, OX_UNSUPPORTED);
	zp.dtype = OX_INT4;
	check(ox_quant_lowbit_check_zero_point(&kt.st, "DequantizeLinear", &zp) == OX_OK,
		  "integer zero points are quant.c's", 0, 0);
	check(ox_quant_lowbit_check_zero_point(&kt.st, "DequantizeLinear", NULL) == OX_OK, "none", 0, 0);
	ox_status_clear(&kt.st);
	kt_end();
}

int
main(void)
{
	test_facts();
	test_encode_tables();
	test_decode();
	test_double_and_half();
	test_other_conversions();
	test_bitcast();
	test_loader();
	test_saver();
	test_cast();
	test_quant_lowbit();
	return kt_summary();
}
