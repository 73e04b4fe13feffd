// profile.cpp: event times: the switch that makes command queues profile
// (STDCL_PROFILE=1, alias COPRTHR_OPENCL_PROFILING_ENABLE) and clevent_times.
#include "internal/core.hpp"
#include "internal/diag.hpp"

#include <cstdlib>
#include <cstring>

namespace stdcl {

namespace {

bool env_on(const char* name, bool strict)
{
    const char* v = std::getenv(name);
    if (!v || !*v || std::strcmp(v, "0") == 0) return false;
    if (strict && std::strcmp(v, "1") != 0) {
        warn_once(name, "%s='%s' is not 0 or 1; taken as 1", name, v);
    }
    return true;
}

}  // namespace

bool queue_profiling_wanted()
{
    // COPRTHR_OPENCL_PROFILING_ENABLE: the name the COPRTHR runtime read (any
    // value but "" and "0" turns it on), kept as an alias.
    return env_on("STDCL_PROFILE", true) || env_on("COPRTHR_OPENCL_PROFILING_ENABLE", false);
}

}  // namespace stdcl

using namespace stdcl;

extern "C" {

STDCL_API int clevent_times(cl_event ev, cl_ulong* start, cl_ulong* end)
{
    return guarded_int([&] {
        if (!ev) fail(STDCL_EINVAL, "clevent_times: the event is NULL");
        cl_int st = CL_QUEUED;
        cl_int err = clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr);
        if (err == CL_INVALID_EVENT)
            fail(STDCL_EINVAL, "clevent_times: %p is not a valid cl_event (released? keep it with CL_EVENT_NORELEASE)",
                 (void*)ev);
        check_cl(err, "clevent_times: clGetEventInfo(CL_EVENT_COMMAND_EXECUTION_STATUS)");
        if (st < 0) fail(STDCL_ESTATE, "clevent_times: the command failed: %s (%d)", cl_error_name(st), int(st));
        if (st != CL_COMPLETE)
            fail(STDCL_ESTATE, "clevent_times: the command has not completed (wait for it first: clwait or "
                 "clWaitForEvents)");
        cl_ulong t0 = 0, t1 = 0;
        err = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, nullptr);
        if (err == CL_SUCCESS) err = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, nullptr);
        if (err == CL_PROFILING_INFO_NOT_AVAILABLE)
            fail(STDCL_ESTATE, "clevent_times: the event's queue does not profile: set STDCL_PROFILE=1 in the "
                 "environment before the program starts");
        check_cl(err, "clevent_times: clGetEventProfilingInfo");
        if (start) *start = t0;
        if (end) *end = t1;
        return 0;
    });
}

}  // extern "C"
