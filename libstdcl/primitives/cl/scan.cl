/* SPDX-License-Identifier: MIT */
/* scan.cl: clscan's program, the scans of one element type and operation in
 * one layout, chosen when it is built:
 *   -D PRIM_TYPE=n      PRIM_FLOAT ... PRIM_ULONG (protocol.h)
 *   -D PRIM_OP=n        PRIM_SUM, PRIM_MIN or PRIM_MAX
 *   -D STDCL_LAYOUT_GPU=1 or 0
 * Its kernels are scan_body.h's, named stdcl_scan_<kernel>_<type>_<op>_<gpu|cpu>
 * (stdcl_scan_reduce_int_sum_gpu ...).  Integer sums wrap (done in the
 * unsigned type); floating-point minimum and maximum skip NaNs (fmin, fmax). */
#include "protocol.h"
#if PRIM_TYPE == PRIM_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#include "common.h"

#if PRIM_TYPE == PRIM_FLOAT
#define T float
#define T_LO (-INFINITY)
#define T_HI INFINITY
#elif PRIM_TYPE == PRIM_DOUBLE
#define T double
#define T_LO (-(double)INFINITY)
#define T_HI ((double)INFINITY)
#elif PRIM_TYPE == PRIM_INT
#define T int
#define T_LO INT_MIN
#define T_HI INT_MAX
#define T_SUM(a, b) ((int)((uint)(a) + (uint)(b)))
#elif PRIM_TYPE == PRIM_LONG
#define T long
#define T_LO LONG_MIN
#define T_HI LONG_MAX
#define T_SUM(a, b) ((long)((ulong)(a) + (ulong)(b)))
#elif PRIM_TYPE == PRIM_UINT
#define T uint
#define T_LO 0u
#define T_HI UINT_MAX
#elif PRIM_TYPE == PRIM_ULONG
#define T ulong
#define T_LO 0ul
#define T_HI ULONG_MAX
#else
#error "scan.cl: -D PRIM_TYPE= one of protocol.h's element types"
#endif

#if PRIM_TYPE == PRIM_DOUBLE || PRIM_TYPE == PRIM_LONG || PRIM_TYPE == PRIM_ULONG
#define SWORDS 2
#define SITEMS SCAN_ITEMS_8
#else
#define SWORDS 1
#define SITEMS SCAN_ITEMS_4
#endif
#if PRIM_TYPE == PRIM_FLOAT || PRIM_TYPE == PRIM_DOUBLE
#define T_MIN(a, b) fmin((a), (b))
#define T_MAX(a, b) fmax((a), (b))
#else
#define T_MIN(a, b) min((a), (b))
#define T_MAX(a, b) max((a), (b))
#endif
#ifndef T_SUM
#define T_SUM(a, b) ((a) + (b))
#endif

#if PRIM_OP == PRIM_SUM
#define OP(a, b) T_SUM(a, b)
#define ID ((T)0)
#define SFX CAT(T, _sum)
#elif PRIM_OP == PRIM_MIN
#define OP(a, b) T_MIN(a, b)
#define ID T_HI
#define SFX CAT(T, _min)
#elif PRIM_OP == PRIM_MAX
#define OP(a, b) T_MAX(a, b)
#define ID T_LO
#define SFX CAT(T, _max)
#else
#error "scan.cl: -D PRIM_OP= PRIM_SUM, PRIM_MIN or PRIM_MAX"
#endif

#include "scan_body.h"
