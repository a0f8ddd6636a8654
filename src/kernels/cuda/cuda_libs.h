/*
 * cuda_libs.h
 *	  cuBLAS and cuDNN as the provider calls them: through pointers that
 *	  ox_cuda_libs_load() fills from dlopen() when the first session asks
 *	  for CUDA, not through the dynamic linker when the library loads.
 *
 * Why: cuBLAS brings cuBLASLt, a 500 MB library whose loading took 55 to
 * 110 ms on a machine with the toolkit, and PostgreSQL loads onnx_pg into
 * every backend that calls one of its functions.  Linked, every new
 * connection paid it, CPU-only ones included, and a server without the
 * libraries could not load the extension at all.  Opened here, a backend
 * pays it once, when it first builds a CUDA session, and a missing
 * library is a fallback reason, not a failed LOAD.  The CUDA runtime
 * (cudart, under 1 MB) stays linked: the device code's registration runs
 * when the library loads.
 *
 * Include after the CUDA headers (cuda_internal.h): the names below then
 * stand for the loaded pointers, so that the call sites read as the
 * libraries' documentation does.  (cublas_v2.h already maps cublasCreate
 * to cublasCreate_v2, and so on; the _v2 names are the symbols.)
 */
#ifndef OX_CUDA_LIBS_H
#define OX_CUDA_LIBS_H

#include <stdbool.h>
#include <stddef.h>

#define OX_CUBLAS_FUNCS(X) \
	X(cublasCreate_v2) \
	X(cublasDestroy_v2) \
	X(cublasSetStream_v2) \
	X(cublasSetPointerMode_v2) \
	X(cublasSetMathMode) \
	X(cublasGetStatusString) \
	X(cublasGemmStridedBatchedEx)

#define OX_CUDNN_FUNCS(X) \
	X(cudnnCreate) \
	X(cudnnDestroy) \
	X(cudnnSetStream) \
	X(cudnnGetErrorString) \
	X(cudnnCreateTensorDescriptor) \
	X(cudnnDestroyTensorDescriptor) \
	X(cudnnSetTensor4dDescriptor) \
	X(cudnnCreateFilterDescriptor) \
	X(cudnnDestroyFilterDescriptor) \
	X(cudnnSetFilter4dDescriptor) \
	X(cudnnCreateConvolutionDescriptor) \
	X(cudnnDestroyConvolutionDescriptor) \
	X(cudnnSetConvolution2dDescriptor) \
	X(cudnnSetConvolutionGroupCount) \
	X(cudnnSetConvolutionMathType) \
	X(cudnnGetConvolution2dForwardOutputDim) \
	X(cudnnFindConvolutionForwardAlgorithmEx) \
	X(cudnnGetConvolutionForwardAlgorithm_v7) \
	X(cudnnConvolutionForward)

typedef struct ox_cuda_lib_table
{
/* p_ and the name pasted: never expanded by the macros below */
#define OX_CUDA_LIB_POINTER(fn) __typeof__(fn) *p_##fn;
	OX_CUBLAS_FUNCS(OX_CUDA_LIB_POINTER)
	OX_CUDNN_FUNCS(OX_CUDA_LIB_POINTER)
#undef OX_CUDA_LIB_POINTER
} ox_cuda_lib_table;

/* filled by ox_cuda_libs_load(); read only after it returned true */
extern ox_cuda_lib_table ox_cuda_lib;

/* the library file names it opens, for messages and tests */
const char *ox_cuda_cublas_soname(void);
const char *ox_cuda_cudnn_soname(void);

/* from here on, the provider's calls go through the table */
#define cublasCreate_v2 (*ox_cuda_lib.p_cublasCreate_v2)
#define cublasDestroy_v2 (*ox_cuda_lib.p_cublasDestroy_v2)
#define cublasSetStream_v2 (*ox_cuda_lib.p_cublasSetStream_v2)
#define cublasSetPointerMode_v2 (*ox_cuda_lib.p_cublasSetPointerMode_v2)
#define cublasSetMathMode (*ox_cuda_lib.p_cublasSetMathMode)
#define cublasGetStatusString (*ox_cuda_lib.p_cublasGetStatusString)
#define cublasGemmStridedBatchedEx (*ox_cuda_lib.p_cublasGemmStridedBatchedEx)
#define cudnnCreate (*ox_cuda_lib.p_cudnnCreate)
#define cudnnDestroy (*ox_cuda_lib.p_cudnnDestroy)
#define cudnnSetStream (*ox_cuda_lib.p_cudnnSetStream)
#define cudnnGetErrorString (*ox_cuda_lib.p_cudnnGetErrorString)
#define cudnnCreateTensorDescriptor (*ox_cuda_lib.p_cudnnCreateTensorDescriptor)
#define cudnnDestroyTensorDescriptor (*ox_cuda_lib.p_cudnnDestroyTensorDescriptor)
#define cudnnSetTensor4dDescriptor (*ox_cuda_lib.p_cudnnSetTensor4dDescriptor)
#define cudnnCreateFilterDescriptor (*ox_cuda_lib.p_cudnnCreateFilterDescriptor)
#define cudnnDestroyFilterDescriptor (*ox_cuda_lib.p_cudnnDestroyFilterDescriptor)
#define cudnnSetFilter4dDescriptor (*ox_cuda_lib.p_cudnnSetFilter4dDescriptor)
#define cudnnCreateConvolutionDescriptor (*ox_cuda_lib.p_cudnnCreateConvolutionDescriptor)
#define cudnnDestroyConvolutionDescriptor (*ox_cuda_lib.p_cudnnDestroyConvolutionDescriptor)
#define cudnnSetConvolution2dDescriptor (*ox_cuda_lib.p_cudnnSetConvolution2dDescriptor)
#define cudnnSetConvolutionGroupCount (*ox_cuda_lib.p_cudnnSetConvolutionGroupCount)
#define cudnnSetConvolutionMathType (*ox_cuda_lib.p_cudnnSetConvolutionMathType)
#define cudnnGetConvolution2dForwardOutputDim (*ox_cuda_lib.p_cudnnGetConvolution2dForwardOutputDim)
#define cudnnFindConvolutionForwardAlgorithmEx (*ox_cuda_lib.p_cudnnFindConvolutionForwardAlgorithmEx)
#define cudnnGetConvolutionForwardAlgorithm_v7 (*ox_cuda_lib.p_cudnnGetConvolutionForwardAlgorithm_v7)
#define cudnnConvolutionForward (*ox_cuda_lib.p_cudnnConvolutionForward)

#endif							/* OX_CUDA_LIBS_H */
