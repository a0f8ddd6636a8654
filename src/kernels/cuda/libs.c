/*
 * libs.c
 *	  Opens cuBLAS and cuDNN when the first CUDA session needs them and
 *	  resolves the functions the provider calls (cuda_libs.h says why they
 *	  are not linked).
 */
#include "kernels/cuda/cuda_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define OX_STR_(x) #x
#define OX_STR(x) OX_STR_(x)

/* the major versions of the headers the provider was compiled against */
#define CUBLAS_SONAME "libcublas.so." OX_STR(CUBLAS_VER_MAJOR)
#define CUDNN_SONAME "libcudnn.so." OX_STR(CUDNN_MAJOR)

ox_cuda_lib_table ox_cuda_lib;

typedef struct lib_symbol
{
	const char *name;
	size_t		offset;			/* of its pointer in ox_cuda_lib_table */
} lib_symbol;

#define OX_CUDA_LIB_SYMBOL(fn) {#fn, offsetof(ox_cuda_lib_table, p_##fn)},
static const lib_symbol cublas_symbols[] = {OX_CUBLAS_FUNCS(OX_CUDA_LIB_SYMBOL)};
static const lib_symbol cudnn_symbols[] = {OX_CUDNN_FUNCS(OX_CUDA_LIB_SYMBOL)};
#undef OX_CUDA_LIB_SYMBOL

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static bool load_ok;
static char load_why[512];

/*
 * Opens soname and fills the pointers of its symbols; on failure, the
 * reason in load_why.  RTLD_NOW: a symbol missing from an older library is
 * an error here, not the dynamic linker ending the process at the call.
 * The handle is never closed: the pointers stay valid for the process.
 */
static bool
open_library(const char *soname, const char *what, const lib_symbol *syms, int n_syms)
{
	void	   *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);

	if (!h)
	{
		const char *e = dlerror();

		snprintf(load_why, sizeof(load_why), "%s could not be loaded (%s)", what,
				 e ? e : soname);
		return false;
	}
	for (int i = 0; i < n_syms; i++)
	{
		void	   *f = dlsym(h, syms[i].name);

		if (!f)
		{
			snprintf(load_why, sizeof(load_why), "%s (%s) lacks %s: a different version than "
					 "onnx_pg was built with", what, soname, syms[i].name);
			return false;
		}
		memcpy((char *) &ox_cuda_lib + syms[i].offset, &f, sizeof(f));
	}
	return true;
}

static void
load_libraries(void)
{
	load_ok = open_library(CUBLAS_SONAME, "cuBLAS", cublas_symbols,
						   (int) (sizeof(cublas_symbols) / sizeof(cublas_symbols[0]))) &&
		open_library(CUDNN_SONAME, "cuDNN", cudnn_symbols,
					 (int) (sizeof(cudnn_symbols) / sizeof(cudnn_symbols[0])));
}

bool
ox_cuda_libs_load(char *why, size_t why_len)
{
	pthread_once(&load_once, load_libraries);
	if (!load_ok && why && why_len)
		snprintf(why, why_len, "%s", load_why);
	return load_ok;
}

const char *
ox_cuda_cublas_soname(void)
{
	return CUBLAS_SONAME;
}

const char *
ox_cuda_cudnn_soname(void)
{
	return CUDNN_SONAME;
}
