// SPDX-License-Identifier: MIT
// wait.cpp: the library's waits for a device (wait.hpp): the driver's own,
// or a poll of the events' status that spins for kWaitSpinNs and then sleeps
// (or yields) between looks.
#include "events/wait.hpp"
#include "config/config.hpp"
#include "contexts/context.hpp"
#include "events/events.hpp"
#include "helpers/diag.hpp"

#include <sched.h>
#include <time.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include <algorithm>

namespace stdcl {

namespace {

std::uint64_t now_ns() noexcept
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return std::uint64_t(t.tv_sec) * 1000000000u + std::uint64_t(t.tv_nsec);
}

// The sleep between two looks: 1/64 of the time waited so far (a wait ends
// at most about 1.6% after its command, plus the thread's wake-up), from
// 10 us up to 1 ms.
constexpr std::uint64_t kMinSleepNs = 10000;
constexpr std::uint64_t kMaxSleepNs = 1000000;

// While a poll sleeps, the thread's timer slack (how late Linux may end a
// sleep so as to batch wake-ups: 50 us by default, more than the sleep
// itself) is kSleepSlackNs; the thread's own comes back when the poll ends.
constexpr unsigned long kSleepSlackNs = 1000;

class TightSleeps {
public:
    TightSleeps() = default;
    TightSleeps(const TightSleeps&) = delete;
    TightSleeps& operator=(const TightSleeps&) = delete;
    ~TightSleeps()
    {
#if defined(__linux__)
        if (saved_ > 0) prctl(PR_SET_TIMERSLACK, saved_, 0, 0, 0);
#endif
    }
    // Before each sleep: the first sets the slack.
    void arm() noexcept
    {
#if defined(__linux__)
        if (saved_ != 0) return;
        int old = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
        if (old <= 0 || static_cast<unsigned long>(old) <= kSleepSlackNs ||
            prctl(PR_SET_TIMERSLACK, kSleepSlackNs, 0, 0, 0) != 0)
            saved_ = -1;  // left as it is
        else
            saved_ = old;
#endif
    }

private:
    long saved_ = 0;  // 0 not looked at yet, -1 left alone
};

void pause_briefly() noexcept
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

// Flushes the queue of each event (a polled command must have been handed to
// the device; clWaitForEvents would flush it).  A user event has no queue.
void flush_queues(cl_uint n, const cl_event* evs) noexcept
{
    cl_command_queue last = nullptr;
    for (cl_uint i = 0; i < n; ++i) {
        cl_command_queue q = nullptr;
        if (clGetEventInfo(evs[i], CL_EVENT_COMMAND_QUEUE, sizeof q, &q, nullptr) != CL_SUCCESS || !q || q == last)
            continue;
        clFlush(q);  // a failure shows in the wait
        last = q;
    }
}

// Looks at the events until each has completed or failed; returns how long
// that took (ns), or UINT64_MAX when a status query failed (the caller then
// waits as the driver does).
std::uint64_t poll(WaitPolicy p, cl_uint n, const cl_event* evs) noexcept
{
    const std::uint64_t t0 = now_ns();
    TightSleeps slack;
    cl_uint done = 0;  // the events before it have ended
    for (;;) {
        while (done < n) {
            cl_int st = CL_QUEUED;
            if (clGetEventInfo(evs[done], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr) != CL_SUCCESS)
                return UINT64_MAX;
            if (st > CL_COMPLETE) break;  // queued, submitted or running (a failure is negative)
            ++done;
        }
        std::uint64_t waited = now_ns() - t0;
        if (done == n) return waited;
        if (waited < kWaitSpinNs) {
            for (int i = 0; i < 16; ++i) pause_briefly();
        } else if (p == WaitPolicy::yield) {
            sched_yield();
        } else {
            std::uint64_t s = std::clamp<std::uint64_t>(waited / 64, kMinSleepNs, kMaxSleepNs);
            timespec ts{time_t(s / 1000000000u), long(s % 1000000000u)};
            slack.arm();
            nanosleep(&ts, nullptr);
        }
    }
}

// Adaptive: what a wait that took ns says about the next one.
void note_wait(const Device& d, std::uint64_t ns) noexcept
{
    if (d.wait != WaitPolicy::adaptive || ns == UINT64_MAX) return;
    bool was = d.events->waits_long.load(std::memory_order_relaxed);
    bool now = ns >= kWaitSpinNs;
    if (was == now) return;
    d.events->waits_long.store(now, std::memory_order_relaxed);
    trace(Trace::ctx, "%s: a wait took %.3f ms: its waits %s", d.name.c_str(), ns / 1e6,
          now ? "poll and sleep (adaptive)" : "are the driver's again (adaptive)");
}

}  // namespace

