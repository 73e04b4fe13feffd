/* SPDX-License-Identifier: MIT */
/* SPDX-License-Identifier: MIT */
/* nbody_kern.cl: the NBody kernels (direct O(N^2) gravity, one time step).
 *
 * Bodies are float4 (x, y, z, mass).  One step, for every body i:
 *     a_i = sum_j m_j (r_j - r_i) / (|r_j - r_i|^2 + eps)^(3/2)
 *     r_i' = r_i + dt v_i + dt^2/2 a_i,    v_i' = v_i + dt a_i
 * (eps is the softening length squared).  Positions are double-buffered:
 * a step reads pos_old and writes pos_new, as in the tutorial.
 *
 * Kernels:
 *   nbody_kern       the tutorial's one-device kernel, same arguments:
 *                    (dt, eps, pos_old, pos_new, vel, pblock).
 *   nbody_kern_multi one device's share of a k-device step, launched once per
 *                    source block of positions (dt, eps, pos_old, pos_new,
 *                    vel, pblock, pos_remote, acc, mode): the tutorial's
 *                    local/remote kernel generalised to k blocks.  Each
 *                    launch sums one block's pull from zero; acc carries the
 *                    sum between launches; the NBODY_LAST launch updates.
 *   nbody_info       writes the variant's shape so the host sizes the launch.
 *
 * Two implementations of the force loop, chosen by the device type macro that
 * clopen defines (-D __GPU__ or -D __CPU__):
 *   GPU: the tutorial's tiling through __local memory, tuned for NVIDIA
 *        Hopper: NBODY_IPT bodies per work-item (each tile entry read from
 *        local memory feeds IPT interactions), the tile loop unrolled by
 *        hand NBODY_UNROLL times, one MUFU.RSQ per interaction (rsqrt with
 *        -cl-fast-relaxed-math), and NBODY_JSPLIT work-items sharing one
 *        body's j range (more work-items when a device has few bodies).
 *        The inner loop is 12 FP32 operations + 1 rsqrt + ~0.4 local load
 *        and loop overhead per interaction (13.4 instructions in SASS).
 *   CPU: no local memory; each work-item owns NBODY_VEC bodies held across
 *        the lanes of floatN vectors (structure of arrays: x, y, z each a
 *        float16) and loops over all j with the j body broadcast.  PoCL's
 *        work-group vectoriser cannot vectorise the tutorial kernel's
 *        inner loop (it vectorises across work-items only in innermost
 *        loops), but explicit vector types compile straight to AVX-512:
 *        vsubps/vfmadd/vrsqrt14ps on zmm registers, 16 interactions each.
 * Force a variant with -D NBODY_FORCE_GPU or -D NBODY_FORCE_CPU.
 *
 * Launch shape (the host reads it from nbody_info):
 *   work-items = nbodies / BPW * JSPLIT, where BPW = bodies per work-item;
 *   nbodies must be a multiple of BPW * local size (the host pads with
 *   zero-mass bodies).  GPU: the tile is the work-group; the host passes
 *   -D NBODY_WG=<local size>, which fixes the tile size at compile time
 *   (reqd_work_group_size), and the local size must be a multiple of
 *   NBODY_JSPLIT * NBODY_UNROLL.
 *
 * Measured (bench/run_nbody.sh): H200 ~1.93e12 - 2.03e12 interactions/s for
 * N = 65536 .. 1048576 (1.20x - 1.29x the plain CUDA port); 2-core Zen 4
 * PoCL 3.1 ~7.0e9 (1.35x g++ -O3 -march=native -ffast-math -fopenmp).
 */

/* ------------------------------------------------------------------------ */
/* Variant selection and tuning knobs (all overridable with -D)              */
/* ------------------------------------------------------------------------ */

#if defined(NBODY_FORCE_CPU)
#define NBODY_CPU_KERNEL 1
#elif defined(NBODY_FORCE_GPU)
#define NBODY_CPU_KERNEL 0
#elif defined(__CPU__)
#define NBODY_CPU_KERNEL 1
#else
#define NBODY_CPU_KERNEL 0
#endif

