/*
 * conv_nchwc_avx2.c
 *	  The channel-blocked kernels in blocks of 8 channels, AVX2 and FMA: the templates
 *	  conv_nchwc_kernels.h, conv_nchwc_dw_kernels.h and
 *	  conv_nchwc_group_kernels.h compiled for that
 *	  block (entry points nn_nchwc8_*, called from conv_nchwc.c).
 */
#define NCHWC_BLK 8

#include "kernels/cpu/conv_nchwc.h"
#include "kernels/cpu/conv_nchwc_vec.h"

#include <float.h>
#include <stdio.h>
#include <string.h>

#include "kernels/cpu/conv_nchwc_kernels.h"
#include "kernels/cpu/conv_nchwc_dw_kernels.h"
#include "kernels/cpu/conv_nchwc_group_kernels.h"
