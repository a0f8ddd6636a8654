/*
 * test_load_memory.c
 *	  ox_load_options.max_unpack_bytes: the wire pre-check estimates what
 *	  protobuf-c will allocate and refuses a model beyond the limit before
 *	  unpacking any of it (src/model/loader_tensor.c).  Built by hand here:
 *	  graphs of empty nodes (2 bytes of file, about 200 unpacked each) and a
 *	  packed run of one-byte varints (8 bytes each once unpacked).  Below the
 *	  limit the same bytes get as far as the loader's own checks.
 */
#include "runtime/onnx_engine.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int	failures;
static int	checks;

/* one check: a failure says what, printf-style */
static void
check(int ok, const char *fmt,...)
{
	va_list		ap;

	checks++;
	if (ok)
		return;
	failures++;
	printf("FAIL: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

#define MB ((size_t) 1 << 20)

typedef struct bytes
{
	uint8_t    *data;
	size_t		len;
} bytes;

static void
put(bytes *b, const void *p, size_t n)
{
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static void
put_varint(bytes *b, uint64_t v)
{
	do
	{
		uint8_t		c = (uint8_t) (v & 0x7f);

		v >>= 7;
		if (v)
			c |= 0x80;
		put(b, &c, 1);
	} while (v);
}

/* field's key, then a length and payload */
static void
put_ld(bytes *b, int field, const bytes *payload)
{
	put_varint(b, (uint64_t) field << 3 | 2);
	put_varint(b, payload->len);
	put(b, payload->data, payload->len);
}

/* a ModelProto: ir_version 8, opset 17, and the GraphProto payload given */
static bytes
model_with_graph(const bytes *graph)
{
	static const uint8_t head[] = {0x08, 0x08, 0x42, 0x02, 0x10, 0x11};
	bytes		m = {malloc(graph->len + 64), 0};

	put(&m, head, sizeof(head));
	put_ld(&m, 7, graph);
	return m;
}

static bytes
empty_nodes(size_t n)
{
	bytes		g = {malloc(2 * n), 0};
	bytes		m;

	for (size_t i = 0; i < n; i++)
		put(&g, "\x0a\x00", 2);	/* GraphProto.node, an empty NodeProto */
	m = model_with_graph(&g);
	free(g.data);
	return m;
}

/* an int64 initializer W[n] whose int64_data is a packed run of n one-byte varints */
static bytes
packed_int64s(size_t n)
{
	bytes		t = {malloc(n + 64), 0};
	bytes		run = {calloc(n, 1), n};
	bytes		g = {malloc(n + 128), 0};
	bytes		m;

	put_varint(&t, 1 << 3);		/* dims */
	put_varint(&t, n);
	put(&t, "\x10\x07", 2);		/* data_type int64 */
	put(&t, "\x42\x01W", 3);	/* name */
	put_ld(&t, 7, &run);		/* int64_data, packed */
	put_ld(&g, 5, &t);			/* GraphProto.initializer */
	m = model_with_graph(&g);
	free(t.data);
	free(run.data);
	free(g.data);
	return m;
}

/* the status code of loading b under the limit */
static ox_code
load(const bytes *b, size_t max_unpack, ox_status *st)
{
	ox_load_options o;
	ox_model   *m;

	memset(&o, 0, sizeof(o));
	o.max_unpack_bytes = max_unpack;
	ox_status_clear(st);
	m = ox_model_load(b->data, b->len, &o, st);
	if (m)
	{
		ox_model_free(m);
		return OX_OK;
	}
	return st->code;
}

static int
refused_for_memory(const bytes *b, size_t max_unpack)
{
	ox_status	st;

	return load(b, max_unpack, &st) == OX_LIMIT_EXCEEDED && strstr(st.msg, "unpacking the model") != NULL;
}

static void
check_empty_nodes(void)
{
	bytes		small = empty_nodes(10000);		/* 20 kB, about 2 MB unpacked */
	bytes		big = empty_nodes(100000);		/* 200 kB, about 21 MB */
	ox_status	st;
	ox_code		rc;

	check(refused_for_memory(&big, 16 * MB), "100,000 empty nodes under 16 MB");
	check(refused_for_memory(&big, 1 * MB), "100,000 empty nodes under 1 MB");
	check(refused_for_memory(&small, 1 * MB), "10,000 empty nodes under 1 MB");
	check(!refused_for_memory(&small, 4 * MB), "10,000 empty nodes under 4 MB");
	/* no limit, or one above the estimate: unpacked, then refused for what it is */
	rc = load(&big, 0, &st);
	check(rc == OX_INVALID_MODEL, "100,000 empty nodes without a limit: %s (%s)", ox_code_name(rc), st.msg);
	rc = load(&big, 64 * MB, &st);
	check(rc == OX_INVALID_MODEL, "100,000 empty nodes under 64 MB: %s (%s)", ox_code_name(rc), st.msg);
	free(small.data);
	free(big.data);
}

static void
check_packed_run(void)
{
	bytes		b = packed_int64s(1000000);	/* 1 MB of file, 8 MB unpacked */
	ox_status	st;
	ox_code		rc;

	check(refused_for_memory(&b, 4 * MB), "1,000,000 packed one-byte int64s under 4 MB");
	rc = load(&b, 32 * MB, &st);
	check(rc != OX_LIMIT_EXCEEDED, "1,000,000 packed one-byte int64s under 32 MB: %s (%s)",
		  ox_code_name(rc), st.msg);
	free(b.data);
}

int
main(void)
{
	check_empty_nodes();
	check_packed_run();
	printf("test_load_memory: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
