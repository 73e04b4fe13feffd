// SPDX-License-Identifier: MIT
// profile.cpp: event times and the profile at exit.
//
// STDCL_PROFILE=1 (or =path) makes command queues profile and prints, at exit,
// per context and device: each kernel with its launches and device time, the
// bytes clmsync and clmcopy moved with their rate, and the context's builds.
// COPRTHR_OPENCL_PROFILING_ENABLE (the COPRTHR runtime's name) turns on queue
// profiling only, for clevent_times.
//
// Every command goes through event_finish (events.cpp), which calls
// profile_command: a command that has completed is timed at once; the event of a
// CL_EVENT_NOWAIT command is retained and timed when it is seen complete (at
// clwait, when many are kept, when the context is released, or at exit).
#include "events/events.hpp"
#include "memory/memory.hpp"
#include "config/config.hpp"
#include "helpers/diag.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace stdcl {

namespace {

const auto g_loaded = std::chrono::steady_clock::now();

// Counts and times of one kernel or one kind of transfer on one device.
struct Stat {
    uint64_t count = 0;  // commands enqueued
    uint64_t bytes = 0;  // bytes given to them (transfers)
    uint64_t timed = 0;  // commands with device times
    uint64_t timed_bytes = 0;
    uint64_t ns = 0;  // device time of the timed ones
    uint64_t max_ns = 0;
};

// Transfer rows, in the order they are printed.
// Skipped: clmsync with CL_MEM_NOFORCE that had nothing new to move (its bytes
// are the bytes not moved).  Unchanged: bytes sent to a device that held them
// already (known only under STDCL_CHECK=sync; also counted as sent).
enum XferRow { row_to_device, row_to_host, row_copy, row_zero_copy, row_skipped, row_unchanged, n_rows };
const char* const kRowText[n_rows] = {"clmsync to device",  "clmsync to host",           "clmcopy on device",
                                      "clmsync, zero-copy", "clmsync skipped (NOFORCE)", "sent, already there"};
const char* const kRowJson[n_rows] = {"to_device",      "to_host",         "device_copy",
                                      "zero_copy_sync", "noforce_skipped", "to_device_unchanged"};

struct Pending {
    cl_event ev;
    Stat* stat;
    size_t bytes;
    TimelineCommand tc;  // with STDCL_TIMELINE: what the timeline records (track unset)
};

struct DeviceProfile {
    std::mutex mu;
    std::string name;
    bool zero_copy = false;
    cl_command_queue queue = nullptr, xfer = nullptr;  // valid while the context lives
    std::map<std::string, Stat> kernels;  // nodes never move: Pending points at them
    Stat rows[n_rows];
    std::vector<Pending> pending;  // retained events of commands not seen complete
    size_t harvest_at = 1024;  // pending size at which completed ones are timed
    uint64_t untimed = 0;  // commands whose times could not be had
    uint64_t failed = 0;  // commands that completed with an error
    int track_kernel = -1, track_xfer = -1;  // the timeline's tracks of the two queues
};

}  // namespace

std::string json_string(const std::string& s)
{
    std::string out = "\"";
    for (unsigned char ch : s) {
        if (ch == '"' || ch == '\\') {
            out += '\\';
            out += char(ch);
        } else if (ch < 0x20) {
            out += strprintf("\\u%04x", ch);
        } else {
            out += char(ch);
        }
    }
    return out + "\"";
}

struct ContextProfile {
    std::mutex mu;  // the fields below but devs' contents (each has its own)
    bool alive = true;
    std::string label, platform;
    std::vector<std::unique_ptr<DeviceProfile>> devs;
    uint64_t builds = 0, compiled = 0, cache_hits = 0, cache_misses = 0, reopened = 0;
    double build_ms = 0, compile_ms = 0;
};

namespace {

// Every profile made, in creation order (never destroyed: read at exit).
struct ProfileList {
    std::mutex mu;
    std::vector<std::shared_ptr<ContextProfile>> all;
};
ProfileList& profiles()
{
    static ProfileList* l = new ProfileList;
    return *l;
}

// Device times of a completed command: false when they cannot be had.
bool event_ns(cl_event ev, uint64_t* ns)
{
    cl_ulong t0 = 0, t1 = 0;
    if (clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, nullptr) != CL_SUCCESS ||
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, nullptr) != CL_SUCCESS || t1 < t0)
        return false;
    *ns = t1 - t0;
    return true;
}

