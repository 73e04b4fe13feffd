// SPDX-License-Identifier: MIT
// diag.hpp: errors (clerror's thread-local message), tracing and warnings.
#pragma once

#include <stdcl.h>

#include "helpers/calls.hpp"

#include <exception>
#include <string>

#define STDCL_HAVE_DIAG 1

namespace stdcl {

// Trace categories, enabled by STDCL_TRACE=all or a comma list of names.
enum class Trace : unsigned { ctx = 1, load = 2, cache = 4, mem = 8, launch = 16, log = 32 };

bool trace_on(Trace cat);
void trace(Trace cat, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
// One "stdcl: warning: ..." line on stderr per key per process.
void warn_once(const char* key, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

// A failure on its way to an entry point: a code (negative) and a message.
struct Error : std::exception {
    int code;
    std::string msg;
    Error(int c, std::string m) : code(c), msg(std::move(m)) {}
    const char* what() const noexcept override { return msg.c_str(); }
};

[[noreturn]] void fail(int code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
// The libstdcl code (STDCL_E...) of an OpenCL status: one table for every call.
int code_of_cl(cl_int status);
// Throws Error(code_of_cl(status), "<what>: <OpenCL error name> (<status>)") unless
// status is CL_SUCCESS.
void check_cl(cl_int status, const char* what);
// Throws Error(code_of_cl(status), "<formatted>: <OpenCL error name> (<status>)").
[[noreturn]] void fail_cl(cl_int status, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
const char* cl_error_name(cl_int status);

// Records the message for clerror() in this thread.
void set_error(const std::string& msg);
// The message of this thread's last failure if clerror() has not read it, else "".
std::string unread_error();
// For library code that calls an entry point (clsopen, clmalloc...) and turns its
// failure into its own: the message that call recorded, taken out of this
// thread's slot (so it is never handed out twice), or `fallback` when none was
// recorded.  Library code never calls clerror().
std::string take_error(const char* fallback);
// Turns the exception in flight into a recorded error; returns its code.
int record_current_exception();

std::string strprintf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Runs f() as a call in flight (CallScope); any exception becomes a recorded
// error and `on_error` is returned.
template <class R, class F> R guarded(R on_error, F&& f) noexcept
{
    CallScope scope;
    try {
        scope.check();
        return f();
    } catch (...) {
        record_current_exception();
        return on_error;
    }
}

// As guarded, for int-returning calls: the error's own negative code.
template <class F> int guarded_int(F&& f) noexcept
{
    CallScope scope;
    try {
        scope.check();
        return f();
    } catch (...) {
        return record_current_exception();
    }
}

}  // namespace stdcl
