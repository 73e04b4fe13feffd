/* SPDX-License-Identifier: MIT */
/* event_costs.c: what the driver calls around a launch cost, one by one, in
 * raw OpenCL (the Makefile links OpenCL alone).  BENCHMARKS.md (Table 1.11)
 * uses it to say where a libstdcl launch's time goes beyond raw OpenCL's.
 *
 *   event_costs [-n calls] [-r rounds]
 *
 * Each row times `calls` calls (default 20000) in a loop, `rounds` times
 * (default 5), and prints the median time per call:
 *   launch             clEnqueueNDRangeKernel of an empty kernel, no event
 *   launch + event     the same with an event, released at once
 *   retain + release   clRetainEvent and clReleaseEvent of a completed event
 *   status query       clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS)
 *   wait (complete)    clWaitForEvents of one completed event
 *   flush              clFlush of an idle queue
 *   finish (idle)      clFinish of an idle queue
 *   marker             clEnqueueMarkerWithWaitList with an event, released
 *   wait (1000)        clWaitForEvents of 1000 completed launches' events, a
 *                      call, per event
 *   release (last)     clReleaseEvent of the last reference to a completed
 *                      launch's event (the launches made and finished first,
 *                      in batches of 1000, outside the time)
 * Launch rows finish the queue after each batch of 1000 launches (inside the
 * time).  Uses the first GPU, else the first device of the first platform.
 */
#define RAW_CL_PROG "event_costs"
#include "raw_cl.h"

#include <string.h>

enum { LAUNCH, LAUNCH_EVENT, RETAIN, STATUS, WAIT, FLUSH, FINISH, MARKER, WAIT_MANY, RELEASE_LAST, NROWS };
static const char* names[NROWS] = {"launch",          "launch + event", "retain + release", "status query",
                                   "wait (complete)", "flush",          "finish (idle)",    "marker",
                                   "wait (1000)",     "release (last)"};

int main(int argc, char** argv)
{
    long calls = 20000;
    int rounds = 5;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            calls = atol(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [-n calls] [-r rounds]\n", argv[0]);
            return 2;
        }
    }
    if (calls < 1000 || rounds < 1 || rounds > 99) {
        fprintf(stderr, "event_costs: -n 1000 or more, -r 1..99\n");
        return 2;
    }
    cl_platform_id plat;
    cl_device_id dev = raw_device(&plat);
    char pname[256] = "", dname[256] = "";
    clGetPlatformInfo(plat, CL_PLATFORM_NAME, sizeof pname, pname, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dname, dname, NULL);
    printf("event_costs: %s, %s; %ld calls a round, median of %d rounds\n", pname, dname, calls, rounds);

    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    CHECK(err);
    const char* src = "__kernel void empty(__global int* x) { }";
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "empty", &err);
    CHECK(err);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof buf, &buf));
    size_t g = 1;
    cl_event done = NULL;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, &done));
    CHECK(clFinish(q));

    printf("%-18s %10s\n", "call", "ns a call");
    cl_event* batch = malloc(1000 * sizeof *batch);
    if (!batch) return 1;
    for (int r = 0; r < NROWS; ++r) {
        double t[99];
        if (r == RELEASE_LAST || r == WAIT_MANY) {
            for (int round = 0; round < rounds + 1; ++round) {
                double spent = 0;
                for (long i = 0; i < calls; i += 1000) {
                    for (int j = 0; j < 1000; ++j) CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, &batch[j]));
                    CHECK(clFinish(q));
                    double t0 = raw_now_ns();
                    if (r == WAIT_MANY) {
                        CHECK(clWaitForEvents(1000, batch));
                        spent += raw_now_ns() - t0;
                    }
                    for (int j = 0; j < 1000; ++j) CHECK(clReleaseEvent(batch[j]));
                    if (r == RELEASE_LAST) spent += raw_now_ns() - t0;
                }
                if (round > 0) t[round - 1] = spent / (double)(calls / 1000 * 1000);
            }
            qsort(t, (size_t)rounds, sizeof t[0], raw_cmp_double);
            printf("%-18s %10.1f\n", names[r], t[rounds / 2]);
            continue;
        }
        for (int round = 0; round < rounds + 1; ++round) { /* round 0: warm-up */
            double t0 = raw_now_ns();
            for (long i = 0; i < calls; ++i) {
                cl_event e = NULL;
                cl_int st = 0;
                switch (r) {
                case LAUNCH: CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL)); break;
                case LAUNCH_EVENT:
                    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, &e));
                    CHECK(clReleaseEvent(e));
                    break;
                case RETAIN:
                    CHECK(clRetainEvent(done));
                    CHECK(clReleaseEvent(done));
                    break;
                case STATUS:
                    CHECK(clGetEventInfo(done, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
                    break;
                case WAIT: CHECK(clWaitForEvents(1, &done)); break;
                case FLUSH: CHECK(clFlush(q)); break;
                case FINISH: CHECK(clFinish(q)); break;
                case MARKER:
                    CHECK(clEnqueueMarkerWithWaitList(q, 0, NULL, &e));
                    CHECK(clReleaseEvent(e));
                    break;
                }
                if ((r == LAUNCH || r == LAUNCH_EVENT || r == MARKER) && i % 1000 == 999) CHECK(clFinish(q));
            }
            CHECK(clFinish(q));
            if (round > 0) t[round - 1] = (raw_now_ns() - t0) / (double)calls;
        }
        qsort(t, (size_t)rounds, sizeof t[0], raw_cmp_double);
        printf("%-18s %10.1f\n", names[r], t[rounds / 2]);
    }
    free(batch);
    clReleaseEvent(done);
    clReleaseKernel(k);
    clReleaseMemObject(buf);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}
