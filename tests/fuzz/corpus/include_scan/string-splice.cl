/* SPDX-License-Identifier: MIT */
#define S "a\
b"
#include "a.h"
__kernel void k(__global int* p) { p[0] = A; }
