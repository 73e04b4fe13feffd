/* SPDX-License-Identifier: MIT */
/* elem.h: the element type and operation of a clscan or clreduce program,
 * from its build options:
 *   -D PRIM_TYPE=n      PRIM_FLOAT ... PRIM_ULONG (protocol.h)
 *   -D PRIM_OP=n        PRIM_SUM, PRIM_MIN or PRIM_MAX
 * It defines T (the type), SWORDS (its 32-bit words), OP(a, b) and ID (the
 * operation and its identity).  Integer sums wrap (done in the unsigned type);
 * floating-point minimum and maximum skip NaNs (fmin, fmax), as the host's
 * fold does (prims.cpp: prim_combine). */
#ifndef STDCL_PRIM_ELEM_H
#define STDCL_PRIM_ELEM_H
#include "protocol.h"

#if PRIM_TYPE == PRIM_FLOAT
#define T float
#define T_LO (-INFINITY)
#define T_HI INFINITY
#elif PRIM_TYPE == PRIM_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
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
#error "-D PRIM_TYPE= one of protocol.h's element types"
#endif

#if PRIM_TYPE == PRIM_DOUBLE || PRIM_TYPE == PRIM_LONG || PRIM_TYPE == PRIM_ULONG
#define SWORDS 2
#else
#define SWORDS 1
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
#elif PRIM_OP == PRIM_MIN
#define OP(a, b) T_MIN(a, b)
#define ID T_HI
#elif PRIM_OP == PRIM_MAX
#define OP(a, b) T_MAX(a, b)
#define ID T_LO
#else
#error "-D PRIM_OP= PRIM_SUM, PRIM_MIN or PRIM_MAX"
#endif
#endif
