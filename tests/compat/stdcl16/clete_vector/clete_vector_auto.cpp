// SPDX-License-Identifier: MIT
// clete_vector_auto.cpp: clete_vector.cpp with __CLVECTOR_FULLAUTO, so each
// assignment runs as a generated OpenCL kernel.
#define __CLVECTOR_FULLAUTO
#include "clete_vector.cpp"
