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
 *                    block of bodies that acts on it (see below).
 *   nbody_info       writes the variant's shape so the host sizes the launch.
 *
 * Two implementations of the force loop, chosen by the device type macro that
 * clopen defines (-D __GPU__ or -D __CPU__):
 *   GPU: the tutorial's tiling through __local memory, tuned for NVIDIA:
 *        NBODY_IPT bodies per work-item (each tile entry read from local memory
 *        feeds IPT interactions), the tile loop unrolled NBODY_UNROLL times,
 *        hardware rsqrt, and optionally NBODY_JSPLIT work-items sharing one
 *        body's sum (more work-items when there are few bodies per device).
 *   CPU: no local memory; each work-item owns NBODY_VEC bodies held across
 *        the lanes of floatN vectors (structure of arrays) and loops over all
 *        j with the j body broadcast, which compiles to SIMD on PoCL/LLVM.
 * Force a variant with -D NBODY_FORCE_GPU or -D NBODY_FORCE_CPU.
 *
 * Launch shape (the host reads it from nbody_info):
 *   work-items = nbodies / BPW * JSPLIT, where BPW = bodies per work-item;
 *   nbodies must be a multiple of BPW * local size (the host pads with
 *   zero-mass bodies).  GPU: the tile is the work-group, so the local size
 *   must equal NBODY_WG when that is defined (the host passes -D NBODY_WG).
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

/* GPU: bodies per work-item (1, 2, 4 or 8). */
#ifndef NBODY_IPT
#if defined(__NVIDIA__)
#define NBODY_IPT 4
#else
#define NBODY_IPT 1
#endif
#endif

/* GPU: unrolling of the loop over a tile (1, 2, 4, 8 or 16; must divide the
 * tile slice, i.e. local size / NBODY_JSPLIT). */
#ifndef NBODY_UNROLL
#define NBODY_UNROLL 8
#endif

/* GPU: work-items sharing the j range of one body (1, 2, 4 ...; must divide
 * the local size). */
#ifndef NBODY_JSPLIT
#define NBODY_JSPLIT 1
#endif

/* GPU: 1 = double-buffered tile with the next entry prefetched into a
 * register, one barrier per tile; 0 = the tutorial's two barriers.  Needs
 * NBODY_WG (the host passes it). */
#ifndef NBODY_PIPE
#define NBODY_PIPE 1
#endif

/* GPU: factor out a common mass (see NB_GPU_MASS_SCAN). */
#ifndef NBODY_MASS_CHECK
#define NBODY_MASS_CHECK 1
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
        ax = fma(f, dx, ax);                                                 \
        ay = fma(f, dy, ay);                                                 \
        az = fma(f, dz, az);                                                 \
    } while (0)

