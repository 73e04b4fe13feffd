// SPDX-License-Identifier: MIT
// events.hpp: event flags, the end of every command, and the profile (events.cpp,
// profile.cpp).
#pragma once

#include "contexts/context.hpp"

#include <cstdint>
#include <functional>

namespace stdcl {

// The flags that say what becomes of a command's event.
constexpr int kEventFlags = CL_EVENT_WAIT | CL_EVENT_NOWAIT | CL_EVENT_RELEASE | CL_EVENT_NORELEASE;

// The flags a launch takes: the event flags and CL_EVENT_NOEVENT.
constexpr int kForkFlags = kEventFlags | CL_EVENT_NOEVENT;
// How long a launch may stay unflushed, where it is not flushed each time:
// launches without an event, and NOWAIT launches on a driver that starts them
// without a flush (Device::starts_unflushed).  After the queue's last flush on
// other drivers; after the first launch left unflushed on those.
constexpr std::uint64_t kKernelFlushNs = 200000;

// Launches without an event (CL_EVENT_NOEVENT) on device d's kernel queue.
// noevent_launched, after the enqueue: the launch's number, for the allocations it
// uses; flushes the queue when due (kKernelFlushNs).
std::uint64_t noevent_launched(Device& d) noexcept;
// After launches made with no event and waited for: finishes device devnum's
// kernel queue (in order: every launch enqueued before is done) and, with join,
// counts the event-less launches numbered so far as joined.  Throws when
// clFinish fails.
void noevent_finish(CLCONTEXT* cp, unsigned devnum, const char* call, bool join = true);
// An event the caller releases that completes after event-less launch seq (a
// marker on the kernel queue, shared by every wait up to the newest launch), or
// null when nothing need be waited for: joined by clwait already, or, when no
// marker can be enqueued, the queue finished here.
cl_event noevent_marker(const Device& d, std::uint64_t seq) noexcept;

// Events: track, wait, return per the event flags.
int event_flags_check(int flags);  // throws on WAIT|NOWAIT
// What an enqueued command was, for the profile at exit.
struct CommandTag {
    enum Kind { kernel, to_device, to_host, copy } kind;
    const std::string* name;  // the kernel's (kind kernel), else nullptr
    size_t bytes;  // transfers: bytes given to the command
    bool moved;  // false: a zero-copy sync (a marker: nothing copied)
    bool skipped = false;  // a clmsync with CL_MEM_NOFORCE that moved nothing new (a marker)
    size_t items = 0;  // kernels: the global size (work-items), for the timeline
    bool profiled = false;  // given to the profile already (a primitive's kernels each are)
};
// Waits for, tracks or hands over ev (the command on device devnum) as flags say.
cl_event event_finish(CLCONTEXT* cp, unsigned devnum, cl_event ev, int flags, const CommandTag& tag);

// A command of a call given CL_ALL_DEVICES: one(d, f) enqueues it on device d with
// the event flags f and returns its event (throwing on failure), or NULL when
// device d has nothing to do.  With
// CL_EVENT_NOWAIT each device's event is tracked on its device and the last is
// returned; otherwise all are enqueued before any is waited for, then waited for.
// CL_EVENT_NORELEASE is refused (one event per device would be handed over).
cl_event on_every_device(CLCONTEXT* cp, int flags, const char* call, const std::function<cl_event(unsigned, int)>& one);

// Event profiling (profile.cpp): whether new queues profile (STDCL_PROFILE on,
// or COPRTHR_OPENCL_PROFILING_ENABLE).
bool queue_profiling_wanted();
// The profile at exit (STDCL_PROFILE=1 or =path).  None of these throws; when the
// profile is off (cp->prof null) they return at once.  A command the profile could
// not time (no memory, a failed query) is counted as "not timed", never dropped.
bool profile_report_wanted();
// A new profile for cp (its devices set up), or null when the report is off.
std::shared_ptr<ContextProfile> profile_start(CLCONTEXT* cp) noexcept;
// Counts an enqueued command; done: it has completed (timed now), else its event is
// kept (retained) and timed when it completes.
void profile_command(CLCONTEXT* cp, unsigned devnum, cl_event ev, const CommandTag& tag, bool done) noexcept;
// STDCL_CHECK=sync: bytes a transfer to device devnum sent that its copy held already.
void profile_unchanged(CLCONTEXT* cp, unsigned devnum, size_t bytes) noexcept;
// Times the kept events of device devnum (all devices when devnum < 0) that have
// completed; with finished (the queues are finished) the rest are counted untimed.
void profile_harvest(CLCONTEXT* cp, int devnum, bool finished) noexcept;
// A program build: ms of build_program, whether a compiler ran, whether the
// program cache was consulted.
void profile_build(CLCONTEXT* cp, double ms, bool compiled, bool cache_on) noexcept;
// clopen/clsopen of a program already open in cp (no build).
void profile_reopen(CLCONTEXT* cp) noexcept;
// Prints the report (stderr, or the STDCL_PROFILE file) of every context profiled,
// first timing the commands of contexts still alive.  Called once, at exit.
void profile_report_at_exit() noexcept;

// Releases the events clwait handed out for cp (events.cpp).
void wait_forget_context(CLCONTEXT* cp) noexcept;
// s as a JSON string, quotes included (the profile's and the timeline's files).
std::string json_string(const std::string& s);
// The timeline (timeline.cpp; STDCL_TIMELINE=path).  Commands reach it from the
// profile's event timing, which STDCL_TIMELINE turns on (without the report).
bool timeline_on() noexcept;
std::uint64_t timeline_now() noexcept;  // ns since the library loaded
std::uint16_t timeline_thread() noexcept;  // this thread's number on the timeline
// The offset (host ns minus device ns) of the clock of q's device, from a few
// markers; false when it cannot be had.
bool timeline_calibrate(cl_command_queue q, std::int64_t* offset) noexcept;
// A device queue's track (-1 when there is no memory for it); without a
// calibrated offset, the commands' queued times give it.
int timeline_track(const std::string& name, bool calibrated, std::int64_t offset) noexcept;
std::uint32_t timeline_name(const std::string& name) noexcept;
// One command, its event complete: device times on the device's clock.
struct TimelineCommand {
    std::uint64_t host_ns;  // when its enqueue returned (timeline_now)
    std::uint64_t queued, start, end;  // CL_PROFILING_COMMAND_*
    size_t bytes, items;
    std::uint32_t name;  // timeline_name
    std::uint16_t thread;  // timeline_thread of the enqueuing thread
    std::uint16_t track;
    std::uint8_t kind;  // CommandTag::Kind
    bool moved, failed;
};
void timeline_command(const TimelineCommand& c) noexcept;
// A span of this thread on the host: a wait, a build.
void timeline_span(const char* name, const std::string& detail, std::uint64_t t0, std::uint64_t t1) noexcept;
// Writes the timeline file now (renamed into place whole): 0; -1 when
// STDCL_TIMELINE is unset; -2 in a child of fork() whose path has no %p; else
// the errno of the failed write.  *path: the file's name, where known.
int timeline_write(std::string* path) noexcept;
void timeline_write_at_exit() noexcept;
// Times the commands of every live context seen complete by now (no wait).
void profile_collect() noexcept;

}  // namespace stdcl
