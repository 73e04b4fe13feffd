/* SPDX-License-Identifier: MIT */
/* rank.h: the sort's ranker, rank_in_warp, and SORT_UNROLL (the pragma the
 * loops over a work-item's keys take): NVIDIA's warp vote where the program
 * is built with -D STDCL_WANT_NV_WARP=1 for an NVIDIA GPU, else the portable
 * one.  Both have the same signature and results. */
#ifndef STDCL_PRIM_RANK_H
#define STDCL_PRIM_RANK_H
#if defined(__NVIDIA__) && defined(__GPU__) && defined(STDCL_WANT_NV_WARP)
#include "rank_nv.h"
#else
#include "rank_portable.h"
#endif
#endif