/* Accumulates the pull of pj[0..nj-1] on the bodies in (px, py, pz). */
#define NB_CPU_ACCUMULATE(pj, nj)                                            \
    do {                                                                     \
        const vecf eps4 = (vecf)(eps);                                       \
        int j = 0;                                                           \
        for (; j + NBODY_CPU_UNROLL <= (nj); j += NBODY_CPU_UNROLL) {        \
            float4 q0 = (pj)[j];                                             \
            NB_CPU_INTERACT(q0);                                             \
            if (NBODY_CPU_UNROLL >= 2) {                                     \
                float4 q1 = (pj)[j + 1];                                     \
                NB_CPU_INTERACT(q1);                                         \
            }                                                                \
            if (NBODY_CPU_UNROLL >= 4) {                                     \
                float4 q2 = (pj)[j + 2];                                     \
                NB_CPU_INTERACT(q2);                                         \
                float4 q3 = (pj)[j + 3];                                     \
                NB_CPU_INTERACT(q3);                                         \
            }                                                                \
        }                                                                    \
        for (; j < (nj); j++) {                                              \
            float4 q0 = (pj)[j];                                             \
            NB_CPU_INTERACT(q0);                                             \
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
                         __global float4* pos_old,
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
                               __global float4* pos_old,
                               __global float4* pos_new,
                               __global float4* vel,
                               __local float4* pblock,
                               __global float4* pos_remote,
                               __global float4* acc,
                               int mode)
{
    const int i0 = get_global_id(0) * NBODY_VEC;
    const int n = get_global_size(0) * NBODY_VEC; /* every block is this size */
    (void)pblock;

    soa4 ps = soa_load(pos_old + i0);
    const vecf px = ps.x, py = ps.y, pz = ps.z;
    vecf ax, ay, az;
    if (mode & NBODY_FIRST) {
        ax = ay = az = (vecf)(0.0f);
    } else {
        soa4 as = soa_load(acc + i0);
        ax = as.x; ay = as.y; az = as.z;
    }

    NB_CPU_ACCUMULATE(pos_remote, n);

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

/* NB_EACH_K(M): M(0) M(1) ... M(IPT-1).  The per-body loops are spelled
 * out so that p[] and a[] are only ever indexed by constants and stay in
 * registers on every compiler (a loop left rolled would put them in
 * memory). */
#if NBODY_IPT == 1
#define NB_EACH_K(M) M(0)
#elif NBODY_IPT == 2
#define NB_EACH_K(M) M(0) M(1)
#elif NBODY_IPT == 4
#define NB_EACH_K(M) M(0) M(1) M(2) M(3)
#else
#define NB_EACH_K(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7)
#endif

/* Tile entry q (a float4 named q) acting on body k of this work-item; F is
 * the force factor: m_j / r^3 in general, 1 / r^3 when every mass of the
 * source block is the same (the mass is then applied once at the end). */
#define NB_GPU_INTERACT(k, F)                                                \
    {                                                                        \
        float dx = q.x - p[k].x, dy = q.y - p[k].y, dz = q.z - p[k].z;       \
        float r2 = fma(dx, dx, fma(dy, dy, fma(dz, dz, eps)));               \
        float inv = NB_RSQRT(r2);                                            \
        float f = F(q, inv);                                                 \
        a[k].x = fma(f, dx, a[k].x);                                         \
        a[k].y = fma(f, dy, a[k].y);                                         \
        a[k].z = fma(f, dz, a[k].z);                                         \
    }
#define NB_F_MASS(q, inv) (((q).w * (inv)) * ((inv) * (inv)))
#define NB_F_UNIT(q, inv) (((inv) * (inv)) * (inv))
#define NB_GPU_INTERACT_M(k) NB_GPU_INTERACT(k, NB_F_MASS)
#define NB_GPU_INTERACT_U(k) NB_GPU_INTERACT(k, NB_F_UNIT)

/* Tile entry j acting on all IPT bodies (IM: NB_GPU_INTERACT_M or _U). */
#define NB_GPU_ONE(t, j, IM)                                                 \
    {                                                                        \
        const float4 q = (t)[(j)];                                           \
        NB_EACH_K(IM)                                                        \
    }

/* The loop over one slice of the tile, unrolled by hand (portable across
 * OpenCL compilers that differ on #pragma unroll). */
#if NBODY_UNROLL == 1
#define NB_GPU_STEP(t, j, IM) NB_GPU_ONE(t, j, IM)
#elif NBODY_UNROLL == 2
#define NB_GPU_STEP(t, j, IM) NB_GPU_ONE(t, j, IM) NB_GPU_ONE(t, (j) + 1, IM)
#elif NBODY_UNROLL == 4
#define NB_GPU_STEP(t, j, IM)                                                \
    NB_GPU_ONE(t, j, IM) NB_GPU_ONE(t, (j) + 1, IM)                          \
    NB_GPU_ONE(t, (j) + 2, IM) NB_GPU_ONE(t, (j) + 3, IM)
#elif NBODY_UNROLL == 8
#define NB_GPU_STEP4(t, j, IM)                                               \
    NB_GPU_ONE(t, j, IM) NB_GPU_ONE(t, (j) + 1, IM)                          \
    NB_GPU_ONE(t, (j) + 2, IM) NB_GPU_ONE(t, (j) + 3, IM)
#define NB_GPU_STEP(t, j, IM) NB_GPU_STEP4(t, j, IM) NB_GPU_STEP4(t, (j) + 4, IM)
#elif NBODY_UNROLL == 16
#define NB_GPU_STEP4(t, j, IM)                                               \
    NB_GPU_ONE(t, j, IM) NB_GPU_ONE(t, (j) + 1, IM)                          \
    NB_GPU_ONE(t, (j) + 2, IM) NB_GPU_ONE(t, (j) + 3, IM)
#define NB_GPU_STEP(t, j, IM)                                                \
    NB_GPU_STEP4(t, j, IM) NB_GPU_STEP4(t, (j) + 4, IM)                      \
    NB_GPU_STEP4(t, (j) + 8, IM) NB_GPU_STEP4(t, (j) + 12, IM)
#else
#error "NBODY_UNROLL must be 1, 2, 4, 8 or 16"
#endif

/* This work-item's bodies: p[k], a[k] for k < IPT; body k is number
 * base + ib + k * nsub of the block, where nsub work-items of the group
 * share each j slice. */
#define NB_GPU_SETUP()                                                       \
    const int nt = NB_NT;                                                    \
    const int nsub = nt / NBODY_JSPLIT;                                      \
    const int ti = get_local_id(0);                                          \
    const int ib = ti % nsub;                                                \
    const int js = ti / nsub;                                                \
    const int base = get_group_id(0) * (nsub * NBODY_IPT) + ib;              \
    NB_GPU_TILE2                                                             \
    NB_GPU_MIXED_FLAG                                                        \
    float4 p[NBODY_IPT], a[NBODY_IPT]

#define NB_GPU_LOAD(k)                                                       \
    p[k] = pos_old[base + (k) * nsub];                                       \
    a[k] = (float4)(0.0f);

/* One slice of a tile: the general loop, or the unit-mass one when every
 * source mass is m0 (uni). */
#define NB_GPU_SLICE(slice)                                                  \
    if (uni) {                                                               \
        for (int j = 0; j < nt / NBODY_JSPLIT; j += NBODY_UNROLL) {          \
            NB_GPU_STEP(slice, j, NB_GPU_INTERACT_U)                         \
        }                                                                    \
    } else {                                                                 \
        for (int j = 0; j < nt / NBODY_JSPLIT; j += NBODY_UNROLL) {          \
            NB_GPU_STEP(slice, j, NB_GPU_INTERACT_M)                         \
        }                                                                    \
    }

/* NBODY_MASS_CHECK=1: before the sum, the work-group checks whether every
 * source body has the same mass m0 (one extra read of the block's masses,
 * from L2, against N/local-size interactions per work-item).  If so the
 * inner loop sums d / r^3 and the mass is applied once at the end: 11
 * instead of 12 FP32 operations per interaction, same result up to
 * rounding.  Other mass distributions take the general loop.  0: always
 * the general loop. */
#if NBODY_MASS_CHECK
#define NB_GPU_MASS_SCAN(pj, nj)                                             \
    if (ti == 0)                                                             \
        nb_mixed[0] = 0;                                                     \
    barrier(CLK_LOCAL_MEM_FENCE);                                            \
    const float m0 = (pj)[0].w;                                              \
    {                                                                        \
        int differ = 0;                                                      \
        for (int j = ti; j < (nj); j += nt)                                  \
            differ |= (pj)[j].w != m0;                                       \
        if (differ)                                                          \
            nb_mixed[0] = 1;                                                 \
    }                                                                        \
    barrier(CLK_LOCAL_MEM_FENCE);                                            \
    const int uni = nb_mixed[0] == 0;
#define NB_GPU_MIXED_FLAG __local int nb_mixed[1];
#else
#define NB_GPU_MASS_SCAN(pj, nj) const int uni = 0; const float m0 = 1.0f;
#define NB_GPU_MIXED_FLAG
#endif

/* After the sum: the common mass, if it was factored out. */
#define NB_GPU_SCALE1(k) a[k].xyz *= m0;
#define NB_GPU_SCALE() if (uni) { NB_EACH_K(NB_GPU_SCALE1) }

/* Accumulates the pull of pj[0..nj-1] (nj a multiple of the local size):
 * the work-group stages one position per work-item in local memory, then
 * each work-item runs over its slice of that tile.
 * NBODY_PIPE=0 is the tutorial's loop: load, barrier, compute, barrier.
 * NBODY_PIPE=1 (needs NBODY_WG) double-buffers the tile (pblock and a
 * static second buffer) and loads the next tile's entry into a register
 * before computing the current one: one barrier per tile, and the global
 * load's latency hides behind the arithmetic. */
#if NBODY_PIPE && NBODY_WG > 0
/* The second tile buffer (local variables must be at kernel scope). */
#define NB_GPU_TILE2 __local float4 tile2[NBODY_WG];
#define NB_GPU_ACCUMULATE(pj, nj)                                            \
    {                                                                        \
        __local float4* buf0 = pblock;                                       \
        __local float4* buf1 = tile2;                                        \
        float4 nxt = (pj)[ti];                                               \
        buf0[ti] = nxt;                                                      \
        barrier(CLK_LOCAL_MEM_FENCE);                                        \
        for (int jb = 0; jb < (nj); jb += nt) {                              \
            const int more = jb + nt < (nj);                                 \
            if (more)                                                        \
                nxt = (pj)[jb + nt + ti];                                    \
            __local const float4* slice = buf0 + js * (nt / NBODY_JSPLIT);   \
            NB_GPU_SLICE(slice)                                              \
            if (more)                                                        \
                buf1[ti] = nxt;                                              \
            barrier(CLK_LOCAL_MEM_FENCE);                                    \
            __local float4* t = buf0;                                        \
            buf0 = buf1;                                                     \
            buf1 = t;                                                        \
        }                                                                    \
    }
#else
#define NB_GPU_TILE2
#define NB_GPU_ACCUMULATE(pj, nj)                                            \
    {                                                                        \
        __local const float4* slice = pblock + js * (nt / NBODY_JSPLIT);     \
        for (int jb = 0; jb < (nj); jb += nt) {                              \
            pblock[ti] = (pj)[jb + ti];                                      \
            barrier(CLK_LOCAL_MEM_FENCE);                                    \
            NB_GPU_SLICE(slice)                                              \
            barrier(CLK_LOCAL_MEM_FENCE);                                    \
        }                                                                    \
    }
#endif

/* With NBODY_JSPLIT > 1, sums the partial accelerations into the work-items
 * of slice 0 (through pblock); the others then have nothing left to do. */
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
                __global float4* pos_old,
                __global float4* pos_new,
                __global float4* vel,
                __local float4* pblock)
{
    NB_GPU_SETUP();
    const int n = get_global_size(0) / NBODY_JSPLIT * NBODY_IPT;

    NB_EACH_K(NB_GPU_LOAD)
    NB_GPU_MASS_SCAN(pos_old, n)
    NB_GPU_ACCUMULATE(pos_old, n);
    NB_GPU_SCALE()
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
                      __global float4* pos_old,
                      __global float4* pos_new,
                      __global float4* vel,
                      __local float4* pblock,
                      __global float4* pos_remote,
                      __global float4* acc,
                      int mode)
{
    NB_GPU_SETUP();
    const int n = get_global_size(0) / NBODY_JSPLIT * NBODY_IPT; /* block size */

    NB_EACH_K(NB_GPU_LOAD)
    NB_GPU_MASS_SCAN(pos_remote, n)
    NB_GPU_ACCUMULATE(pos_remote, n);
    NB_GPU_SCALE()
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
