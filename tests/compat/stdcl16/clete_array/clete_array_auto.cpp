// SPDX-License-Identifier: MIT
// clete_array_auto.cpp: clete_array.cpp with __CLMULTI_ARRAY_FULLAUTO, so
// each assignment runs as a generated OpenCL kernel.
#define __CLMULTI_ARRAY_FULLAUTO
#include "clete_array.cpp"
