/* SPDX-License-Identifier: MIT */
/* sort.cl: clsort's and clsort_by_key's program, for one layout:
 *   -D STDCL_LAYOUT_GPU=1 or 0
 *   -D STDCL_WANT_NV_WARP=1 (GPU layout, NVIDIA GPUs): rank with the warp's
 *      vote instruction (common.h) instead of local memory
 * It holds the kernels of both key widths, 32-bit (names ending _32_<layout>)
 * and 64-bit (_64_<layout>), and in the CPU layout the scan of the digit
 * counts (scan_body.h, uint sums). */
#include "common.h"

#if !STDCL_LAYOUT_GPU
#define T uint
#define OP(a, b) ((a) + (b))
#define ID 0u
#define SITEMS 16
#define SFX uint_sum
#include "scan_body.h"
#undef T
#undef OP
#undef ID
#undef SITEMS
#undef SFX
#endif

#define KU uint
#define KSIGN 0x80000000u
#define KFLT 0x007FFFFFu
#define PASSES 4
#define SFX 32
#define ITEMS SORT_ITEMS
#define PAIR_ITEMS SORT_PAIR_ITEMS
#include "sort_width.h"

#define KU ulong
#define KSIGN 0x8000000000000000ul
#define KFLT 0x000FFFFFFFFFFFFFul
#define PASSES 8
#define SFX 64
#define ITEMS (SORT_ITEMS / 2)
#define PAIR_ITEMS (SORT_PAIR_ITEMS / 2)
#include "sort_width.h"
