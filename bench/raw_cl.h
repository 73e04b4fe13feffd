/* SPDX-License-Identifier: MIT */
/* raw_cl.h: what the raw-OpenCL benchmarks (event_costs, flush_probe,
 * reduce_costs: OpenCL alone, no libstdcl) share: a clock, the check of each
 * OpenCL call, the comparison qsort needs for a median, and the device they
 * use.  The includer defines RAW_CL_PROG, its name in messages, first.  Header
 * only. */
#ifndef RAW_CL_H
#define RAW_CL_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* The monotonic clock, in ns. */
static inline double raw_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* Ends the program with a message when an OpenCL call fails. */
#define CHECK(call)                                                                                                    \
    do {                                                                                                               \
        cl_int e_ = (call);                                                                                            \
        if (e_ != CL_SUCCESS) {                                                                                        \
            fprintf(stderr, RAW_CL_PROG ": %s failed (%d)\n", #call, (int)e_);                                         \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

/* qsort's order of doubles, ascending. */
static inline int raw_cmp_double(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

/* The first GPU of any platform, else the first device of the first platform;
 * *plat: its platform. */
static inline cl_device_id raw_device(cl_platform_id* plat)
{
    cl_platform_id plats[8];
    cl_uint np = 0;
    cl_device_id dev = NULL;
    CHECK(clGetPlatformIDs(8, plats, &np));
    *plat = plats[0];
    for (cl_uint p = 0; p < np && !dev; ++p)
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_GPU, 1, &dev, NULL) == CL_SUCCESS)
            *plat = plats[p];
        else
            dev = NULL;
    if (!dev) CHECK(clGetDeviceIDs(*plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    return dev;
}

#endif
