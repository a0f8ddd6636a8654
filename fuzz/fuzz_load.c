/*
 * fuzz_load.c
 *	  libFuzzer target: model bytes through load, kernel check and session
 *	  creation (optimizer passes, constant folding, kernel prepare).
 *
 * Every input must end in a status, never in a crash, a sanitizer report, a
 * leak or an allocation beyond libFuzzer's malloc limit.  Build and run with
 * fuzz/Makefile (make -C fuzz run-load).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/onnx_engine.h"

/*
 * a model bigger than this is refused by the loader (onnx.max_model_size),
 * and one that would unpack into more than the second (onnx.max_load_memory)
 */
#define FUZZ_MAX_MODEL_BYTES (1 << 20)
#define FUZZ_MAX_UNPACK_BYTES (64 << 20)

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ox_load_options lopts;
	ox_session_options sopts;
	ox_status	st;
	ox_model   *m;
	ox_session *s;

	memset(&lopts, 0, sizeof(lopts));
	lopts.max_model_bytes = FUZZ_MAX_MODEL_BYTES;
	lopts.max_unpack_bytes = FUZZ_MAX_UNPACK_BYTES;
	ox_status_clear(&st);
	m = ox_model_load(data, size, &lopts, &st);
	if (m == NULL)
	{
		/* a failed load must say why, and cannot-happen cases are bugs */
		if (st.code == OX_OK || st.code == OX_INTERNAL)
			abort();
		return 0;
	}
	if (ox_model_check_kernels(m, &st) != OX_OK)
	{
		ox_model_free(m);
		return 0;
	}
	/* what the PostgreSQL layer does at load: build (and free) a CPU session */
	memset(&sopts, 0, sizeof(sopts));
	sopts.intra_op_threads = 1;
	sopts.opt_level = (ox_opt_level) (size % 4);	/* every optimization level */
	sopts.providers = "cpu";
	sopts.max_run_memory = 64 << 20;
	ox_status_clear(&st);
	s = ox_session_create(m, &sopts, &st);
	if (s == NULL)
	{
		/* a failure must say why, and cannot-happen cases are bugs */
		if (st.code == OX_OK || st.code == OX_INTERNAL)
			abort();
		return 0;
	}
	ox_session_free(s);
	return 0;
}
