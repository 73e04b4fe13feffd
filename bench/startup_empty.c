/* SPDX-License-Identifier: MIT */
/* startup_empty.c: the empty libstdcl program that bench_startup times from
 * exec to exit: linked with -lstdcl, so the library's load-time setup (the
 * default contexts stddev, stdcpu, stdgpu, stdacc, as the environment allows)
 * and its release at exit are all it does.  The one call keeps the library
 * among the program's needed libraries under -Wl,--as-needed; it does
 * nothing. */
#include <stdcl.h>

int main(void)
{
    stdcl_init();
    return 0;
}