/* Local size known at compile time (0: read get_local_size at run time). */
#ifndef NBODY_WG
#define NBODY_WG 0
#endif

/* GPU tuning.  Defaults for NVIDIA from a sweep on one H200 (raw OpenCL
 * baseline, N = 65536 .. 1048576; bench/run_nbody.sh --sweep repeats it):
 * every variant with >= 2 bodies per work-item and enough work-items lands
 * at 1.93e12 - 2.03e12 interactions/s; IPT=2, UNROLL=8, JSPLIT=4 was within
 * 1% of the best at every size.  Other GPUs: the tutorial's shape. */

/* GPU: bodies per work-item (1, 2, 4 or 8). */
#ifndef NBODY_IPT
#if defined(__NVIDIA__)
#define NBODY_IPT 2
#else
#define NBODY_IPT 1
#endif
#endif

/* GPU: unrolling of the loop over a tile slice (1, 2, 4, 8 or 16; must
 * divide local size / NBODY_JSPLIT). */
#ifndef NBODY_UNROLL
#if defined(__NVIDIA__)
#define NBODY_UNROLL 8
#else
#define NBODY_UNROLL 4
#endif
#endif

/* GPU: work-items sharing the j range of one body (1, 2, 4, 8; must divide
 * the local size).  Splitting keeps the GPU full when a device has few
 * bodies (nbody_multi's blocks) at the cost of one reduction at the end. */
#ifndef NBODY_JSPLIT
#if defined(__NVIDIA__)
#define NBODY_JSPLIT 4
#else
#define NBODY_JSPLIT 1
#endif
#endif

/* CPU: bodies per work-item = SIMD lanes (4, 8 or 16). */
#ifndef NBODY_VEC
#define NBODY_VEC 16
#endif

/* CPU: unrolling of the j loop (1, 2 or 4). */
#ifndef NBODY_CPU_UNROLL
#define NBODY_CPU_UNROLL 2
#endif

/* Reciprocal square root: 0 = rsqrt, 1 = native_rsqrt, 2 = 1/sqrt.
 * GPU default 0: on NVIDIA with -cl-fast-relaxed-math, rsqrt is one
 * MUFU.RSQ (rsqrt.approx.ftz, ~2^-22 relative error), while native_rsqrt
 * becomes the non-ftz rsqrt.approx with subnormal fix-ups (measured 17%
 * slower on H200).  CPU default 2: with -cl-fast-relaxed-math LLVM turns
 * 1/sqrt into vrsqrt14ps + one Newton step, where PoCL's rsqrt and
 * native_rsqrt stay vsqrtps + vdivps. */
#ifndef NBODY_RSQRT
#if NBODY_CPU_KERNEL
#define NBODY_RSQRT 2
#else
#define NBODY_RSQRT 0
#endif
#endif

#if NBODY_RSQRT == 1
#define NB_RSQRT(x) native_rsqrt(x)
#elif NBODY_RSQRT == 2
#define NB_RSQRT(x) (1.0f / sqrt(x))
#else
#define NB_RSQRT(x) rsqrt(x)
#endif

/* Flags of nbody_kern_multi's `mode` argument. */
#define NBODY_FIRST 1 /* the first block of the step: start from a = 0 */
#define NBODY_LAST  2 /* the last block: update and write pos_new, vel */

/* ------------------------------------------------------------------------ */
/* Integration step shared by both variants                                  */
/* ------------------------------------------------------------------------ */

/* Kick-drift as in the tutorial: r += dt v + dt^2/2 a; v += dt a.  The mass
 * (w) is carried through unchanged. */
#define NB_UPDATE(p, v, a, dt)                                               \
    do {                                                                     \
        (p).xyz += (dt) * (v).xyz + (0.5f * (dt) * (dt)) * (a).xyz;          \
        (v).xyz += (dt) * (a).xyz;                                           \
    } while (0)

#if NBODY_CPU_KERNEL
/* ======================================================================== */
/* CPU variant: NBODY_VEC bodies per work-item in the lanes of floatN         */
/* ======================================================================== */

