/* SPDX-License-Identifier: MIT */
/* reduce.cl: clreduce's program for one element type and operation:
 *   -D PRIM_TYPE=n -D PRIM_OP=n   the element type and operation (elem.h)
 * Its kernels reduce n elements of x from off in one pass, each layout its way
 * (reduce.cpp says which device takes which):
 *   stdcl_reduce_chunked  a work-item a group, each a contiguous chunk, 8-wide
 *   stdcl_reduce_strided  work-item i reads 16-byte vectors i, i + G, i + 2G...
 *                         (G the global size), then a tree in local memory
 * Each group publishes its fold in state (a ticket counter, 8 bytes, then a
 * tagged value per group: tagged.h); the group that takes the last ticket folds
 * them all, in group order, into result[0] and resets the counter for the next
 * call: the host reads one value a device. */
#include "elem.h"
#include "common.h"
#include "tagged.h"

// T8: 8 elements; TV: the 16-byte vector of VW elements.
#if SWORDS == 2
#define VW 2
#define FOLDV(v) OP((v).s0, (v).s1)
#else
#define VW 4
#define FOLDV(v) OP(OP((v).s0, (v).s1), OP((v).s2, (v).s3))
#endif
#define T8 CAT(T, 8)
#define TV CAT(T, VW)
#define FOLD8(v) OP(OP(OP((v).s0, (v).s1), OP((v).s2, (v).s3)), OP(OP((v).s4, (v).s5), OP((v).s6, (v).s7)))
// OP on vectors: sums add lane by lane (wrapping as the hardware does).
#if PRIM_OP == PRIM_SUM
#define VOP(a, b) ((a) + (b))
#else
#define VOP(a, b) OP(a, b)
#endif

// The local tree: scratch[0] = the fold of scratch[0 .. get_local_size(0)), a
// power of two, each work-item's value stored and a barrier passed before.
inline void group_fold(__local T* scratch)
{
    uint lid = get_local_id(0);
    for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (lid < s) scratch[lid] = OP(scratch[lid], scratch[lid + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

// The group's fold v (work-item 0's) published; the last group to finish folds
// every group's into *result.  It waits only for groups that took their
// tickets, so never for a group not yet running.
inline void finish(T v, __global uint* state, uint epoch, __global T* result, __local T* scratch, __local uint* last)
{
    uint lid = get_local_id(0), ls = get_local_size(0), groups = get_num_groups(0);
    volatile __global ulong* sw = (volatile __global ulong*)state + 1;
    if (lid == 0) {
        sw_publish(sw, get_group_id(0), PRIM_TAG(epoch, PRIM_LB_FOLD), v);
        uint t = atomic_inc(state);
        *last = t == groups - 1;
        if (t == groups - 1) atomic_xchg(state, 0u);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!*last) return;
    T a = ID;
    for (uint g = lid; g < groups; g += ls) {
        T w = ID;
        while (sw_peek(sw, g, epoch, &w) == 0)
            ;
        a = OP(a, w);
    }
    scratch[lid] = a;
    barrier(CLK_LOCAL_MEM_FENCE);
    group_fold(scratch);
    if (lid == 0) *result = scratch[0];
}

// CPUs: work-item g (a group of one) reduces x[g * chunk, (g + 1) * chunk).
__kernel void stdcl_reduce_chunked(__global const T* x, ulong off, ulong n, ulong chunk, __global uint* state,
                                   uint epoch, __global T* result, __local T* scratch)
{
    __local uint last;
    x += off;
    ulong gid = get_global_id(0);
    ulong b = gid * chunk, e = min(b + chunk, n);
    T8 v0 = (T8)(ID), v1 = (T8)(ID);
    ulong i = b;
    for (; i + 16 <= e; i += 16) {
        v0 = VOP(v0, vload8(0, x + i));
        v1 = VOP(v1, vload8(0, x + i + 8));
    }
    v0 = VOP(v0, v1);
    T a = FOLD8(v0);
    for (; i < e; ++i) a = OP(a, x[i]);
    finish(a, state, epoch, result, scratch, &last);
}

// GPUs: 16-byte loads from the first 16-byte boundary (head: the elements before
// it), two in flight a work-item, coalesced; the elements after the last whole
// vector one by one.
__kernel void stdcl_reduce_strided(__global const T* x, ulong off, ulong n, ulong head, __global uint* state,
                                   uint epoch, __global T* result, __local T* scratch)
{
    __local uint last;
    x += off;
    ulong gs = get_global_size(0);
    ulong gid = get_global_id(0);
    T a = gid < head ? x[gid] : ID;
    __global const TV* v = (__global const TV*)(x + head);
    ulong nv = (n - head) / VW;
    TV b0 = (TV)(ID), b1 = (TV)(ID);
    ulong i = gid;
    for (; i + gs < nv; i += 2 * gs) {
        b0 = VOP(b0, v[i]);
        b1 = VOP(b1, v[i + gs]);
    }
    if (i < nv) b0 = VOP(b0, v[i]);
    b0 = VOP(b0, b1);
    a = OP(a, FOLDV(b0));
    ulong t = head + nv * VW;
    if (gid < n - t) a = OP(a, x[t + gid]);
    uint lid = get_local_id(0);
    scratch[lid] = a;
    barrier(CLK_LOCAL_MEM_FENCE);
    group_fold(scratch);
    T g = scratch[0];
    finish(g, state, epoch, result, scratch, &last);
}
