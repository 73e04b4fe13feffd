/* helper_profile.c: a fresh process for the tests of settings read when
 * libstdcl loads.
 *   times     runs a kernel on stdcpu device 0 with CL_EVENT_NORELEASE and
 *             prints "times ok" when clevent_times gives end >= start > 0,
 *             or "times error <code>: <clerror()>"
 *   buildlog  builds a text with a #warning as 'warned.cl' (clsopen_named)
 *             and prints "log <devnum>: <clbuildlog>" per device
 * Exit status 0, or 1 when a call other than clevent_times fails. */
#include <stdio.h>
#include <string.h>

#include <stdcl.h>

static const char* k_src = "__kernel void twice(__global int* a) { int i = get_global_id(0); a[i] = 2 * a[i]; }\n";
static const char* k_warn_src =
    "#warning stdcl-test-warning\n"
    "__kernel void warned(__global int* a) { a[get_global_id(0)] = 7; }\n";

int main(int argc, char** argv)
{
    if (!stdcpu) {
        printf("no stdcpu: %s\n", clerror());
        return 1;
    }
    if (argc > 1 && strcmp(argv[1], "buildlog") == 0) {
        void* h = clsopen_named(stdcpu, k_warn_src, "warned.cl", 0);
        if (!h) {
            printf("clsopen_named: %s\n", clerror());
            return 1;
        }
        for (unsigned d = 0; d < clgetndev(stdcpu); d++) printf("log %u: %s\n", d, clbuildlog(stdcpu, h, d));
        return 0;
    }
    void* h = clsopen(stdcpu, k_src, 0);
    cl_kernel k = h ? clsym(stdcpu, h, "twice", 0) : NULL;
    int* a = (int*)clmalloc(stdcpu, 1024 * sizeof(int), 0);
    if (!k || !a) {
        printf("setup: %s\n", clerror());
        return 1;
    }
    for (int i = 0; i < 1024; i++) a[i] = i;
    clmsync(stdcpu, 0, a, CL_MEM_DEVICE);
    clndrange_t ndr = clndrange_init1d(0, 1024, 0);
    cl_event ev = clforka(stdcpu, 0, k, &ndr, CL_EVENT_WAIT | CL_EVENT_NORELEASE, a);
    if (!ev) {
        printf("clforka: %s\n", clerror());
        return 1;
    }
    cl_ulong t0 = 0, t1 = 0;
    int rc = clevent_times(ev, &t0, &t1);
    if (rc == 0 && t0 > 0 && t1 >= t0) printf("times ok (%llu ns)\n", (unsigned long long)(t1 - t0));
    else if (rc == 0) printf("times wrong: start %llu end %llu\n", (unsigned long long)t0, (unsigned long long)t1);
    else printf("times error %d: %s\n", rc, clerror());
    clReleaseEvent(ev);
    clfree(a);
    clclose(stdcpu, h);
    return 0;
}
