/* SPDX-License-Identifier: MIT */
/* stdclinfo.c: prints the default contexts as this process gets them (platform,
 * devices with type, compute units and memory) and why they were chosen, plus the
 * environment variables that steer them.  The first thing to run when something is off.
 * Under mpirun (or srun) each rank prints its rank, host and what it leased, as one
 * block: `mpirun -np 2 -x STDGPU_LOCK=auto stdclinfo` shows which GPU each rank gets. */
#include <stdcl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char* type_name(cl_device_type t)
{
    if (t & CL_DEVICE_TYPE_GPU) return "GPU";
    if (t & CL_DEVICE_TYPE_CPU) return "CPU";
    if (t & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
    return "other";
}

/* The rank this process is in its MPI job, from the launcher's environment
 * (libstdcl itself does not use MPI). */
static void print_rank(void)
{
    static const struct {
        const char* who;
        const char* rank;
        const char* size;
        const char* local;
    } l[] = {
        {"Open MPI", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
        {"MPICH/Hydra", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
        {"MVAPICH", "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE", "MV2_COMM_WORLD_LOCAL_RANK"},
        {"Slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
    };
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    for (size_t i = 0; i < sizeof l / sizeof l[0]; ++i) {
        const char* rank = getenv(l[i].rank);
        if (!rank) continue;
        const char* size = getenv(l[i].size);
        const char* local = getenv(l[i].local);
        printf("rank %s of %s on %s (%s; local rank %s)\n", rank, size ? size : "?", host, l[i].who,
               local ? local : "?");
        return;
    }
    printf("not under an MPI launcher (host %s)\n", host);
}

static void print_context(const char* name, CLCONTEXT* cp)
{
    char buf[1024];
    if (!cp) {
        /* The first call given a NULL context says why it is NULL (disabled, no such
         * device, or what failed while the library loaded). */
        (void)stdcl_context_why(cp);
        const char* why = clerror();
        printf("%s: none\n  why: %s\n", name, why ? why : "unknown");
        return;
    }
    buf[0] = '\0';
    clGetPlatformInfo(stdcl_platform(cp), CL_PLATFORM_VERSION, sizeof buf, buf, NULL);
    printf("%s: %u device(s), %s\n", name, clgetndev(cp), buf);
    printf("  why: %s\n", stdcl_context_why(cp));
    for (cl_uint d = 0; d < clgetndev(cp); ++d) {
        cl_device_id id = stdcl_device(cp, d);
        cl_device_type type = 0;
        cl_uint cu = 0, mhz = 0;
        cl_ulong mem = 0, maxalloc = 0, local = 0;
        char dname[256] = "", dver[256] = "", drv[256] = "";
        clGetDeviceInfo(id, CL_DEVICE_NAME, sizeof dname, dname, NULL);
        clGetDeviceInfo(id, CL_DEVICE_VERSION, sizeof dver, dver, NULL);
        clGetDeviceInfo(id, CL_DRIVER_VERSION, sizeof drv, drv, NULL);
        clGetDeviceInfo(id, CL_DEVICE_TYPE, sizeof type, &type, NULL);
        clGetDeviceInfo(id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
        clGetDeviceInfo(id, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof mhz, &mhz, NULL);
        clGetDeviceInfo(id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL);
        clGetDeviceInfo(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof maxalloc, &maxalloc, NULL);
        clGetDeviceInfo(id, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local, &local, NULL);
        printf("  device %u: %s\n", d, dname);
        printf("    type %s, %u compute units at %u MHz, %s, driver %s\n", type_name(type), cu, mhz, dver, drv);
        printf("    memory %.1f MiB (largest allocation %.1f MiB), local memory %.0f KiB\n", mem / 1048576.0,
               maxalloc / 1048576.0, local / 1024.0);
    }
}

static void print_env(void)
{
    static const char* const ctx[] = {"DEV", "CPU", "GPU", "ACC"};
    static const char* const suffix[] = {"", "_PLATFORM_NAME", "_MAX_NDEV", "_LOCK"};
    static const char* const other[] = {"STDCL_KERNEL_PATH", "STDCL_BUILD_OPTIONS", "STDCL_TRACE",     "STDCL_CACHE",
                                        "STDCL_CACHE_DIR",   "STDCL_CACHE_MAX",     "OCL_ICD_VENDORS", "POCL_DEVICES"};
    int any = 0;
    char name[64];
    printf("environment:\n");
    for (size_t i = 0; i < sizeof ctx / sizeof ctx[0]; ++i)
        for (size_t j = 0; j < sizeof suffix / sizeof suffix[0]; ++j) {
            snprintf(name, sizeof name, "STD%s%s", ctx[i], suffix[j]);
            if (getenv(name)) printf("  %s=%s\n", name, getenv(name)), any = 1;
        }
    for (size_t i = 0; i < sizeof other / sizeof other[0]; ++i)
        if (getenv(other[i])) printf("  %s=%s\n", other[i], getenv(other[i])), any = 1;
    if (!any) printf("  (none of libstdcl's variables is set)\n");
}

int main(int argc, char** argv)
{
    if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        printf("usage: stdclinfo\n"
               "Prints libstdcl's default contexts (stddev, stdcpu, stdgpu, stdacc) as this process\n"
               "gets them, and why.  Steer them with STDX=0|1, STDX_PLATFORM_NAME=a,b and\n"
               "STDX_MAX_NDEV=n for X in DEV, CPU, GPU, ACC; STDCL_TRACE=all shows each decision.\n");
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "stdclinfo: unknown argument '%s' (try --help)\n", argv[1]);
        return 2;
    }
    /* One block on stdout, written at once, so that ranks do not interleave. */
    static char out[1 << 16];
    setvbuf(stdout, out, _IOFBF, sizeof out);
    printf("libstdcl %s\n", stdcl_version());
    print_rank();
    print_context("stddev", stddev);
    print_context("stdcpu", stdcpu);
    print_context("stdgpu", stdgpu);
    print_context("stdacc", stdacc);
    print_env();
    return 0;
}
