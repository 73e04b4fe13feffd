/* nbody_stdcl.c: context choice and kernel file lookup for nbody and nbody_multi. */
#include "nbody_stdcl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nbody_common.h"

CONTEXT* nbody_pick_context(const char* name)
{
    if (!name)
        return stdgpu ? stdgpu : stdcpu;
    CONTEXT* cp = !strcmp(name, "gpu") ? stdgpu : !strcmp(name, "cpu") ? stdcpu : stddev;
    if (!cp)
        nbody_usage_error("-c %s: this machine has no such OpenCL context (std%s is NULL)",
                          name, name);
    return cp;
}

const char* nbody_kernel_file(const char* argv0, char* buf, size_t cap)
{
    const char* slash = strrchr(argv0, '/');
    if (access("nbody_kern.cl", R_OK) == 0 || getenv("STDCL_KERNEL_PATH") || !slash)
        return "nbody_kern.cl";
    snprintf(buf, cap, "%.*s/nbody_kern.cl", (int)(slash - argv0), argv0);
    return buf;
}
