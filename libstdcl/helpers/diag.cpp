// SPDX-License-Identifier: MIT
// diag.cpp: clerror() and its thread-local message, the trace switch, warnings.
#include "helpers/diag.hpp"
#include "config/config.hpp"

#include <stdcl.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <set>
#include <string>

namespace stdcl {

namespace {

struct ErrorSlot {
    std::string pending;  // message of the last failure, not yet read
    std::string returned;  // storage for the string clerror() handed out
    bool has = false;
};
thread_local ErrorSlot t_err;

unsigned parse_trace_mask()
{
    const char* v = settings().trace.c_str();
    Switch sw = parse_switch(v);
    if (sw == Switch::unset || sw == Switch::off) return 0;
    if (sw == Switch::on || strcasecmp(v, "all") == 0) return ~0u;
    static const struct {
        const char* name;
        Trace cat;
    } names[] = {{"ctx", Trace::ctx}, {"load", Trace::load},     {"cache", Trace::cache},
                 {"mem", Trace::mem}, {"launch", Trace::launch}, {"log", Trace::log}};
    unsigned mask = 0;
    std::string s(v);
    size_t pos = 0;
    while (pos <= s.size()) {
        size_t end = s.find(',', pos);
        if (end == std::string::npos) end = s.size();
        std::string word = s.substr(pos, end - pos);
        bool known = false;
        for (const auto& n : names)
            if (strcasecmp(word.c_str(), n.name) == 0) {
                mask |= unsigned(n.cat);
                known = true;
            }
        if (!known && !word.empty() && strcasecmp(word.c_str(), "all") == 0) mask = ~0u, known = true;
        if (!known && !word.empty())
            std::fprintf(stderr,
                         "stdcl: warning: STDCL_TRACE: unknown category '%s' "
                         "(known: all, ctx, load, cache, mem, launch, log)\n",
                         word.c_str());
        pos = end + 1;
    }
    return mask;
}

unsigned trace_mask()
{
    static const unsigned mask = parse_trace_mask();
    return mask;
}

const char* trace_name(Trace cat)
{
    switch (cat) {
    case Trace::ctx: return "ctx";
    case Trace::load: return "load";
    case Trace::cache: return "cache";
    case Trace::mem: return "mem";
    case Trace::launch: return "launch";
    case Trace::log: return "log";
    }
    return "?";
}

std::string vformat(const char* fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = std::vsnprintf(nullptr, 0, fmt, ap2);
    va_end(ap2);
    if (n <= 0) return std::string();
    std::string out(size_t(n), '\0');
    std::vsnprintf(&out[0], size_t(n) + 1, fmt, ap);
    return out;
}

}  // namespace

bool trace_on(Trace cat) { return (trace_mask() & unsigned(cat)) != 0; }

void trace(Trace cat, const char* fmt, ...)
{
    if (!trace_on(cat)) return;
    va_list ap;
    va_start(ap, fmt);
    std::string line = "stdcl[" + std::string(trace_name(cat)) + "]: " + vformat(fmt, ap) + "\n";
    va_end(ap);
    std::fputs(line.c_str(), stderr);
}

void warn_once(const char* key, const char* fmt, ...)
{
    static std::mutex mu;
    static std::set<std::string>* seen = new std::set<std::string>();  // never destroyed: usable at exit
    {
        std::lock_guard<std::mutex> lock(mu);
        if (!seen->insert(key).second) return;
    }
    va_list ap;
    va_start(ap, fmt);
    std::string line = "stdcl: warning: " + vformat(fmt, ap) + "\n";
    va_end(ap);
    std::fputs(line.c_str(), stderr);
}

std::string strprintf(const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    std::string s = vformat(fmt, ap);
    va_end(ap);
    return s;
}

void fail(int code, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    std::string s = vformat(fmt, ap);
    va_end(ap);
    throw Error(code, std::move(s));
}

const char* cl_error_name(cl_int status)
{
    switch (status) {
#define N(x)                                                                                                           \
    case x: return #x;
        N(CL_SUCCESS)
        N(CL_DEVICE_NOT_FOUND)
        N(CL_DEVICE_NOT_AVAILABLE)
        N(CL_COMPILER_NOT_AVAILABLE) N(CL_MEM_OBJECT_ALLOCATION_FAILURE) N(CL_OUT_OF_RESOURCES) N(CL_OUT_OF_HOST_MEMORY)
            N(CL_PROFILING_INFO_NOT_AVAILABLE) N(CL_MEM_COPY_OVERLAP) N(CL_IMAGE_FORMAT_MISMATCH)
                N(CL_IMAGE_FORMAT_NOT_SUPPORTED) N(CL_BUILD_PROGRAM_FAILURE) N(CL_MAP_FAILURE)
                    N(CL_MISALIGNED_SUB_BUFFER_OFFSET) N(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) N(
                        CL_COMPILE_PROGRAM_FAILURE) N(CL_LINKER_NOT_AVAILABLE) N(CL_LINK_PROGRAM_FAILURE)
                        N(CL_DEVICE_PARTITION_FAILED) N(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) N(CL_INVALID_VALUE) N(
                            CL_INVALID_DEVICE_TYPE) N(CL_INVALID_PLATFORM) N(CL_INVALID_DEVICE) N(CL_INVALID_CONTEXT)
                            N(CL_INVALID_QUEUE_PROPERTIES) N(CL_INVALID_COMMAND_QUEUE) N(CL_INVALID_HOST_PTR)
                                N(CL_INVALID_MEM_OBJECT) N(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) N(CL_INVALID_IMAGE_SIZE)
                                    N(CL_INVALID_SAMPLER) N(CL_INVALID_BINARY) N(CL_INVALID_BUILD_OPTIONS)
                                        N(CL_INVALID_PROGRAM) N(CL_INVALID_PROGRAM_EXECUTABLE) N(CL_INVALID_KERNEL_NAME)
                                            N(CL_INVALID_KERNEL_DEFINITION) N(CL_INVALID_KERNEL) N(CL_INVALID_ARG_INDEX)
                                                N(CL_INVALID_ARG_VALUE) N(CL_INVALID_ARG_SIZE) N(CL_INVALID_KERNEL_ARGS)
                                                    N(CL_INVALID_WORK_DIMENSION) N(CL_INVALID_WORK_GROUP_SIZE)
                                                        N(CL_INVALID_WORK_ITEM_SIZE) N(CL_INVALID_GLOBAL_OFFSET)
                                                            N(CL_INVALID_EVENT_WAIT_LIST) N(CL_INVALID_EVENT) N(
                                                                CL_INVALID_OPERATION) N(CL_INVALID_GL_OBJECT)
                                                                N(CL_INVALID_BUFFER_SIZE) N(CL_INVALID_MIP_LEVEL) N(
                                                                    CL_INVALID_GLOBAL_WORK_SIZE) N(CL_INVALID_PROPERTY)
                                                                    N(CL_INVALID_IMAGE_DESCRIPTOR)
                                                                        N(CL_INVALID_COMPILER_OPTIONS)
                                                                            N(CL_INVALID_LINKER_OPTIONS)
                                                                                N(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef N
                                                                                    default
            : return "unknown OpenCL error";
    }
}

int code_of_cl(cl_int status)
{
    // The one mapping from an OpenCL status to a libstdcl code, used by every call
    // (the OpenCL status itself is named in the message).
    switch (status) {
    case CL_SUCCESS: return 0;
    case CL_OUT_OF_HOST_MEMORY:
    case CL_OUT_OF_RESOURCES:
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_INVALID_BUFFER_SIZE: return STDCL_ENOMEM;
    case CL_BUILD_PROGRAM_FAILURE:
    case CL_COMPILE_PROGRAM_FAILURE:
    case CL_LINK_PROGRAM_FAILURE:
    case CL_INVALID_BUILD_OPTIONS:
    case CL_INVALID_COMPILER_OPTIONS:
    case CL_INVALID_LINKER_OPTIONS: return STDCL_EBUILD;
    case CL_INVALID_VALUE:
    case CL_INVALID_ARG_INDEX:
    case CL_INVALID_ARG_VALUE:
    case CL_INVALID_ARG_SIZE:
    case CL_INVALID_KERNEL_ARGS:
    case CL_INVALID_WORK_DIMENSION:
    case CL_INVALID_WORK_GROUP_SIZE:
    case CL_INVALID_WORK_ITEM_SIZE:
    case CL_INVALID_GLOBAL_OFFSET:
    case CL_INVALID_GLOBAL_WORK_SIZE:
    case CL_INVALID_IMAGE_SIZE:
    case CL_INVALID_IMAGE_FORMAT_DESCRIPTOR:
    case CL_IMAGE_FORMAT_NOT_SUPPORTED:
    case CL_MISALIGNED_SUB_BUFFER_OFFSET:
    case CL_INVALID_KERNEL_NAME: return STDCL_EINVAL;
    default: return STDCL_ECL;
    }
}

void check_cl(cl_int status, const char* what)
{
    if (status == CL_SUCCESS) return;
    fail(code_of_cl(status), "%s: %s (%d)", what, cl_error_name(status), int(status));
}

void fail_cl(cl_int status, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    std::string s = vformat(fmt, ap);
    va_end(ap);
    throw Error(code_of_cl(status), s + strprintf(": %s (%d)", cl_error_name(status), int(status)));
}

void set_error(const std::string& msg)
{
    t_err.pending = msg;
    t_err.has = true;
    trace(Trace::ctx, "error: %s", msg.c_str());
}

int record_current_exception()
{
    try {
        throw;
    } catch (const Error& e) {
        set_error(e.msg);
        return e.code;
    } catch (const std::bad_alloc&) {
        set_error("out of host memory");
        return STDCL_ENOMEM;
    } catch (const std::exception& e) {
        set_error(std::string("internal error: ") + e.what());
        return STDCL_ECL;
    } catch (...) {
        set_error("internal error");
        return STDCL_ECL;
    }
}

}  // namespace stdcl

using namespace stdcl;

namespace stdcl {

std::string unread_error() { return t_err.has ? t_err.pending : std::string(); }

std::string take_error(const char* fallback)
{
    if (!t_err.has) return fallback;
    std::string msg;
    msg.swap(t_err.pending);
    t_err.has = false;
    return msg;
}

}  // namespace stdcl

extern "C" STDCL_API char* clerror(void)
{
    if (!t_err.has) return nullptr;
    t_err.returned.swap(t_err.pending);
    t_err.pending.clear();
    t_err.has = false;
    return &t_err.returned[0];
}

extern "C" STDCL_API void stdcl_seterror(const char* msg)
{
    if (!msg) {
        t_err.pending.clear();
        t_err.has = false;
        return;
    }
    guarded(0, [&] {
        set_error(msg);
        return 0;
    });
}

extern "C" STDCL_API const char* stdcl_version(void) { return STDCL_VERSION_STRING; }
