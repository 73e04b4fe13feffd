/* SPDX-License-Identifier: MIT */
/* #include "b.h" inside a comment */
// #include "a.h" after a line comment
#define S "#include \"a.h\" in a string"
#include <stdcl.h>
#include MACRO_HEADER
/* a comment that ends
   before the directive */ #include "a.h"
	#  include"sub/c.h"
#pragma once
__kernel void k(__global int* p) { p[0] = 1; }