#if NBODY_VEC == 16
typedef float16 vecf;
#define NB_VLOAD vload16
#elif NBODY_VEC == 8
typedef float8 vecf;
#define NB_VLOAD vload8
#elif NBODY_VEC == 4
typedef float4 vecf;
#define NB_VLOAD vload4
#else
#error "NBODY_VEC must be 4, 8 or 16"
#endif

/* Structure-of-arrays view of NBODY_VEC consecutive float4 bodies. */
typedef struct { vecf x, y, z, w; } soa4;

/* Loads bodies p[0..VEC-1] (float4 each) transposed into lanes. */
static inline soa4 soa_load(__global const float4* p)
{
    soa4 s;
    __global const float* f = (__global const float*)p;
#if NBODY_VEC == 16
    float16 a = vload16(0, f), b = vload16(1, f), c = vload16(2, f),
            d = vload16(3, f);
    s.x = (float16)(a.s048c, b.s048c, c.s048c, d.s048c);
    s.y = (float16)(a.s159d, b.s159d, c.s159d, d.s159d);
    s.z = (float16)(a.s26ae, b.s26ae, c.s26ae, d.s26ae);
    s.w = (float16)(a.s37bf, b.s37bf, c.s37bf, d.s37bf);
#elif NBODY_VEC == 8
    float16 a = vload16(0, f), b = vload16(1, f);
    s.x = (float8)(a.s048c, b.s048c);
    s.y = (float8)(a.s159d, b.s159d);
    s.z = (float8)(a.s26ae, b.s26ae);
    s.w = (float8)(a.s37bf, b.s37bf);
#else
    float16 a = vload16(0, f);
    s.x = a.s048c;
    s.y = a.s159d;
    s.z = a.s26ae;
    s.w = a.s37bf;
#endif
    return s;
}

/* Stores lanes back as NBODY_VEC consecutive float4 bodies. */
static inline void soa_store(__global float4* p, soa4 s)
{
    __global float* f = (__global float*)p;
#if NBODY_VEC == 16
    vstore16((float16)(s.x.s0, s.y.s0, s.z.s0, s.w.s0, s.x.s1, s.y.s1, s.z.s1, s.w.s1,
                       s.x.s2, s.y.s2, s.z.s2, s.w.s2, s.x.s3, s.y.s3, s.z.s3, s.w.s3), 0, f);
    vstore16((float16)(s.x.s4, s.y.s4, s.z.s4, s.w.s4, s.x.s5, s.y.s5, s.z.s5, s.w.s5,
                       s.x.s6, s.y.s6, s.z.s6, s.w.s6, s.x.s7, s.y.s7, s.z.s7, s.w.s7), 1, f);
    vstore16((float16)(s.x.s8, s.y.s8, s.z.s8, s.w.s8, s.x.s9, s.y.s9, s.z.s9, s.w.s9,
                       s.x.sa, s.y.sa, s.z.sa, s.w.sa, s.x.sb, s.y.sb, s.z.sb, s.w.sb), 2, f);
    vstore16((float16)(s.x.sc, s.y.sc, s.z.sc, s.w.sc, s.x.sd, s.y.sd, s.z.sd, s.w.sd,
                       s.x.se, s.y.se, s.z.se, s.w.se, s.x.sf, s.y.sf, s.z.sf, s.w.sf), 3, f);
#elif NBODY_VEC == 8
    vstore16((float16)(s.x.s0, s.y.s0, s.z.s0, s.w.s0, s.x.s1, s.y.s1, s.z.s1, s.w.s1,
                       s.x.s2, s.y.s2, s.z.s2, s.w.s2, s.x.s3, s.y.s3, s.z.s3, s.w.s3), 0, f);
    vstore16((float16)(s.x.s4, s.y.s4, s.z.s4, s.w.s4, s.x.s5, s.y.s5, s.z.s5, s.w.s5,
                       s.x.s6, s.y.s6, s.z.s6, s.w.s6, s.x.s7, s.y.s7, s.z.s7, s.w.s7), 1, f);
#else
    vstore16((float16)(s.x.s0, s.y.s0, s.z.s0, s.w.s0, s.x.s1, s.y.s1, s.z.s1, s.w.s1,
                       s.x.s2, s.y.s2, s.z.s2, s.w.s2, s.x.s3, s.y.s3, s.z.s3, s.w.s3), 0, f);
#endif
}