// The command's times for the timeline (tc: what profile_command noted).
void record(DeviceProfile& dev, cl_event ev, cl_int st, TimelineCommand tc)
{
    cl_ulong q = 0, t0 = 0, t1 = 0;
    if (clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_QUEUED, sizeof q, &q, nullptr) != CL_SUCCESS ||
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, nullptr) != CL_SUCCESS ||
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, nullptr) != CL_SUCCESS)
        return;
    cl_command_queue on = nullptr;
    clGetEventInfo(ev, CL_EVENT_COMMAND_QUEUE, sizeof on, &on, nullptr);
    int track = on && on == dev.xfer && dev.xfer != dev.queue ? dev.track_xfer : dev.track_kernel;
    if (track < 0) return;
    tc.track = std::uint16_t(track);
    tc.queued = q;
    tc.start = t0;
    tc.end = t1;
    tc.failed = st < 0;
    timeline_command(tc);
}

// Times a command whose event has reached status st (dev.mu held).
void settle(DeviceProfile& dev, Stat& s, size_t bytes, cl_event ev, cl_int st, const TimelineCommand* tc)
{
    if (tc && timeline_on()) record(dev, ev, st, *tc);
    uint64_t ns = 0;
    if (st < 0) {
        ++dev.failed;
    } else if (event_ns(ev, &ns)) {
        ++s.timed;
        s.timed_bytes += bytes;
        s.ns += ns;
        if (ns > s.max_ns) s.max_ns = ns;
    } else {
        ++dev.untimed;
    }
}

// Times the kept events that have completed (dev.mu held); with finished, the
// rest too (counted untimed if still not complete).
void harvest(DeviceProfile& dev, bool finished)
{
    size_t keep = 0;
    for (Pending& p : dev.pending) {
        cl_int st = CL_QUEUED;
        if (clGetEventInfo(p.ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr) != CL_SUCCESS)
            st = CL_QUEUED;
        if (st == CL_COMPLETE || st < 0) {
            settle(dev, *p.stat, p.bytes, p.ev, st, &p.tc);
            clReleaseEvent(p.ev);
        } else if (finished) {
            ++dev.untimed;
            clReleaseEvent(p.ev);
        } else {
            dev.pending[keep++] = p;
        }
    }
    dev.pending.resize(keep);
    dev.harvest_at = std::max<size_t>(1024, 2 * keep);
}

Stat& stat_of(DeviceProfile& dev, const CommandTag& tag)
{
    if (tag.skipped) return dev.rows[row_skipped];
    switch (tag.kind) {
    case CommandTag::kernel: return dev.kernels[tag.name ? *tag.name : std::string("(unnamed)")];
    case CommandTag::to_device: return dev.rows[tag.moved ? row_to_device : row_zero_copy];
    case CommandTag::to_host: return dev.rows[tag.moved ? row_to_host : row_zero_copy];
    case CommandTag::copy: break;
    }
    return dev.rows[row_copy];
}

// ---- the report ---------------------------------------------------------

bool busy(const DeviceProfile& d)
{
    if (!d.kernels.empty() || d.untimed || d.failed) return true;
    for (const Stat& s : d.rows)
        if (s.count) return true;
    return false;
}

bool busy(const ContextProfile& c)
{
    if (c.builds || c.reopened) return true;
    for (const auto& d : c.devs)
        if (busy(*d)) return true;
    return false;
}


std::string ms_text(uint64_t ns) { return strprintf("%.3f", double(ns) / 1e6); }
std::string us_text(double ns) { return strprintf("%.2f", ns / 1e3); }
std::string rate_text(const Stat& s)
{
    return s.ns ? strprintf("%.2f", double(s.timed_bytes) / double(s.ns)) : std::string("-");
}

