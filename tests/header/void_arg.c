/* SPDX-License-Identifier: MIT */
/* void_arg.c: must not compile (test_header): a void expression as clforka's
 * kernel argument 2, which no function call could take. */
#include <stdcl.h>

static void nothing(void) {}

int main(void)
{
    clndrange_t ndr = clndrange_init1d(0, 1, 1);
    return clforka(stdcpu, 0, (cl_kernel)0, &ndr, CL_EVENT_WAIT, 1, 2.0f, nothing()) != NULL;
}