/* One j body acting on the VEC bodies of this work-item. */
#define NB_CPU_INTERACT(q)                                                   \
    do {                                                                     \
        vecf dx = (q).x - px, dy = (q).y - py, dz = (q).z - pz;              \
        vecf r2 = fma(dx, dx, fma(dy, dy, fma(dz, dz, eps4)));               \
        vecf inv = NB_RSQRT(r2);                                             \
        vecf f = ((q).w * inv) * (inv * inv);                                \
        tx = fma(f, dx, tx);                                                 \
        ty = fma(f, dy, ty);                                                 \
        tz = fma(f, dz, tz);                                                 \
    } while (0)

/* Accumulates the pull of pj[0..nj-1] on the bodies in (px, py, pz), in
 * chunks of NB_CPU_CHUNK j bodies each summed from zero (see the GPU
 * variant's NB_GPU_ACCUMULATE for why). */
#define NB_CPU_CHUNK 256
#define NB_CPU_ACCUMULATE(pj, nj)                                            \
    do {                                                                     \
        const vecf eps4 = (vecf)(eps);                                       \
        for (int jc = 0; jc < (nj); jc += NB_CPU_CHUNK) {                    \
            const int je = min(jc + NB_CPU_CHUNK, (int)(nj));                \
            vecf tx = (vecf)(0.0f), ty = (vecf)(0.0f), tz = (vecf)(0.0f);    \
            int j = jc;                                                      \
            for (; j + NBODY_CPU_UNROLL <= je; j += NBODY_CPU_UNROLL) {      \
                float4 q0 = (pj)[j];                                         \
                NB_CPU_INTERACT(q0);                                         \
                if (NBODY_CPU_UNROLL >= 2) {                                 \
                    float4 q1 = (pj)[j + 1];                                 \
                    NB_CPU_INTERACT(q1);                                     \
                }                                                            \
                if (NBODY_CPU_UNROLL >= 4) {                                 \
                    float4 q2 = (pj)[j + 2];                                 \
                    NB_CPU_INTERACT(q2);                                     \
                    float4 q3 = (pj)[j + 3];                                 \
                    NB_CPU_INTERACT(q3);                                     \
                }                                                            \
            }                                                                \
            for (; j < je; j++) {                                            \
                float4 q0 = (pj)[j];                                         \
                NB_CPU_INTERACT(q0);                                         \
            }                                                                \
            ax += tx;                                                        \
            ay += ty;                                                        \
            az += tz;                                                        \
        }                                                                    \
    } while (0)

/* Update of VEC bodies held in lanes. */
#define NB_CPU_UPDATE(ps, vs, dt)                                            \
    do {                                                                     \
        const float hdt2 = 0.5f * (dt) * (dt);                               \
        (ps).x += (dt) * (vs).x + hdt2 * ax;                                 \
        (ps).y += (dt) * (vs).y + hdt2 * ay;                                 \
        (ps).z += (dt) * (vs).z + hdt2 * az;                                 \
        (vs).x += (dt) * ax;                                                 \
        (vs).y += (dt) * ay;                                                 \
        (vs).z += (dt) * az;                                                 \
    } while (0)

__kernel void nbody_kern(float dt1, float eps,
                         __global const float4* pos_old,
                         __global float4* pos_new,
                         __global float4* vel,
                         __local float4* pblock)
{
    const int i0 = get_global_id(0) * NBODY_VEC;
    const int n = get_global_size(0) * NBODY_VEC;
    (void)pblock;

    soa4 ps = soa_load(pos_old + i0);
    const vecf px = ps.x, py = ps.y, pz = ps.z;
    vecf ax = (vecf)(0.0f), ay = (vecf)(0.0f), az = (vecf)(0.0f);

    NB_CPU_ACCUMULATE(pos_old, n);

    soa4 vs = soa_load(vel + i0);
    NB_CPU_UPDATE(ps, vs, dt1);
    soa_store(pos_new + i0, ps);
    soa_store(vel + i0, vs);
}

