/* SPDX-License-Identifier: MIT */
/* syntax_error.cl: does not compile, on purpose (test_errors.c): the build
 * log names the undeclared identifier. */
__kernel void broken(__global int* a)
{
    a[get_global_id(0)] = stdcl_undeclared_token_q7 + 1;
}
