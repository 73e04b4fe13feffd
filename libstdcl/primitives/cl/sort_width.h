/* SPDX-License-Identifier: MIT */
/* sort_width.h: the sort kernels of one key width, whose KU, KSIGN, KFLT,
 * PASSES, SFX, ITEMS and PAIR_ITEMS sort.cl defines: the body, and on a GPU
 * the one-sweep pass for keys alone and with values; then it undefines them
 * for the next width.  No include guard. */
#include "sort_body.h"
#if STDCL_LAYOUT_GPU
#define PAIRS 0
#include "sort_pass.h"
#undef PAIRS
#define PAIRS 1
#include "sort_pass.h"
#undef PAIRS
#endif
#undef KU
#undef KSIGN
#undef KFLT
#undef PASSES
#undef SFX
#undef ITEMS
#undef PAIR_ITEMS