__kernel void nbody_kern_multi(float dt1, float eps,
                               __global const float4* pos_old,
                               __global float4* pos_new,
                               __global float4* vel,
                               __local float4* pblock,
                               __global const float4* pos_remote,
                               __global float4* acc,
                               int mode)
{
    const int i0 = get_global_id(0) * NBODY_VEC;
    const int n = get_global_size(0) * NBODY_VEC; /* every block is this size */
    (void)pblock;

    soa4 ps = soa_load(pos_old + i0);
    const vecf px = ps.x, py = ps.y, pz = ps.z;
    vecf ax = (vecf)(0.0f), ay = (vecf)(0.0f), az = (vecf)(0.0f);

    /* This block's pull is summed from zero and only then added to the
     * other blocks' (as the GPU variant does): adding a far block's many
     * small, similar terms one by one to a large partial sum would round
     * them all the same way. */
    NB_CPU_ACCUMULATE(pos_remote, n);
    if (!(mode & NBODY_FIRST)) {
        soa4 as = soa_load(acc + i0);
        ax += as.x;
        ay += as.y;
        az += as.z;
    }

    if (mode & NBODY_LAST) {
        soa4 vs = soa_load(vel + i0);
        NB_CPU_UPDATE(ps, vs, dt1);
        soa_store(pos_new + i0, ps);
        soa_store(vel + i0, vs);
    } else {
        soa4 as;
        as.x = ax; as.y = ay; as.z = az; as.w = (vecf)(0.0f);
        soa_store(acc + i0, as);
    }
}

#define NB_BODIES_PER_ITEM NBODY_VEC
#define NB_JSPLIT_USED 1

#else
/* ======================================================================== */
/* GPU variant: tiles through __local memory, IPT bodies per work-item       */
/* ======================================================================== */

#if NBODY_WG > 0
#define NB_NT NBODY_WG
#define NB_WG_ATTR __attribute__((reqd_work_group_size(NBODY_WG, 1, 1)))
#else
#define NB_NT ((int)get_local_size(0))
#define NB_WG_ATTR
#endif

#if NBODY_IPT != 1 && NBODY_IPT != 2 && NBODY_IPT != 4 && NBODY_IPT != 8
#error "NBODY_IPT must be 1, 2, 4 or 8"
#endif

/* NBODY_TILESUM=1: per-tile partial sums (see NB_GPU_ACCUMULATE); 0 (the
 * default): one running sum per body slice.  The partial sums cost 8% on
 * an H200 (1.80e12 against 1.97e12 interactions/s at N = 131072) for an
 * accuracy gain that only shows with many far, similar terms; --check
 * passes either way.  (The CPU variant always sums in chunks: free there.)
 * nbody_kern_multi sums each source block from zero in both cases. */
#ifndef NBODY_TILESUM
#define NBODY_TILESUM 0
#endif
#if NBODY_TILESUM
#define NB_GPU_TDECL t[NBODY_IPT]
#else
#define NB_GPU_TDECL *t = a
#endif

/* NB_EACH_K(M): M(0) M(1) ... M(IPT-1).  The per-body loops are spelled
 * out so that p[] and a[] are only ever indexed by constants and stay in
 * registers on every compiler (a loop left rolled puts them in memory). */
#if NBODY_IPT == 1
#define NB_EACH_K(M) M(0)
#elif NBODY_IPT == 2
#define NB_EACH_K(M) M(0) M(1)
#elif NBODY_IPT == 4
#define NB_EACH_K(M) M(0) M(1) M(2) M(3)
#else
#define NB_EACH_K(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7)
#endif

/* Tile entry q (a float4 named q) acting on body k of this work-item: 12
 * FP32 operations and one reciprocal square root. */
#define NB_GPU_INTERACT(k)                                                   \
    {                                                                        \
        float dx = q.x - p[k].x, dy = q.y - p[k].y, dz = q.z - p[k].z;       \
        float r2 = fma(dx, dx, fma(dy, dy, fma(dz, dz, eps)));               \
        float inv = NB_RSQRT(r2);                                            \
        float f = (q.w * inv) * (inv * inv);                                 \
        t[k].x = fma(f, dx, t[k].x);                                         \
        t[k].y = fma(f, dy, t[k].y);                                         \
        t[k].z = fma(f, dz, t[k].z);                                         \
    }

