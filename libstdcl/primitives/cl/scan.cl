/* SPDX-License-Identifier: MIT */
/* scan.cl: clscan's program, the scans of one element type and operation in
 * one layout, chosen when it is built:
 *   -D PRIM_TYPE=n -D PRIM_OP=n   the element type and operation (elem.h)
 *   -D STDCL_LAYOUT_GPU=1 or 0
 * Its kernels are scan_body.h's: stdcl_scan_reduce, stdcl_scan_parts,
 * stdcl_scan_tiles, and in the GPU layout stdcl_scan_onepass. */
#include "elem.h"
#include "common.h"

#if SWORDS == 2
#define SITEMS SCAN_ITEMS_8
#else
#define SITEMS SCAN_ITEMS_4
#endif

#include "scan_body.h"
