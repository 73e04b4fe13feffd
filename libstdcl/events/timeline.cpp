// SPDX-License-Identifier: MIT
// timeline.cpp: STDCL_TIMELINE=path, a timeline of the process in the Trace
// Event format (Perfetto, chrome://tracing).
//
// One track per device queue (the kernel queue, and the transfer queue where
// there is one) with each command's device start and end, put on the host's
// clock; one track per host thread with the enqueues (an arrow from each to
// its command), the library's waits and its program builds.  The commands
// come from the profile's event timing (profile.cpp: a command is recorded
// when its event is seen complete); the device clock is put on the host's by
// the smallest difference, per track, between the host time an enqueue
// returned and the command's CL_PROFILING_COMMAND_QUEUED.
//
// Memory is bounded: the first kMaxCommands commands and kMaxSpans host
// spans are kept, later ones counted as dropped (the file says how many).
// The file is written at exit by the process that loaded the library (a
// child of fork() that did not exec writes nothing unless the path holds %p),
// and whenever the program calls stdcl_timeline_flush();
// %p in the path becomes the process id, %r the MPI rank, and a path without
// %r in a process that has a rank gets ".rank<N>" before its extension.
#include "events/events.hpp"
#include "config/config.hpp"
#include "helpers/diag.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace stdcl {

namespace {

constexpr size_t kMaxCommands = 1 << 19;  // 524,288 commands: about 32 MiB
constexpr size_t kMaxSpans = 1 << 18;  // 262,144 waits and builds: about 8 MiB

// The timeline's zero, and the process that loaded the library: set at the
// first use (the library's load-time contexts may come before this file's
// static initializers run).
std::chrono::steady_clock::time_point load_time()
{
    static const auto t = std::chrono::steady_clock::now();
    return t;
}
pid_t load_pid()
{
    static const pid_t p = getpid();
    return p;
}

struct Track {
    std::string name;
    bool calibrated = false;  // offset measured with markers (timeline_calibrate)
    bool offset_known = false;
    std::int64_t offset = 0;  // host ns minus device ns
};

struct Span {
    std::uint64_t t0, t1;
    std::uint32_t name, detail;
    std::uint16_t thread;
};

struct Timeline {
    std::mutex mu;
    std::vector<Track> tracks;
    std::vector<TimelineCommand> commands;
    std::vector<Span> spans;
    std::vector<std::string> names;
    std::unordered_map<std::string, std::uint32_t> name_ids;
    std::vector<long> thread_tids;  // the system thread id of each thread number
    std::uint64_t dropped_commands = 0, dropped_spans = 0;
};

Timeline& tl()
{
    static Timeline* t = new Timeline;  // never destroyed: written at exit
    return *t;
}

// The id of name (tl().mu held).
std::uint32_t intern(const std::string& name)
{
    Timeline& t = tl();
    auto it = t.name_ids.find(name);
    if (it != t.name_ids.end()) return it->second;
    std::uint32_t id = std::uint32_t(t.names.size());
    t.names.push_back(name);
    t.name_ids.emplace(name, id);
    return id;
}

thread_local int t_thread = -1;

// The MPI rank of this process, or -1 (Open MPI, MPICH/PMI, PMIx, Slurm).
long mpi_rank()
{
    for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"}) {
        const char* s = env_value(v);
        unsigned long long r = 0;
        if (s && parse_uint(s, 1u << 30, &r)) return long(r);
    }
    return -1;
}

std::string file_name(const std::string& pattern)
{
    long rank = mpi_rank();
    std::string out;
    bool has_rank = false;
    for (size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] == '%' && i + 1 < pattern.size() && (pattern[i + 1] == 'p' || pattern[i + 1] == 'r')) {
            has_rank = has_rank || pattern[i + 1] == 'r';
            out += pattern[i + 1] == 'p' ? std::to_string(long(getpid())) : std::to_string(rank < 0 ? 0 : rank);
            ++i;
        } else {
            out += pattern[i];
        }
    }
    if (rank >= 0 && !has_rank) {
        size_t slash = out.rfind('/');
        size_t dot = out.rfind('.');
        std::string tag = ".rank" + std::to_string(rank);
        if (dot != std::string::npos && (slash == std::string::npos || dot > slash))
            out.insert(dot, tag);
        else
            out += tag;
    }
    return out;
}

double us(std::int64_t ns) { return double(ns) / 1e3; }

const char* kind_cat(std::uint8_t kind)
{
    switch (kind) {
    case CommandTag::kernel: return "kernel";
    case CommandTag::to_device: return "to_device";
    case CommandTag::to_host: return "to_host";
    default: return "copy";
    }
}