/* Tile entry j acting on all IPT bodies: one local-memory read feeds IPT
 * interactions. */
#define NB_GPU_ONE(t, j)                                                     \
    {                                                                        \
        const float4 q = (t)[(j)];                                           \
        NB_EACH_K(NB_GPU_INTERACT)                                           \
    }

/* NBODY_UNROLL consecutive tile entries, unrolled by hand (portable across
 * OpenCL compilers that differ on #pragma unroll). */
#define NB_GPU_STEP4(t, j)                                                   \
    NB_GPU_ONE(t, j) NB_GPU_ONE(t, (j) + 1)                                  \
    NB_GPU_ONE(t, (j) + 2) NB_GPU_ONE(t, (j) + 3)
#if NBODY_UNROLL == 1
#define NB_GPU_STEP(t, j) NB_GPU_ONE(t, j)
#elif NBODY_UNROLL == 2
#define NB_GPU_STEP(t, j) NB_GPU_ONE(t, j) NB_GPU_ONE(t, (j) + 1)
#elif NBODY_UNROLL == 4
#define NB_GPU_STEP(t, j) NB_GPU_STEP4(t, j)
#elif NBODY_UNROLL == 8
#define NB_GPU_STEP(t, j) NB_GPU_STEP4(t, j) NB_GPU_STEP4(t, (j) + 4)
#elif NBODY_UNROLL == 16
#define NB_GPU_STEP(t, j)                                                    \
    NB_GPU_STEP4(t, j) NB_GPU_STEP4(t, (j) + 4)                              \
    NB_GPU_STEP4(t, (j) + 8) NB_GPU_STEP4(t, (j) + 12)
#else
#error "NBODY_UNROLL must be 1, 2, 4, 8 or 16"
#endif

/* This work-item's bodies: p[k], a[k] for k < IPT.  The nt work-items of
 * the group form NBODY_JSPLIT slices of nsub; work-item (slice js, index ib)
 * holds bodies base + k * nsub of the block and sums over slice js of each
 * tile. */
#define NB_GPU_SETUP()                                                       \
    const int nt = NB_NT;                                                    \
    const int nsub = nt / NBODY_JSPLIT;                                      \
    const int ti = get_local_id(0);                                          \
    const int ib = ti % nsub;                                                \
    const int js = ti / nsub;                                                \
    const int base = get_group_id(0) * (nsub * NBODY_IPT) + ib;              \
    float4 p[NBODY_IPT], a[NBODY_IPT], NB_GPU_TDECL

#define NB_GPU_LOAD(k)                                                       \
    p[k] = pos_old[base + (k) * nsub];                                       \
    a[k] = (float4)(0.0f);

/* Accumulates the pull of pj[0..nj-1] (nj a multiple of the local size), as
 * the tutorial does: each work-item copies one position into the tile in
 * local memory, barrier, every work-item runs over its slice of the tile,
 * barrier.  With NBODY_TILESUM each slice is summed from zero into t[] and
 * then added to a[]: adding many small, similar terms (a far cluster) one
 * by one to a large running sum rounds them all the same way; per-tile sums
 * keep that error at the level of one tile.  Without it t aliases a. */
#if NBODY_TILESUM
#define NB_GPU_TZERO(k) t[k] = (float4)(0.0f);
#define NB_GPU_TADD(k) a[k].xyz += t[k].xyz;
#else
#define NB_GPU_TZERO(k)
#define NB_GPU_TADD(k)
#endif
#define NB_GPU_ACCUMULATE(pj, nj)                                            \
    {                                                                        \
        __local const float4* slice = pblock + js * nsub;                    \
        for (int jb = 0; jb < (nj); jb += nt) {                              \
            pblock[ti] = (pj)[jb + ti];                                      \
            barrier(CLK_LOCAL_MEM_FENCE);                                    \
            NB_EACH_K(NB_GPU_TZERO)                                          \
            for (int j = 0; j < nsub; j += NBODY_UNROLL) {                   \
                NB_GPU_STEP(slice, j)                                        \
            }                                                                \
            NB_EACH_K(NB_GPU_TADD)                                           \
            barrier(CLK_LOCAL_MEM_FENCE);                                    \
        }                                                                    \
    }

