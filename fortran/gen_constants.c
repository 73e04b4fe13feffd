/* SPDX-License-Identifier: MIT */
/* gen_constants.c: prints the constants of the Fortran module stdcl as
 * Fortran parameter declarations, with the values the C compiler gives the
 * macros of stdcl.h (and of <CL/cl.h> that stdcl.h's calls take).  The
 * Makefile runs it at build time and the module includes its output
 * (stdcl_constants.inc), so a value is never copied by hand.  Each line
 * names the macro once: the name is its text, the value its expansion.
 * test_fortran compares every constant of the built module with C. */
#include <inttypes.h>
#include <stdio.h>

#include <stdcl.h>

/* The Fortran kind a constant is declared with. */
enum kind { K_INT, K_SIZE, K_INT64 };

struct constant {
    const char* name;
    long long value;
    enum kind kind;
};

/* int constants are converted as C converts them to int (CL_ALL_DEVICES,
 * (unsigned int)-1, is -1: the bits the library reads from a c_int). */
#define I(m) { #m, (long long)(int)(m), K_INT }
#define Z(m) { #m, (long long)(m), K_SIZE }
#define L(m) { #m, (long long)(m), K_INT64 }

static const struct constant constants[] = {
    /* Errors */
    I(STDCL_EINVAL), I(STDCL_ENOMEM), I(STDCL_ENOENT), I(STDCL_EBUILD),
    I(STDCL_ESTATE), I(STDCL_ECL), I(STDCL_EOVERRUN), I(STDCL_ESYNC),
    /* Version of the header the module was built with */
    I(STDCL_VERSION_MAJOR), I(STDCL_VERSION_MINOR), I(STDCL_VERSION_PATCH),
    /* Loader */
    I(CLLD_NOW), I(CLLD_DEFAULT), I(CLLD_LAZY), I(CLLD_NOBUILD), I(CLLD_GLOBAL),
    /* Memory */
    I(CL_MEM_RW), I(CL_MEM_RO), I(CL_MEM_WO), I(CL_MEM_DETACHED),
    I(CL_MEM_NOCOPY), I(CL_MEM_IMAGE2D), I(CL_MEM_NOFORCE), I(CL_MEM_DEVONLY), I(CL_MEM_ZERO),
    I(CL_MEM_CLBUF), I(CL_MEM_GLBUF), I(CL_MEM_GLTEX2D), I(CL_MEM_GLTEX3D),
    I(CL_MEM_GLRBUF), I(CL_MEM_HOST), I(CL_MEM_DEVICE),
    /* Foreign commands */
    I(CL_FOREIGN_WAITLIST),
    /* Events */
    I(CL_EVENT_WAIT), I(CL_EVENT_NOWAIT), I(CL_EVENT_RELEASE),
    I(CL_EVENT_NORELEASE), I(CL_EVENT_NOEVENT), I(CL_KERNEL_EVENT), I(CL_MEM_EVENT), I(CL_ALL_EVENT),
    /* clmctl */
    I(CL_MCTL_GET_STATUS), I(CL_MCTL_GET_DEVNUM), I(CL_MCTL_SET_DEVNUM),
    I(CL_MCTL_MARK_CLEAN), I(CL_MCTL_SET_IMAGE2D), I(CL_MCTL_SET_USRFLAGS),
    I(CL_MCTL_CLR_USRFLAGS),
    /* Kernel argument types */
    I(STDCL_TYPE_UNKNOWN), I(STDCL_TYPE_INT), I(STDCL_TYPE_UINT),
    I(STDCL_TYPE_FLOAT), I(STDCL_TYPE_POINTER), I(STDCL_TYPE_OTHER),
    /* Reductions, sorts and scans, devices */
    I(CL_REDUCE_SUM), I(CL_REDUCE_MIN), I(CL_REDUCE_MAX), I(CL_REDUCE_FLOAT),
    I(CL_REDUCE_DOUBLE), I(CL_REDUCE_INT), I(CL_REDUCE_LONG), I(CL_REDUCE_UINT),
    I(CL_REDUCE_ULONG), I(CL_SORT_DESCENDING), I(CL_SCAN_EXCLUSIVE), I(CL_ALL_DEVICES),
    /* Index spaces, __local markers */
    Z(STDCL_LOCAL_SIZE_DRIVER), L(STDCL_LOCAL_TAG),
    /* OpenCL device types (clcontext_create) and status */
    L(CL_DEVICE_TYPE_DEFAULT), L(CL_DEVICE_TYPE_CPU), L(CL_DEVICE_TYPE_GPU),
    L(CL_DEVICE_TYPE_ACCELERATOR), L(CL_DEVICE_TYPE_ALL), I(CL_SUCCESS),
};

/* The sizes of the C structures the module mirrors, for its own checks. */
static const struct constant sizes[] = {
    { "STDCL_SIZEOF_NDRANGE", (long long)sizeof(clndrange_t), K_SIZE },
    { "STDCL_SIZEOF_LOCAL", (long long)sizeof(stdcl_local_t), K_SIZE },
    { "STDCL_SIZEOF_CLSTAT_INFO", (long long)sizeof(struct clstat_info), K_SIZE },
    { "STDCL_SIZEOF_CLDEV_INFO", (long long)sizeof(struct cldev_info), K_SIZE },
    { "STDCL_SIZEOF_KERNEL_LIMITS", (long long)sizeof(struct stdcl_kernel_limits), K_SIZE },
    { "STDCL_SIZEOF_FOREIGN_USE", (long long)sizeof(struct clforeign_use), K_SIZE },
};

static void print(const struct constant* c)
{
    static const char* const decl[] = { "integer(c_int)", "integer(c_size_t)",
                                        "integer(c_int64_t)" };
    static const char* const suffix[] = { "c_int", "c_size_t", "c_int64_t" };
    /* The most negative value of a kind cannot be written as a literal. */
    if (c->value == INT64_MIN)
        printf("  %s, parameter, public :: %s = -huge(0_%s) - 1_%s\n",
               decl[c->kind], c->name, suffix[c->kind], suffix[c->kind]);
    else
        printf("  %s, parameter, public :: %s = %lld_%s\n", decl[c->kind],
               c->name, c->value, suffix[c->kind]);
}

int main(void)
{
    printf("! stdcl_constants.inc: written by gen_constants from stdcl.h "
           "(libstdcl %s); do not edit.\n", STDCL_VERSION_STRING);
    for (size_t i = 0; i < sizeof constants / sizeof constants[0]; i++)
        print(&constants[i]);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        print(&sizes[i]);
    printf("  character(len=*), parameter, public :: STDCL_VERSION_STRING = \"%s\"\n",
           STDCL_VERSION_STRING);
    return ferror(stdout) ? 1 : 0;
}
