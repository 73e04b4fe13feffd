// SPDX-License-Identifier: MIT
// config.cpp: the only reader of the environment.  The settings that shape the
// library's objects (queues, memory, checks, trace, profile) are read once, when
// the library loads; the ones a call looks up (kernel path, build options, the
// program cache's folder and bound, clreduce's layout, the MPI launcher's rank)
// are read at that call, through the same parsers.
#include <stdcl.h>
#include "config/config.hpp"
#include "helpers/diag.hpp"

#include <strings.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace stdcl {

Switch parse_switch(const char* v) noexcept
{
    if (!v || !*v) return Switch::unset;
    static const char* const on[] = {"1", "on", "yes", "true"};
    static const char* const off[] = {"0", "off", "no", "false"};
    for (const char* w : on)
        if (strcasecmp(v, w) == 0) return Switch::on;
    for (const char* w : off)
        if (strcasecmp(v, w) == 0) return Switch::off;
    return Switch::invalid;
}

bool parse_uint(const char* v, unsigned long long max, unsigned long long* out) noexcept
{
    if (!v || !*v) return false;
    unsigned long long n = 0;
    for (const char* p = v; *p; ++p) {
        if (*p < '0' || *p > '9') return false;
        unsigned d = unsigned(*p - '0');
        if (n > (max - d) / 10) return false;
        n = n * 10 + d;
    }
    *out = n;
    return true;
}

bool parse_size(const char* text, std::uint64_t* bytes) noexcept
{
    if (!text) return false;
    const char* p = text;
    while (*p == ' ') ++p;
    if (*p < '0' || *p > '9') return false;
    std::uint64_t v = 0;
    for (; *p >= '0' && *p <= '9'; ++p) {
        if (v > (UINT64_MAX - 9) / 10) return false;
        v = v * 10 + static_cast<std::uint64_t>(*p - '0');
    }
    int shift = 0;
    switch (*p) {
    case 'k':
    case 'K':
        shift = 10;
        ++p;
        break;
    case 'm':
    case 'M':
        shift = 20;
        ++p;
        break;
    case 'g':
    case 'G':
        shift = 30;
        ++p;
        break;
    case 't':
    case 'T':
        shift = 40;
        ++p;
        break;
    default: break;
    }
    if (shift && (*p == 'i' || *p == 'I')) {
        ++p;
        if (*p != 'b' && *p != 'B') return false;
    }
    if (*p == 'b' || *p == 'B') ++p;
    while (*p == ' ') ++p;
    if (*p != '\0') return false;
    if (shift && v > (UINT64_MAX >> shift)) return false;
    *bytes = v << shift;
    return true;
}

const char* env_value(const char* name) noexcept { return std::getenv(name); }

int env_switch(const char* name, int dflt)
{
    const char* v = env_value(name);
    switch (parse_switch(v)) {
    case Switch::on: return 1;
    case Switch::off: return 0;
    case Switch::invalid:
        warn_once(name, "%s='%s' is not on or off (1/0, on/off, yes/no, true/false); ignored", name, v);
        return dflt;
    case Switch::unset: break;
    }
    return dflt;
}

std::vector<std::string> env_values(const char* const* names, size_t n)
{
    std::vector<std::string> out;
    for (size_t i = 0; i < n; ++i)
        if (const char* v = env_value(names[i])) out.push_back(std::string(names[i]) + "=" + v);
    return out;
}

const char* env_setting(const std::string& var, const char* key)
{
    static std::mutex mu;
    static std::map<std::string, std::string>* kept = new std::map<std::string, std::string>;  // usable at exit
    if (key) {
        std::string name = var + "_";
        for (const char* k = key; *k; ++k) name += char(toupper(static_cast<unsigned char>(*k)));
        if (const char* v = env_value(name.c_str())) return v;
    }
    const char* whole = env_value(var.c_str());
    if (!whole) return nullptr;
    if (!strchr(whole, ':') && !strchr(whole, '=')) return key ? nullptr : whole;  // the plain STDX=0|1
    for (const auto& clause : split_list(whole, ':')) {
        size_t eq = clause.find('=');
        std::string value;
        if (eq == std::string::npos) {
            if (key) continue;
            value = clause;
        } else {
            if (!key || clause.size() < strlen(key) || strncasecmp(clause.c_str(), key, strlen(key)) != 0 ||
                eq != strlen(key))
                continue;
            value = clause.substr(eq + 1);
        }
        std::lock_guard<std::mutex> lock(mu);
        std::string& slot = (*kept)[var + "\n" + (key ? key : "")];
        slot = value;
        return slot.c_str();
    }
    return nullptr;
}