std::string render(Timeline& t)
{
    const long pid = long(getpid());
    const int kHostBase = 1, kDeviceBase = 1000;
    // A track whose device could not be calibrated: the smallest difference
    // between the host time an enqueue returned and the command's queued time.
    for (const TimelineCommand& c : t.commands) {
        Track& tr = t.tracks[c.track];
        if (tr.calibrated) continue;
        std::int64_t off = std::int64_t(c.host_ns) - std::int64_t(c.queued);
        if (!tr.offset_known || off < tr.offset) tr.offset = off, tr.offset_known = true;
    }
    std::string out = "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"library\": \"libstdcl " STDCL_VERSION_STRING
                      "\", ";
    out += strprintf("\"pid\": %ld, \"rank\": %ld, \"commands\": %zu, \"dropped_commands\": %" PRIu64
                     ", \"spans\": %zu, \"dropped_spans\": %" PRIu64 ", \"seconds\": %.6f},\n\"traceEvents\": [\n",
                     pid, mpi_rank(), t.commands.size(), t.dropped_commands, t.spans.size(), t.dropped_spans,
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - load_time()).count());
    long rank = mpi_rank();
    std::string pname = rank >= 0 ? strprintf("libstdcl: rank %ld (pid %ld)", rank, pid)
                                  : strprintf("libstdcl: pid %ld", pid);
    out += strprintf("{\"ph\": \"M\", \"pid\": %ld, \"name\": \"process_name\", \"args\": {\"name\": %s}}", pid,
                     json_string(pname).c_str());
    for (size_t i = 0; i < t.thread_tids.size(); ++i) {
        out += strprintf(",\n{\"ph\": \"M\", \"pid\": %ld, \"tid\": %d, \"name\": \"thread_name\", \"args\": "
                         "{\"name\": \"host thread %zu (tid %ld)\"}}",
                         pid, kHostBase + int(i), i, t.thread_tids[i]);
        out += strprintf(",\n{\"ph\": \"M\", \"pid\": %ld, \"tid\": %d, \"name\": \"thread_sort_index\", \"args\": "
                         "{\"sort_index\": %d}}",
                         pid, kHostBase + int(i), int(i));
    }
    for (size_t i = 0; i < t.tracks.size(); ++i) {
        out += strprintf(",\n{\"ph\": \"M\", \"pid\": %ld, \"tid\": %d, \"name\": \"thread_name\", \"args\": "
                         "{\"name\": %s}}",
                         pid, kDeviceBase + int(i), json_string(t.tracks[i].name).c_str());
        out += strprintf(",\n{\"ph\": \"M\", \"pid\": %ld, \"tid\": %d, \"name\": \"thread_sort_index\", \"args\": "
                         "{\"sort_index\": %d}}",
                         pid, kDeviceBase + int(i), 1000 + int(i));
    }
    for (const Span& s : t.spans)
        out += strprintf(",\n{\"ph\": \"X\", \"pid\": %ld, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, \"name\": %s, "
                         "\"cat\": \"host\", \"args\": {\"detail\": %s}}",
                         pid, kHostBase + s.thread, us(std::int64_t(s.t0)), us(std::int64_t(s.t1 - s.t0)),
                         json_string(t.names[s.name]).c_str(), json_string(t.names[s.detail]).c_str());
    for (size_t i = 0; i < t.commands.size(); ++i) {
        const TimelineCommand& c = t.commands[i];
        const Track& tr = t.tracks[c.track];
        std::int64_t start = std::int64_t(c.start) + tr.offset, end = std::int64_t(c.end) + tr.offset;
        if (end < start) end = start;
        std::string args;
        if (c.kind == CommandTag::kernel) {
            args = strprintf("\"work_items\": %zu", c.items);
        } else {
            double ns = double(end - start);
            args = strprintf("\"bytes\": %zu, \"moved\": %s", c.bytes, c.moved ? "true" : "false");
            if (c.moved && ns > 0) args += strprintf(", \"GB_per_s\": %.3f", double(c.bytes) / ns);
        }
        args += strprintf(", \"queued_to_start_us\": %.3f",
                          us(std::int64_t(c.start) - std::int64_t(c.queued)));
        if (c.failed) args += ", \"failed\": true";
        out += strprintf(",\n{\"ph\": \"X\", \"pid\": %ld, \"tid\": %d, \"ts\": %.3f, \"dur\": %.3f, \"name\": %s, "
                         "\"cat\": \"%s\", \"args\": {%s}}",
                         pid, kDeviceBase + int(c.track), us(start), us(end - start),
                         json_string(t.names[c.name]).c_str(), kind_cat(c.kind), args.c_str());
        // The arrow from the enqueue on the host thread to the command.
        out += strprintf(",\n{\"ph\": \"s\", \"pid\": %ld, \"tid\": %d, \"ts\": %.3f, \"id\": %zu, \"name\": "
                         "\"enqueue\", \"cat\": \"enqueue\"}",
                         pid, kHostBase + c.thread, us(std::int64_t(c.host_ns)), i);
        out += strprintf(",\n{\"ph\": \"f\", \"bp\": \"e\", \"pid\": %ld, \"tid\": %d, \"ts\": %.3f, \"id\": %zu, "
                         "\"name\": \"enqueue\", \"cat\": \"enqueue\"}",
                         pid, kDeviceBase + int(c.track), us(std::max(start, std::int64_t(c.host_ns))), i);
    }
    return out + "\n]}\n";
}

}  // namespace

bool timeline_on() noexcept
{
    if (settings().timeline_path.empty()) return false;
    load_pid();  // noted while the loading process is the only one
    return true;
}

