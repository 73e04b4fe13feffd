// SPDX-License-Identifier: MIT
// clete_checks_auto.cpp: clete_checks.cpp with __CLVECTOR_FULLAUTO and
// __CLMULTI_ARRAY_FULLAUTO: every assignment runs a generated kernel.
#define __CLVECTOR_FULLAUTO
#define __CLMULTI_ARRAY_FULLAUTO
#include "clete_checks.cpp"
