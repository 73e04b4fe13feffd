/* SPDX-License-Identifier: MIT */
/* common.h: what every primitives program shares: sizes and token pasting. */
#ifndef STDCL_PRIM_COMMON_H
#define STDCL_PRIM_COMMON_H
#include "protocol.h"
#define WG PRIM_WG
#define NWARP (WG / 32)
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#endif