// A table: a header row and rows, the first column left-aligned, the others right.
std::string table(const std::vector<std::vector<std::string>>& rows, const char* indent)
{
    std::vector<size_t> w;
    for (const auto& r : rows)
        for (size_t i = 0; i < r.size(); ++i) {
            if (w.size() <= i) w.push_back(0);
            w[i] = std::max(w[i], r[i].size());
        }
    std::string out;
    for (const auto& r : rows) {
        std::string line = indent;
        for (size_t i = 0; i < r.size(); ++i) {
            if (i == 0)
                line += r[i] + std::string(w[i] - r[i].size(), ' ');
            else
                line += "  " + std::string(w[i] - r[i].size(), ' ') + r[i];
        }
        while (!line.empty() && line.back() == ' ') line.pop_back();
        out += line + "\n";
    }
    return out;
}

std::string text_report(const std::vector<std::shared_ptr<ContextProfile>>& all, double secs)
{
    std::string out = strprintf("stdcl profile: process %ld, %.3f s from library load to exit\n", long(getpid()), secs);
    std::vector<std::string> idle;
    for (const auto& cpf : all) {
        const ContextProfile& c = *cpf;
        if (!busy(c)) {
            idle.push_back(c.label);
            continue;
        }
        out += strprintf("\n%s: platform '%s', %zu device(s)\n", c.label.c_str(), c.platform.c_str(), c.devs.size());
        if (c.builds || c.reopened) {
            out += strprintf("  builds: %" PRIu64 " compiled in %.1f ms", c.compiled, c.compile_ms);
            if (c.compiled) {
                if (c.cache_misses)
                    out += strprintf(" (%" PRIu64 " program cache miss(es))", c.cache_misses);
                else
                    out += " (program cache off)";
            }
            out += strprintf("; %" PRIu64 " from the program cache (hits) in %.1f ms", c.cache_hits,
                             c.build_ms - c.compile_ms);
            if (c.reopened) out += strprintf("; %" PRIu64 " clopen of a program already open", c.reopened);
            out += "\n";
        }
        for (size_t i = 0; i < c.devs.size(); ++i) {
            const DeviceProfile& d = *c.devs[i];
            if (!busy(d)) {
                out += strprintf("  device %zu: %s: no commands\n", i, d.name.c_str());
                continue;
            }
            out += strprintf("  device %zu: %s\n", i, d.name.c_str());
            if (!d.kernels.empty()) {
                std::vector<std::vector<std::string>> rows = {{"kernel", "launches", "total ms", "mean us", "max us"}};
                for (const auto& k : d.kernels) {
                    const Stat& s = k.second;
                    rows.push_back({k.first, std::to_string(s.count), ms_text(s.ns),
                                    s.timed ? us_text(double(s.ns) / double(s.timed)) : "-",
                                    s.timed ? us_text(double(s.max_ns)) : "-"});
                }
                out += table(rows, "    ");
            }
            std::vector<std::vector<std::string>> rows = {{"transfer", "count", "bytes", "total ms", "GB/s"}};
            for (int r = 0; r < n_rows; ++r) {
                const Stat& s = d.rows[r];
                if (!s.count) continue;
                bool moved = r != row_zero_copy && r != row_skipped && r != row_unchanged;
                rows.push_back({kRowText[r], std::to_string(s.count), std::to_string(s.bytes),
                                r == row_unchanged ? "-" : ms_text(s.ns), moved ? rate_text(s) : "no copy"});
            }
            if (rows.size() > 1) out += table(rows, "    ");
            if (d.untimed)
                out += strprintf("    %" PRIu64 " command(s) not timed (profiling information not available)\n",
                                 d.untimed);
            if (d.failed) out += strprintf("    %" PRIu64 " command(s) failed on the device\n", d.failed);
        }
    }
    if (!idle.empty()) {
        out += "\nnothing run in:";
        for (size_t i = 0; i < idle.size(); ++i) out += (i ? ", " : " ") + idle[i];
        out += "\n";
    }
    return out;
}

std::string stat_json(const Stat& s)
{
    return strprintf("\"count\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"timed\": %" PRIu64 ", \"total_ns\": %" PRIu64
                     ", \"max_ns\": %" PRIu64,
                     s.count, s.bytes, s.timed, s.ns, s.max_ns);
}

