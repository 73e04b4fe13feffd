/* SPDX-License-Identifier: MIT */
/* reduce.cl: clreduce's program for one element type:
 *   -D PRIM_TYPE=n      PRIM_FLOAT ... PRIM_ULONG (protocol.h)
 * It holds both layouts' kernels of the three operations:
 * stdcl_reduce_<type>_<sum|min|max>_<chunked|strided>. */
#include "protocol.h"
#if PRIM_TYPE == PRIM_DOUBLE
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
// The kernels: DEF(T, T8, name, op name, op, identity) makes both layouts.
#define R_SUM(a, b) ((a) + (b))
/* Floating-point minimum and maximum skip NaNs (fmin, fmax), as clscan's do. */
#if PRIM_TYPE == PRIM_FLOAT || PRIM_TYPE == PRIM_DOUBLE
#define R_MIN(a, b) fmin((a), (b))
#define R_MAX(a, b) fmax((a), (b))
#else
#define R_MIN(a, b) min((a), (b))
#define R_MAX(a, b) max((a), (b))
#endif
#define R_FOLD4(OP, v) OP(OP((v).s0, (v).s1), OP((v).s2, (v).s3))
#define R_FOLD2(OP, v) OP((v).s0, (v).s1)
#define R_FOLD8(OP, v) OP(OP(OP((v).s0, (v).s1), OP((v).s2, (v).s3)), OP(OP((v).s4, (v).s5), OP((v).s6, (v).s7)))
#define DEF(T, T8, TV, VW, NAME, OPN, OP, ID) \
__kernel void stdcl_reduce_##NAME##_##OPN##_chunked(__global const T* x, ulong off, ulong n, ulong chunk, \
                                                   __global T* part, __local T* scratch) \
{ \
    (void)scratch; \
    x += off; \
    ulong gid = get_global_id(0); \
    ulong b = gid * chunk, e = min(b + chunk, n); \
    T8 v0 = (T8)(ID), v1 = (T8)(ID); \
    ulong i = b; \
    for (; i + 16 <= e; i += 16) { \
        v0 = OP(v0, vload8(0, x + i)); \
        v1 = OP(v1, vload8(0, x + i + 8)); \
    } \
    v0 = OP(v0, v1); \
    T a = R_FOLD8(OP, v0); \
    for (; i < e; ++i) a = OP(a, x[i]); \
    part[gid] = a; \
} \
__kernel void stdcl_reduce_##NAME##_##OPN##_strided(__global const T* x, ulong off, ulong n, ulong head, \
                                                   __global T* part, __local T* scratch) \
{ \
    x += off; \
    ulong gs = get_global_size(0); \
    ulong gid = get_global_id(0); \
    T a = gid < head ? x[gid] : ID; \
    __global const TV* v = (__global const TV*)(x + head); \
    ulong nv = (n - head) / VW; \
    TV b0 = (TV)(ID), b1 = (TV)(ID); \
    ulong i = gid; \
    for (; i + gs < nv; i += 2 * gs) { \
        b0 = OP(b0, v[i]); \
        b1 = OP(b1, v[i + gs]); \
    } \
    if (i < nv) b0 = OP(b0, v[i]); \
    b0 = OP(b0, b1); \
    a = OP(a, FOLDV(OP, b0)); \
    ulong t = head + nv * VW; \
    if (gid < n - t) a = OP(a, x[t + gid]); \
    uint lid = get_local_id(0); \
    scratch[lid] = a; \
    barrier(CLK_LOCAL_MEM_FENCE); \
    for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) { \
        if (lid < s) scratch[lid] = OP(scratch[lid], scratch[lid + s]); \
        barrier(CLK_LOCAL_MEM_FENCE); \
    } \
    if (lid == 0) part[get_group_id(0)] = scratch[0]; \
}
#define DEF3(T, T8, TV, VW, NAME, LO, HI) \
    DEF(T, T8, TV, VW, NAME, sum, R_SUM, (T)0) DEF(T, T8, TV, VW, NAME, min, R_MIN, HI) \
    DEF(T, T8, TV, VW, NAME, max, R_MAX, LO)

#if PRIM_TYPE == PRIM_FLOAT
#define FOLDV R_FOLD4
DEF3(float, float8, float4, 4, float, (-INFINITY), INFINITY)
#elif PRIM_TYPE == PRIM_DOUBLE
#define FOLDV R_FOLD2
DEF3(double, double8, double2, 2, double, (-(double)INFINITY), (double)INFINITY)
#elif PRIM_TYPE == PRIM_INT
#define FOLDV R_FOLD4
DEF3(int, int8, int4, 4, int, INT_MIN, INT_MAX)
#elif PRIM_TYPE == PRIM_LONG
#define FOLDV R_FOLD2
DEF3(long, long8, long2, 2, long, LONG_MIN, LONG_MAX)
#elif PRIM_TYPE == PRIM_UINT
#define FOLDV R_FOLD4
DEF3(uint, uint8, uint4, 4, uint, 0u, UINT_MAX)
#elif PRIM_TYPE == PRIM_ULONG
#define FOLDV R_FOLD2
DEF3(ulong, ulong8, ulong2, 2, ulong, 0ul, ULONG_MAX)
#else
#error "reduce.cl: -D PRIM_TYPE= one of protocol.h's element types"
#endif