WaitPolicy wait_policy_for(const std::string& platform) noexcept
{
    switch (settings().wait) {
    case 1: return WaitPolicy::driver;
    case 2: return WaitPolicy::block;
    case 3: return WaitPolicy::yield;
    case 4: return WaitPolicy::adaptive;
    default: break;
    }
    // NVIDIA's clWaitForEvents and clFinish keep a core busy for as long as
    // they wait; PoCL's sleep.
    return platform == "NVIDIA CUDA" ? WaitPolicy::adaptive : WaitPolicy::driver;
}

const char* wait_policy_name(WaitPolicy p) noexcept
{
    switch (p) {
    case WaitPolicy::block: return "block";
    case WaitPolicy::yield: return "yield";
    case WaitPolicy::adaptive: return "adaptive";
    default: return "driver";
    }
}

bool wait_polls(const Device& d) noexcept
{
    switch (d.wait) {
    case WaitPolicy::block:
    case WaitPolicy::yield: return true;
    case WaitPolicy::adaptive: return d.events->waits_long.load(std::memory_order_relaxed);
    default: return false;
    }
}

namespace {

cl_int wait_events_now(const Device& d, cl_uint n, const cl_event* evs) noexcept
{
    if (n == 0 || !evs) return clWaitForEvents(n, evs);
    if (!wait_polls(d)) {
        if (d.wait != WaitPolicy::adaptive) return clWaitForEvents(n, evs);
        std::uint64_t t0 = now_ns();
        cl_int err = clWaitForEvents(n, evs);
        note_wait(d, now_ns() - t0);
        return err;
    }
    flush_queues(n, evs);
    note_wait(d, poll(d.wait == WaitPolicy::yield ? WaitPolicy::yield : WaitPolicy::block, n, evs));
    return clWaitForEvents(n, evs);
}

cl_int finish_queue_now(const Device& d, cl_command_queue q) noexcept
{
    if (!wait_polls(d)) {
        if (d.wait != WaitPolicy::adaptive) return clFinish(q);
        std::uint64_t t0 = now_ns();
        cl_int err = clFinish(q);
        note_wait(d, now_ns() - t0);
        return err;
    }
    cl_event m = nullptr;
    if (clEnqueueMarkerWithWaitList(q, 0, nullptr, &m) == CL_SUCCESS && m) {
        clFlush(q);
        note_wait(d, poll(d.wait == WaitPolicy::yield ? WaitPolicy::yield : WaitPolicy::block, 1, &m));
        clReleaseEvent(m);
    }
    return clFinish(q);
}

// The timeline's span of a wait on device d.
void wait_span(const Device& d, std::uint64_t t0, bool polled) noexcept
{
    try {
        timeline_span(polled ? "wait (polled)" : "wait", d.name, t0, timeline_now());
    } catch (...) {
    }
}

}  // namespace

cl_int wait_events(const Device& d, cl_uint n, const cl_event* evs) noexcept
{
    if (!timeline_on()) return wait_events_now(d, n, evs);
    std::uint64_t t0 = timeline_now();
    bool polled = wait_polls(d);
    cl_int err = wait_events_now(d, n, evs);
    wait_span(d, t0, polled);
    return err;
}

cl_int poll_events(const Device& d, cl_uint n, const cl_event* evs) noexcept
{
    if (n == 0 || !evs) return clWaitForEvents(n, evs);
    const bool tl = timeline_on();
    std::uint64_t t0 = tl ? timeline_now() : 0;
    flush_queues(n, evs);
    cl_int err = CL_SUCCESS;
    if (poll(d.wait == WaitPolicy::yield ? WaitPolicy::yield : WaitPolicy::block, n, evs) == UINT64_MAX) {
        err = clWaitForEvents(n, evs);
    } else {
        for (cl_uint i = 0; i < n && err == CL_SUCCESS; ++i) {
            cl_int st = CL_COMPLETE;
            err = clGetEventInfo(evs[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr);
            if (err != CL_SUCCESS)
                err = clWaitForEvents(n, evs);
            else if (st < 0)
                err = st;
        }
    }
    if (tl) wait_span(d, t0, true);
    return err;
}

cl_int finish_queue(const Device& d, cl_command_queue q) noexcept
{
    if (!timeline_on()) return finish_queue_now(d, q);
    std::uint64_t t0 = timeline_now();
    bool polled = wait_polls(d);
    cl_int err = finish_queue_now(d, q);
    wait_span(d, t0, polled);
    return err;
}

}  // namespace stdcl