std::string json_report(const std::vector<std::shared_ptr<ContextProfile>>& all, double secs)
{
    std::string out = strprintf("{\"pid\": %ld, \"seconds\": %.6f, \"contexts\": [", long(getpid()), secs);
    for (size_t ci = 0; ci < all.size(); ++ci) {
        const ContextProfile& c = *all[ci];
        out += ci ? ",\n  {" : "\n  {";
        out += "\"label\": " + json_string(c.label) + ", \"platform\": " + json_string(c.platform);
        out += strprintf(", \"builds\": {\"count\": %" PRIu64 ", \"ms\": %.3f, \"compiled\": %" PRIu64
                         ", \"compile_ms\": %.3f, \"cache_hits\": %" PRIu64 ", \"cache_misses\": %" PRIu64
                         ", \"reopened\": %" PRIu64 "}",
                         c.builds, c.build_ms, c.compiled, c.compile_ms, c.cache_hits, c.cache_misses, c.reopened);
        out += ", \"devices\": [";
        for (size_t i = 0; i < c.devs.size(); ++i) {
            const DeviceProfile& d = *c.devs[i];
            out += strprintf("%s\n    {\"index\": %zu, \"name\": %s, \"zero_copy\": %s, \"kernels\": [", i ? "," : "",
                             i, json_string(d.name).c_str(), d.zero_copy ? "true" : "false");
            bool first = true;
            for (const auto& k : d.kernels) {
                out += strprintf("%s\n      {\"name\": %s, %s}", first ? "" : ",", json_string(k.first).c_str(),
                                 stat_json(k.second).c_str());
                first = false;
            }
            out += "], \"transfers\": {";
            for (int r = 0; r < n_rows; ++r)
                out += strprintf("%s\"%s\": {%s}", r ? ", " : "", kRowJson[r], stat_json(d.rows[r]).c_str());
            out += strprintf("}, \"untimed\": %" PRIu64 ", \"failed\": %" PRIu64 "}", d.untimed, d.failed);
        }
        out += "]}";
    }
    return out + "]}\n";
}

// STDCL_PROFILE's file name: %p becomes the process id (one file per MPI rank).
std::string profile_path(const char* v)
{
    std::string out;
    for (const char* s = v; *s; ++s) {
        if (s[0] == '%' && s[1] == 'p') {
            out += std::to_string(long(getpid()));
            ++s;
        } else {
            out += *s;
        }
    }
    return out;
}

void write_report(const std::string& text)
{
    const std::string& where = settings().profile_path;
    if (!where.empty()) {
        std::string path = profile_path(where.c_str());
        if (FILE* f = std::fopen(path.c_str(), "w")) {
            bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
            ok = std::fclose(f) == 0 && ok;
            if (ok) return;
            std::fprintf(stderr, "stdcl: STDCL_PROFILE: writing '%s' failed (%s); the profile follows here\n",
                         path.c_str(), std::strerror(errno));
        } else {
            std::fprintf(stderr, "stdcl: STDCL_PROFILE: cannot write '%s' (%s); the profile follows here\n",
                         path.c_str(), std::strerror(errno));
        }
    }
    std::fwrite(text.data(), 1, text.size(), stderr);
    std::fflush(stderr);
}

ContextProfile* profile_of(CLCONTEXT* cp) { return cp ? cp->prof.get() : nullptr; }

}  // namespace

bool queue_profiling_wanted() { return settings().queue_profiling; }

bool profile_report_wanted() { return settings().profile || timeline_on(); }

