// SPDX-License-Identifier: MIT
// config.hpp: the environment, read only in config.cpp.  One on/off grammar, one
// integer and one size parser for every variable; stdcl(7) lists them in one table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace stdcl {

// One on/off value: 1, on, yes, true / 0, off, no, false (any case).
enum class Switch : unsigned char { unset, on, off, invalid };
Switch parse_switch(const char* v) noexcept;  // NULL or "": unset
// Decimal digits only (no sign, no spaces), at most max.
bool parse_uint(const char* v, unsigned long long max, unsigned long long* out) noexcept;
// "123", "64K", "256M", "1G", "2T" (also "256MB", "256MiB"; powers of 1024).
bool parse_size(const char* text, std::uint64_t* bytes) noexcept;

// A variable's value now (NULL: unset).  For the settings read at each use.
const char* env_value(const char* name) noexcept;
// A variable's on/off setting now, 1 or 0: dflt when unset or empty; a value outside the
// grammar is warned about once and dflt returned.
int env_switch(const char* name, int dflt);

// A default context's setting: key NULL gives STDX itself (var is "STDGPU", ...),
// key "max_ndev" gives STDX_MAX_NDEV, and so on.  When that variable is unset, STDX
// may hold STDCL 1.6's form, colon-separated clauses "key=value" (key matched
// case-insensitively) and one bare clause (the 0/1 switch):
// STDGPU="1:platform_name=AMD:max_ndev=2:lock=7".  NULL when neither gives a value.
// The strings live until exit.
const char* env_setting(const std::string& var, const char* key);

// The settings read once, when the library loads.
struct Settings {
    bool zero_copy = true;  // STDCL_ZERO_COPY
    bool overlap = true;  // STDCL_OVERLAP
    // STDCL_LAUNCH_EVENTS: off makes a NOWAIT launch without CL_EVENT_NORELEASE
    // one without an event (CL_EVENT_NOEVENT).
    bool launch_events = true;
    bool pinned = true;  // STDCL_PINNED
    std::uint64_t pin_min = 256 << 10;  // STDCL_PIN_MIN
    bool check = false;  // STDCL_CHECK: 1 or overrun (guard zones)
    bool check_sync = false;  // STDCL_CHECK: sync (sync_check.cpp)
    bool check_fill = false;  // STDCL_CHECK: fill (new memory holds a signalling NaN pattern)
    int check_action = 0;  // STDCL_CHECK's action for findings: 0 report, 1 error, 2 abort
    // STDCL_WAIT: 0 auto (unset), 1 driver, 2 block, 3 yield, 4 adaptive (events/wait.cpp).
    int wait = 0;
    std::string trace;  // STDCL_TRACE, as given
    bool profile = false;  // STDCL_PROFILE on (or a path)
    std::string profile_path;  // STDCL_PROFILE's path; empty: standard error
    bool profile_json = false;  // STDCL_PROFILE_FORMAT=json
    bool queue_profiling = false;  // STDCL_PROFILE, STDCL_TIMELINE or COPRTHR_OPENCL_PROFILING_ENABLE
    std::string timeline_path;  // STDCL_TIMELINE: where the timeline goes (empty: off)
    // STDCL_LOAD_THREADS: the platforms' default contexts made in parallel: 1 on,
    // 0 off, -1 (unset) when the program was linked with the library (not dlopen).
    int load_threads = -1;
};
const Settings& settings();

// The values of the listed variables that are set, as "NAME=value".
std::vector<std::string> env_values(const char* const* names, size_t n);

// Splits "a,b,c" into words (trimmed, empty ones dropped).
std::vector<std::string> split_list(const std::string& s, char sep);

}  // namespace stdcl