/* With NBODY_JSPLIT > 1, sums the slices' partial accelerations into the
 * work-items of slice 0 (through pblock); the others are then done. */
#if NBODY_JSPLIT > 1
#define NB_GPU_REDUCE1(k)                                                    \
    pblock[ti] = a[k];                                                       \
    barrier(CLK_LOCAL_MEM_FENCE);                                            \
    if (js == 0)                                                             \
        for (int s = 1; s < NBODY_JSPLIT; s++)                               \
            a[k].xyz += pblock[ib + s * nsub].xyz;                           \
    barrier(CLK_LOCAL_MEM_FENCE);
#define NB_GPU_REDUCE() NB_EACH_K(NB_GPU_REDUCE1)
#else
#define NB_GPU_REDUCE()
#endif

/* Final update of body k: position and velocity. */
#define NB_GPU_UPDATE(k)                                                     \
    {                                                                        \
        const int i = base + (k) * nsub;                                     \
        float4 v = vel[i];                                                   \
        NB_UPDATE(p[k], v, a[k], dt1);                                       \
        pos_new[i] = p[k];                                                   \
        vel[i] = v;                                                          \
    }

__kernel NB_WG_ATTR
void nbody_kern(float dt1, float eps,
                __global const float4* pos_old,
                __global float4* pos_new,
                __global float4* vel,
                __local float4* pblock)
{
    NB_GPU_SETUP();
    const int n = get_global_size(0) / NBODY_JSPLIT * NBODY_IPT;

    NB_EACH_K(NB_GPU_LOAD)
    NB_GPU_ACCUMULATE(pos_old, n);
    NB_GPU_REDUCE()
    if (js == 0) {
        NB_EACH_K(NB_GPU_UPDATE)
    }
}

/* For nbody_kern_multi: partial sums kept in acc between launches. */
#define NB_GPU_ADD_ACC(k) a[k].xyz += acc[base + (k) * nsub].xyz;
#define NB_GPU_STORE_ACC(k) acc[base + (k) * nsub] = a[k];

__kernel NB_WG_ATTR
void nbody_kern_multi(float dt1, float eps,
                      __global const float4* pos_old,
                      __global float4* pos_new,
                      __global float4* vel,
                      __local float4* pblock,
                      __global const float4* pos_remote,
                      __global float4* acc,
                      int mode)
{
    NB_GPU_SETUP();
    const int n = get_global_size(0) / NBODY_JSPLIT * NBODY_IPT; /* block size */

    NB_EACH_K(NB_GPU_LOAD)
    NB_GPU_ACCUMULATE(pos_remote, n);
    NB_GPU_REDUCE()
    if (js == 0) {
        if (!(mode & NBODY_FIRST)) {
            NB_EACH_K(NB_GPU_ADD_ACC)
        }
        if (mode & NBODY_LAST) {
            NB_EACH_K(NB_GPU_UPDATE)
        } else {
            NB_EACH_K(NB_GPU_STORE_ACC)
        }
    }
}

#define NB_BODIES_PER_ITEM NBODY_IPT
#define NB_JSPLIT_USED NBODY_JSPLIT

#endif /* variants */

/* The variant's launch shape, for the host:
 * info[0] = bodies per work-item, info[1] = work-items sharing one body's
 * j range, info[2] = the compiled-in local size (0: any), info[3] = 1 for the
 * CPU variant, 0 for the GPU one, info[4] = NBODY_UNROLL or NBODY_CPU_UNROLL,
 * info[5] = NBODY_RSQRT. */
__kernel void nbody_info(__global int* info)
{
    if (get_global_id(0) == 0) {
        info[0] = NB_BODIES_PER_ITEM;
        info[1] = NB_JSPLIT_USED;
        info[2] = NBODY_WG;
        info[3] = NBODY_CPU_KERNEL;
#if NBODY_CPU_KERNEL
        info[4] = NBODY_CPU_UNROLL;
#else
        info[4] = NBODY_UNROLL;
#endif
        info[5] = NBODY_RSQRT;
    }
}