std::shared_ptr<ContextProfile> profile_start(CLCONTEXT* cp) noexcept
{
    if (!profile_report_wanted()) return nullptr;
    try {
        auto p = std::make_shared<ContextProfile>();
        p->label = cp->label;
        p->platform = cp->platform_name;
        p->devs.reserve(cp->devs.size());
        for (const Device& d : cp->devs) {
            auto dp = std::make_unique<DeviceProfile>();
            dp->name = d.name;
            dp->zero_copy = d.zero_copy;
            dp->queue = d.queue;
            dp->xfer = d.xfer;
            if (timeline_on()) {
                std::string base = strprintf("%s device %zu: %s", cp->label.c_str(), p->devs.size(), d.name.c_str());
                bool two = d.xfer && d.xfer != d.queue;
                std::int64_t offset = 0;
                bool calibrated = timeline_calibrate(d.queue, &offset);  // both queues: one device clock
                dp->track_kernel = timeline_track(two ? base + ", kernels" : base, calibrated, offset);
                dp->track_xfer = two ? timeline_track(base + ", transfers", calibrated, offset) : dp->track_kernel;
            }
            p->devs.push_back(std::move(dp));
        }
        std::lock_guard<std::mutex> lock(profiles().mu);
        profiles().all.push_back(p);
        return p;
    } catch (...) {
        warn_once("profile memory", "STDCL_PROFILE: out of host memory: %s is not profiled", cp->label.c_str());
        return nullptr;
    }
}

void profile_command(CLCONTEXT* cp, unsigned devnum, cl_event ev, const CommandTag& tag, bool done) noexcept
{
    ContextProfile* p = profile_of(cp);
    if (!p || devnum >= p->devs.size()) return;
    DeviceProfile& dev = *p->devs[devnum];
    std::lock_guard<std::mutex> lock(dev.mu);
    Stat* s;
    try {
        s = &stat_of(dev, tag);
    } catch (...) {  // no memory for a new kernel's row
        ++dev.untimed;
        return;
    }
    ++s->count;
    s->bytes += tag.bytes;
    TimelineCommand tc{};
    if (timeline_on()) {
        static const char* const kXfer[] = {"", "clmsync to device", "clmsync to host", "clmcopy"};
        tc.host_ns = timeline_now();
        tc.thread = timeline_thread();
        tc.kind = std::uint8_t(tag.kind);
        tc.bytes = tag.bytes;
        tc.items = tag.items;
        tc.moved = tag.moved && !tag.skipped;
        std::string name = tag.kind == CommandTag::kernel ? (tag.name ? *tag.name : std::string("(unnamed)"))
            : tag.skipped                                 ? std::string("clmsync skipped (NOFORCE)")
            : !tag.moved                                  ? std::string("clmsync, zero-copy")
                                                          : std::string(kXfer[tag.kind]);
        tc.name = timeline_name(name);
    }
    if (done) {
        cl_int st = CL_COMPLETE;
        if (clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr) != CL_SUCCESS) {
            ++dev.untimed;
            return;
        }
        settle(dev, *s, tag.bytes, ev, st, &tc);
        return;
    }
    try {
        dev.pending.reserve(dev.pending.size() + 1);
    } catch (...) {
        ++dev.untimed;
        return;
    }
    if (clRetainEvent(ev) != CL_SUCCESS) {
        ++dev.untimed;
        return;
    }
    dev.pending.push_back(Pending{ev, s, tag.bytes, tc});
    if (dev.pending.size() >= dev.harvest_at) harvest(dev, false);
}

void profile_unchanged(CLCONTEXT* cp, unsigned devnum, size_t bytes) noexcept
{
    ContextProfile* p = profile_of(cp);
    if (!p || devnum >= p->devs.size()) return;
    DeviceProfile& dev = *p->devs[devnum];
    std::lock_guard<std::mutex> lock(dev.mu);
    ++dev.rows[row_unchanged].count;
    dev.rows[row_unchanged].bytes += bytes;
}

void profile_harvest(CLCONTEXT* cp, int devnum, bool finished) noexcept
{
    ContextProfile* p = profile_of(cp);
    if (!p) return;
    for (size_t i = 0; i < p->devs.size(); ++i) {
        if (devnum >= 0 && size_t(devnum) != i) continue;
        std::lock_guard<std::mutex> lock(p->devs[i]->mu);
        harvest(*p->devs[i], finished);
    }
    if (finished && devnum < 0) {  // the context is being released
        std::lock_guard<std::mutex> lock(p->mu);
        p->alive = false;
        for (auto& d : p->devs) d->queue = d->xfer = nullptr;
    }
}