std::vector<std::string> split_list(const std::string& s, char sep)
{
    std::vector<std::string> out;
    size_t pos = 0;
    while (pos <= s.size()) {
        size_t end = s.find(sep, pos);
        if (end == std::string::npos) end = s.size();
        std::string w = s.substr(pos, end - pos);
        size_t a = w.find_first_not_of(" \t"), b = w.find_last_not_of(" \t");
        if (a != std::string::npos) out.push_back(w.substr(a, b - a + 1));
        pos = end + 1;
    }
    return out;
}

namespace {

Settings read_settings()
{
    Settings s;
    s.zero_copy = env_switch("STDCL_ZERO_COPY", true);
    s.overlap = env_switch("STDCL_OVERLAP", true);
    s.launch_events = env_switch("STDCL_LAUNCH_EVENTS", true);
    s.pinned = env_switch("STDCL_PINNED", true);
    if (const char* v = env_value("STDCL_PIN_MIN"); v && *v) {
        std::uint64_t n = 0;
        if (parse_size(v, &n))
            s.pin_min = n;
        else
            warn_once("STDCL_PIN_MIN", "STDCL_PIN_MIN='%s' is not a size such as 256K; ignored", v);
    }
    // STDCL_CHECK: on/off (on: overrun, as before), or a comma list of checks
    // (overrun, sync, fill, all) and an action for the sync check's findings (report,
    // error, abort).
    if (const char* v = env_value("STDCL_CHECK"); v && *v) {
        Switch sw = parse_switch(v);
        if (sw == Switch::on) s.check = true;
        if (sw == Switch::invalid)
            for (const std::string& w : split_list(v, ',')) {
                if (strcasecmp(w.c_str(), "overrun") == 0)
                    s.check = true;
                else if (strcasecmp(w.c_str(), "sync") == 0)
                    s.check_sync = true;
                else if (strcasecmp(w.c_str(), "fill") == 0)
                    s.check_fill = true;
                else if (strcasecmp(w.c_str(), "all") == 0)
                    s.check = s.check_sync = s.check_fill = true;
                else if (strcasecmp(w.c_str(), "report") == 0)
                    s.check_action = 0;
                else if (strcasecmp(w.c_str(), "error") == 0)
                    s.check_action = 1;
                else if (strcasecmp(w.c_str(), "abort") == 0)
                    s.check_action = 2;
                else
                    warn_once(
                        "STDCL_CHECK",
                        "STDCL_CHECK: '%s' is not one of overrun, sync, fill, all, report, error, abort (or on/off); "
                        "ignored",
                        w.c_str());
            }
    }
    if (const char* v = env_value("STDCL_WAIT"); v && *v && strcasecmp(v, "auto") != 0) {
        if (strcasecmp(v, "driver") == 0)
            s.wait = 1;
        else if (strcasecmp(v, "block") == 0)
            s.wait = 2;
        else if (strcasecmp(v, "yield") == 0)
            s.wait = 3;
        else if (strcasecmp(v, "adaptive") == 0)
            s.wait = 4;
        else
            warn_once("STDCL_WAIT", "STDCL_WAIT='%s' is not one of auto, driver, block, yield, adaptive: auto", v);
    }
    if (const char* v = env_value("STDCL_TRACE")) s.trace = v;
    // STDCL_PROFILE: on (to standard error), off, or a file's path.
    if (const char* v = env_value("STDCL_PROFILE")) {
        Switch sw = parse_switch(v);
        s.profile = sw == Switch::on || sw == Switch::invalid;
        if (sw == Switch::invalid) s.profile_path = v;
    }
    if (const char* v = env_value("STDCL_PROFILE_FORMAT"); v && *v) {
        s.profile_json = strcmp(v, "json") == 0;
        if (!s.profile_json && strcmp(v, "table") != 0)
            warn_once("STDCL_PROFILE_FORMAT", "STDCL_PROFILE_FORMAT='%s' is not 'table' or 'json': a table follows", v);
    }
    // COPRTHR's name: any value but empty and 0 turns the queues' profiling on, as
    // the COPRTHR runtime read it.
    const char* cp = env_value("COPRTHR_OPENCL_PROFILING_ENABLE");
    // STDCL_TIMELINE: a file's path (%p: the process id, %r: the MPI rank); off
    // (or 0) and empty leave it off.
    if (const char* v = env_value("STDCL_TIMELINE"); v && *v && parse_switch(v) != Switch::off) {
        if (parse_switch(v) == Switch::on)
            warn_once("STDCL_TIMELINE", "STDCL_TIMELINE='%s' is not a file's path: no timeline", v);
        else
            s.timeline_path = v;
    }
    s.queue_profiling = s.profile || !s.timeline_path.empty() || (cp && *cp && strcmp(cp, "0") != 0);
    s.load_threads = env_switch("STDCL_LOAD_THREADS", -1);
    return s;
}

}  // namespace

const Settings& settings()
{
    static const Settings s = read_settings();
    return s;
}

}  // namespace stdcl
