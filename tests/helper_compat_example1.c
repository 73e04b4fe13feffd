/* SPDX-License-Identifier: MIT */
/* helper_compat_example1.c: Example #1 of the STDCL 1.6 API reference
 * (tests/compat/example1.c), compiled unchanged.  It targets a GPU; without
 * one, stdgpu names stdcpu (two PoCL devices in the tests): the macro expands
 * to an expression that reads the real stdgpu (a macro does not expand
 * inside itself).  test_compat.c runs it from tests/kernels/, where its
 * add_vec.cl is, and checks the sums it prints. */
#include <stdcl.h>

#define stdgpu (stdgpu ? stdgpu : stdcpu)

/* The reference's text as it is: no warnings about its style. */
#pragma GCC diagnostic ignored "-Wunused-variable"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wimplicit-int"

#include "compat/example1.c"