void profile_build(CLCONTEXT* cp, double ms, bool compiled, bool cache_on) noexcept
{
    ContextProfile* p = profile_of(cp);
    if (!p) return;
    if (timeline_on()) {
        std::uint64_t now = timeline_now(), took = std::uint64_t(ms * 1e6);
        timeline_span(compiled ? "build (compiled)" : "build (from the program cache)", cp->label,
                      now > took ? now - took : 0, now);
    }
    std::lock_guard<std::mutex> lock(p->mu);
    ++p->builds;
    p->build_ms += ms;
    if (compiled) {
        ++p->compiled;
        p->compile_ms += ms;
        if (cache_on) ++p->cache_misses;
    } else {
        ++p->cache_hits;
    }
}

void profile_reopen(CLCONTEXT* cp) noexcept
{
    ContextProfile* p = profile_of(cp);
    if (!p) return;
    std::lock_guard<std::mutex> lock(p->mu);
    ++p->reopened;
}

namespace {

// Every profile so far; the commands of the contexts still alive timed: with
// finish, after their queues finish (those still pending counted untimed),
// else those seen complete by now.  Throws std::bad_alloc.
std::vector<std::shared_ptr<ContextProfile>> collect_live(bool finish)
{
    std::vector<std::shared_ptr<ContextProfile>> all;
    {
        std::lock_guard<std::mutex> lock(profiles().mu);
        all = profiles().all;
    }
    for (const auto& c : all) {
        std::lock_guard<std::mutex> lock(c->mu);
        if (!c->alive) continue;
        for (auto& d : c->devs) {
            if (finish && d->queue) clFinish(d->queue);
            if (finish && d->xfer && d->xfer != d->queue) clFinish(d->xfer);
            std::lock_guard<std::mutex> dl(d->mu);
            harvest(*d, finish);
        }
    }
    return all;
}

}  // namespace

void profile_collect() noexcept
{
    try {
        collect_live(false);
    } catch (...) {
        // out of host memory: the commands are timed at the next collection
    }
}

void profile_report_at_exit() noexcept
{
    if (!profile_report_wanted()) return;
    try {
        // Contexts the program did not release: their queues finished, their commands timed.
        auto all = collect_live(true);
        double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - g_loaded).count();
        if (settings().profile)
            write_report(settings().profile_json ? json_report(all, secs) : text_report(all, secs));
        timeline_write_at_exit();
    } catch (...) {
        std::fputs("stdcl: STDCL_PROFILE: out of host memory: no profile\n", stderr);
    }
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
            fail(STDCL_ESTATE,
                 "clevent_times: the command has not completed (wait for it first: clwait or "
                 "clWaitForEvents)");
        cl_ulong t0 = 0, t1 = 0;
        err = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, nullptr);
        if (err == CL_SUCCESS) err = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, nullptr);
        if (err == CL_PROFILING_INFO_NOT_AVAILABLE)
            fail(STDCL_ESTATE,
                 "clevent_times: the event's queue does not profile: set STDCL_PROFILE=1 in the "
                 "environment before the program starts");
        check_cl(err, "clevent_times: clGetEventProfilingInfo");
        if (start) *start = t0;
        if (end) *end = t1;
        return 0;
    });
}

STDCL_API int stdcl_timeline_flush(void)
{
    return guarded_int([&] {
        if (!timeline_on())
            fail(STDCL_ESTATE,
                 "stdcl_timeline_flush: no timeline is kept: set STDCL_TIMELINE=FILE in the environment before the "
                 "program starts");
        profile_collect();
        std::string path = settings().timeline_path;
        int err = timeline_write(&path);
        if (err == -2)
            fail(STDCL_ESTATE,
                 "stdcl_timeline_flush: this process is a child of fork(): it would write over its parent's "
                 "timeline '%s' (put %%p in STDCL_TIMELINE for a file per process)",
                 path.c_str());
        if (err == ENOMEM) fail(STDCL_ENOMEM, "stdcl_timeline_flush: out of host memory");
        if (err)
            fail(STDCL_ENOENT, "stdcl_timeline_flush: writing '%s' failed: %s", path.c_str(), std::strerror(err));
        return 0;
    });
}

}  // extern "C"