std::uint64_t timeline_now() noexcept
{
    return std::uint64_t(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - load_time()).count());
}

std::uint16_t timeline_thread() noexcept
{
    if (t_thread >= 0) return std::uint16_t(t_thread);
    Timeline& t = tl();
    std::lock_guard<std::mutex> lock(t.mu);
    try {
        t.thread_tids.push_back(long(syscall(SYS_gettid)));
    } catch (...) {
        return 0;
    }
    t_thread = int(std::min<size_t>(t.thread_tids.size() - 1, 65535));
    return std::uint16_t(t_thread);
}

bool timeline_calibrate(cl_command_queue q, std::int64_t* offset) noexcept
{
    // A marker's device times lie between the host times around its enqueue
    // and its wait: the tightest of a few such brackets gives the offset to
    // within half its width (microseconds).
    std::uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; ++i) {
        cl_event m = nullptr;
        std::uint64_t h0 = timeline_now();
        if (clEnqueueMarkerWithWaitList(q, 0, nullptr, &m) != CL_SUCCESS || !m) return best != UINT64_MAX;
        cl_int err = clWaitForEvents(1, &m);
        std::uint64_t h1 = timeline_now();
        cl_ulong d0 = 0, d1 = 0;
        if (err == CL_SUCCESS &&
            clGetEventProfilingInfo(m, CL_PROFILING_COMMAND_QUEUED, sizeof d0, &d0, nullptr) == CL_SUCCESS &&
            clGetEventProfilingInfo(m, CL_PROFILING_COMMAND_END, sizeof d1, &d1, nullptr) == CL_SUCCESS &&
            d1 >= d0 && h1 - h0 < best) {
            best = h1 - h0;
            *offset = std::int64_t((h0 + h1) / 2) - std::int64_t((d0 + d1) / 2);
        }
        clReleaseEvent(m);
    }
    return best != UINT64_MAX;
}

int timeline_track(const std::string& name, bool calibrated, std::int64_t offset) noexcept
{
    Timeline& t = tl();
    std::lock_guard<std::mutex> lock(t.mu);
    try {
        Track tr{name};
        tr.calibrated = tr.offset_known = calibrated;
        tr.offset = offset;
        t.tracks.push_back(tr);
    } catch (...) {
        return -1;
    }
    return int(t.tracks.size() - 1);
}

std::uint32_t timeline_name(const std::string& name) noexcept
{
    Timeline& t = tl();
    std::lock_guard<std::mutex> lock(t.mu);
    try {
        return intern(name);
    } catch (...) {
        return 0;
    }
}

void timeline_command(const TimelineCommand& c) noexcept
{
    Timeline& t = tl();
    std::lock_guard<std::mutex> lock(t.mu);
    if (c.track >= t.tracks.size()) return;
    if (t.commands.size() >= kMaxCommands) {
        ++t.dropped_commands;
        return;
    }
    try {
        t.commands.push_back(c);
    } catch (...) {
        ++t.dropped_commands;
    }
}

void timeline_span(const char* name, const std::string& detail, std::uint64_t t0, std::uint64_t t1) noexcept
{
    if (!timeline_on()) return;
    std::uint16_t thread = timeline_thread();
    Timeline& t = tl();
    std::lock_guard<std::mutex> lock(t.mu);
    if (t.spans.size() >= kMaxSpans) {
        ++t.dropped_spans;
        return;
    }
    try {
        t.spans.push_back(Span{t0, t1, intern(name), intern(detail), thread});
    } catch (...) {
        ++t.dropped_spans;
    }
}

int timeline_write(std::string* path_out) noexcept
{
    if (!timeline_on()) return -1;
    const std::string& pattern = settings().timeline_path;
    // A child of fork() that did not exec would write over its parent's file.
    if (getpid() != load_pid() && pattern.find("%p") == std::string::npos) return -2;
    try {
        Timeline& t = tl();
        std::string text;
        {
            std::lock_guard<std::mutex> lock(t.mu);
            text = render(t);
        }
        std::string path = file_name(pattern);
        if (path_out) *path_out = path;
        // Written whole beside it and renamed: a viewer opening the file while
        // a flush runs sees the last complete timeline.
        std::string tmp = path + ".tmp" + std::to_string(long(getpid()));
        FILE* f = std::fopen(tmp.c_str(), "w");
        if (!f) return errno ? errno : EIO;
        bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
        int err = ok ? 0 : (errno ? errno : EIO);
        if (std::fclose(f) != 0 && !err) err = errno ? errno : EIO;
        if (!err && std::rename(tmp.c_str(), path.c_str()) != 0) err = errno ? errno : EIO;
        if (err) std::remove(tmp.c_str());
        return err;
    } catch (...) {
        return ENOMEM;
    }
}

void timeline_write_at_exit() noexcept
{
    std::string path = settings().timeline_path;
    int err = timeline_write(&path);
    if (err > 0)
        std::fprintf(stderr, "stdcl: STDCL_TIMELINE: writing '%s' failed (%s): no timeline\n", path.c_str(),
                     std::strerror(err));
}

}  // namespace stdcl
