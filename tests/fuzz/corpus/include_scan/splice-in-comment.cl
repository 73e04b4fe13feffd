/* SPDX-License-Identifier: MIT */
// a note \
#include "a.h"
__kernel void k(__global int* p) { p[0] = 1; }
