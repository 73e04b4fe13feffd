/* SPDX-License-Identifier: MIT */
/* sort.cl: clsort's and clsort_by_key's program, for one key width and layout:
 *   -D SORT_KEY_BITS=32 or 64
 *   -D STDCL_LAYOUT_GPU=1 or 0
 *   -D STDCL_WANT_NV_WARP=1 (GPU layout, NVIDIA GPUs): rank with the warp's
 *      vote instruction (rank_nv.h) instead of local memory (rank_portable.h)
 *   -D SORT_PAIR4_WIDE=1 (with it, on GPUs of compute capability 9):
 *      the pass for 4-byte values in groups of SORT_PAIR4_WIDE_WG (protocol.h)
 * Kernels: in the GPU layout stdcl_sort_hist (sort_body.h), then one pass a
 * digit of stdcl_sort_onesweep, stdcl_sort_onesweep_pairs or
 * stdcl_sort_onesweep_pairs4 (sort_pass.h); in
 * the CPU layout, a pass of stdcl_sort_count, the scan of the counts
 * (scan_body.h: stdcl_scan_reduce, _parts, _tiles, uint sums) and
 * stdcl_sort_scatter. */
#include "common.h"

// The pass for 4-byte values: its group and pairs a work-item (32-bit keys).
#if defined(SORT_PAIR4_WIDE) && SORT_PAIR4_WIDE
#define PAIR4_WG SORT_PAIR4_WIDE_WG
#define PAIR4_ITEMS32 SORT_PAIR4_WIDE_ITEMS
#else
#define PAIR4_WG PRIM_WG
#define PAIR4_ITEMS32 SORT_PAIR4_ITEMS
#endif
// The pass for 4-byte values keeps each key's output position for its value
// (sort_pass.h: SO_KEEP_POS) in NVIDIA's program, where it was measured.
#if defined(STDCL_WANT_NV_WARP) && STDCL_WANT_NV_WARP
#define PAIR4_KEEP_POS 1
#else
#define PAIR4_KEEP_POS 0
#endif
#if SORT_KEY_BITS == 32
#define KU uint
#define KSIGN 0x80000000u
#define KFLT 0x007FFFFFu
#define PASSES 4
#define ITEMS SORT_ITEMS
#define PAIR_ITEMS SORT_PAIR_ITEMS
#define PAIR4_ITEMS PAIR4_ITEMS32
#elif SORT_KEY_BITS == 64
#define KU ulong
#define KSIGN 0x8000000000000000ul
#define KFLT 0x000FFFFFFFFFFFFFul
#define PASSES 8
#define ITEMS (SORT_ITEMS / 2)
#define PAIR_ITEMS (SORT_PAIR_ITEMS / 2)
#define PAIR4_ITEMS (PAIR4_ITEMS32 / 2)
#else
#error "sort.cl: -D SORT_KEY_BITS=32 or 64"
#endif

#include "sort_body.h"

#if STDCL_LAYOUT_GPU
#define PAIRS 0
#include "sort_pass.h"
#undef PAIRS
#define PAIRS 1
#include "sort_pass.h"
#undef PAIRS
#define PAIRS 4
#include "sort_pass.h"
#undef PAIRS
#else
#define T uint
#define OP(a, b) ((a) + (b))
#define ID 0u
#define SITEMS 16
#include "scan_body.h"
#endif
