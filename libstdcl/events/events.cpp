// SPDX-License-Identifier: MIT
// events.cpp: what happens to the event of each enqueued command (wait, track, hand
// over), and clflush/clwait, which join the events tracked per device.
#include "events/events.hpp"
#include "helpers/cl_util.hpp"
#include "helpers/diag.hpp"
#include "memory/sync_check.hpp"

#include <algorithm>
#include <chrono>

namespace stdcl {

namespace {

// Tracked lists are pruned of completed events when they grow past this, so a
// program that never calls clwait does not grow without bound.
constexpr size_t kPruneAt = 4096;

// The list's reference to e, an event that leaves its list (el.mu held):
// released, or kept in el.retired while a clwait may still be waiting for it.
// False, and e stays listed, when el.retired has no room.
bool drop_listed(EventList& el, cl_event e) noexcept
{
    if (el.waiting == 0) {
        clReleaseEvent(e);
        return true;
    }
    try {
        el.retired.push_back(e);
    } catch (...) {
        return false;  // a later clwait finds it complete
    }
    return true;
}

void prune_completed(EventList& el, std::vector<cl_event>& list)
{
    size_t keep = 0;
    for (cl_event e : list) {
        cl_int st = CL_QUEUED;
        clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr);
        // Pending or failed (clwait reports it): kept.
        if (st != CL_COMPLETE || !drop_listed(el, e)) list[keep++] = e;
    }
    list.resize(keep);
}

// Takes out of list (el.mu held) the n events at w that a clwait waited for: they
// were the whole list when it took them, so they are its first n events unless
// another call took some out meanwhile (then they are looked up, w sorted).
void remove_waited(EventList& el, std::vector<cl_event>& list, cl_event* w, size_t n) noexcept
{
    if (n == 0) return;
    bool prefix = list.size() >= n && std::equal(w, w + n, list.begin());
    if (!prefix) std::sort(w, w + n);
    size_t keep = 0;
    for (size_t i = 0; i < list.size(); ++i) {
        cl_event e = list[i];
        bool waited = prefix ? i < n : std::binary_search(w, w + n, e);
        if (!waited || !drop_listed(el, e)) list[keep++] = e;
    }
    list.resize(keep);
}

}  // namespace

namespace {

// Flushes d's kernel queue when its last flush of this kind was kKernelFlushNs ago
// or more: the first launch after a pause starts at once, one in a burst at most
// kKernelFlushNs later or at clflush/clwait.  Of two threads due at once, one
// flushes.  On a driver that starts a kernel without a flush
// (Device::starts_unflushed) the flush only hands over a burst: it comes
// kKernelFlushNs after the burst's first unflushed launch at the latest, and a
// launch alone (a program's first, the first after a wait) makes none.
void flush_when_due(Device& d) noexcept
{
    EventList& el = *d.events;
    std::uint64_t now = std::uint64_t(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
    if (d.starts_unflushed) {
        std::uint64_t since = el.unflushed_since_ns.load(std::memory_order_relaxed);
        if (since == 0)
            el.unflushed_since_ns.compare_exchange_strong(since, now, std::memory_order_relaxed);
        else if (now - since >= kKernelFlushNs &&
                 el.unflushed_since_ns.compare_exchange_strong(since, 0, std::memory_order_relaxed))
            clFlush(d.queue);
        return;
    }
    std::uint64_t last = el.flushed_ns.load(std::memory_order_relaxed);
    if (now - last >= kKernelFlushNs && el.flushed_ns.compare_exchange_strong(last, now, std::memory_order_relaxed))
        clFlush(d.queue);
}

// The kernel queue was flushed (a wait for its commands flushes it): what a
// burst left unflushed is handed over.
void kernel_queue_flushed(Device& d) noexcept
{
    d.events->unflushed_since_ns.store(0, std::memory_order_relaxed);
}

}  // namespace

std::uint64_t noevent_launched(Device& d) noexcept
{
    std::uint64_t seq = d.events->noev_seq.fetch_add(1, std::memory_order_acq_rel) + 1;
    flush_when_due(d);
    return seq;
}

void noevent_finish(CLCONTEXT* cp, unsigned devnum, const char* call, bool join)
{
    Device& d = cp->devs[devnum];
    EventList& el = *d.events;
    // Every launch numbered up to here was enqueued before (its number is taken
    // after its enqueue), so clFinish waits for it.
    std::uint64_t upto = el.noev_seq.load(std::memory_order_acquire);
    cl_int err = finish_queue(d, d.queue);
    if (err != CL_SUCCESS) fail_cl(err, "%s: the kernel on device %u failed (clFinish)", call, devnum);
    kernel_queue_flushed(d);
    if (!join) return;
    std::lock_guard<std::mutex> lock(el.mu);
    el.noev_joined = std::max(el.noev_joined, upto);
}

cl_event noevent_marker(const Device& d, std::uint64_t seq) noexcept
{
    EventList& el = *d.events;
    std::lock_guard<std::mutex> lock(el.mu);
    if (seq <= el.noev_joined) return nullptr;
    if (!el.marker || el.marker_seq < seq) {
        // Every launch numbered up to now was enqueued before this marker.
        std::uint64_t upto = el.noev_seq;
        cl_event m = nullptr;
        if (clEnqueueMarkerWithWaitList(d.queue, 0, nullptr, &m) != CL_SUCCESS || !m) {
            finish_queue(d, d.queue);  // no marker: the launches are finished here instead
            return nullptr;
        }
        clFlush(d.queue);
        if (el.marker) clReleaseEvent(el.marker);
        el.marker = m;
        el.marker_seq = upto;
    }
    if (clRetainEvent(el.marker) != CL_SUCCESS) {
        wait_events(d, 1, &el.marker);
        return nullptr;
    }
    return el.marker;
}

int event_flags_check(int flags)
{
    if ((flags & CL_EVENT_WAIT) && (flags & CL_EVENT_NOWAIT))
        fail(STDCL_EINVAL, "CL_EVENT_WAIT and CL_EVENT_NOWAIT exclude each other");
    if ((flags & CL_EVENT_RELEASE) && (flags & CL_EVENT_NORELEASE))
        fail(STDCL_EINVAL, "CL_EVENT_RELEASE and CL_EVENT_NORELEASE exclude each other");
    return flags;
}

cl_event event_finish(CLCONTEXT* cp, unsigned devnum, cl_event ev, int flags, const CommandTag& tag)
{
    Device& d = cp->devs[devnum];
    bool is_kernel = tag.kind == CommandTag::kernel;
    const char* what = is_kernel ? "kernel" : "transfer";
    if (flags & CL_EVENT_NOWAIT) {
        if (cp->prof && !tag.profiled) profile_command(cp, devnum, ev, tag, false);
        // A failed flush is harmless: clWaitForEvents flushes the queue itself.
        if (is_kernel && d.starts_unflushed)
            flush_when_due(d);  // the driver starts it; the flush only hands over the batch
        else if (is_kernel)
            clFlush(d.queue);  // start it now: another device may be waited on first
        else if (d.xfer != d.queue)
            clFlush(d.xfer);  // a kernel on the other queue may wait for it
        // The list owns the enqueue's reference; the caller gets one more with NORELEASE.
        cl_int rerr = (flags & CL_EVENT_NORELEASE) ? clRetainEvent(ev) : CL_SUCCESS;
        try {
            EventList& el = *d.events;
            std::lock_guard<std::mutex> lock(el.mu);
            auto& list = is_kernel ? el.kernel : el.mem;
            list.push_back(ev);
            if (list.size() >= kPruneAt && (list.size() & (kPruneAt - 1)) == 0) prune_completed(el, list);
        } catch (...) {
            // Out of memory for the list: finish the command here instead of tracking it.
            wait_events(d, 1, &ev);
            clReleaseEvent(ev);
            if (rerr == CL_SUCCESS && (flags & CL_EVENT_NORELEASE)) clReleaseEvent(ev);
            fail(STDCL_ENOMEM, "the %s on device %u ran to completion, but tracking its event ran out of host memory",
                 what, devnum);
        }
        if (rerr != CL_SUCCESS) {
            // No reference to hand over: finish the command (clwait releases it) and
            // say so, rather than hand out an event the caller would release once too often.
            wait_events(d, 1, &ev);
            fail_cl(rerr, "the %s on device %u ran to completion, but clRetainEvent for CL_EVENT_NORELEASE failed",
                    what, devnum);
        }
        return ev;
    }
    cl_int err = wait_events(d, 1, &ev);
    if (cp->prof && !tag.profiled) profile_command(cp, devnum, ev, tag, true);
    cl_int st = CL_COMPLETE;
    if (err != CL_SUCCESS)  // only then can the command have failed
        clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr);
    if (err != CL_SUCCESS || st < 0) {
        clReleaseEvent(ev);
        fail_cl(st < 0 ? st : err, "the %s on device %u failed (clWaitForEvents)", what, devnum);
    }
    if (!(flags & CL_EVENT_NORELEASE)) clReleaseEvent(ev);
    // Without CL_EVENT_NORELEASE the returned value only says "success": the event is gone.
    return ev;
}

cl_event on_every_device(CLCONTEXT* cp, int flags, const char* call, const std::function<cl_event(unsigned, int)>& one)
{
    context_check(cp, call);
    event_flags_check(flags);
    if (flags & CL_EVENT_NORELEASE)
        fail(STDCL_EINVAL,
             "%s: CL_ALL_DEVICES with CL_EVENT_NORELEASE: there would be one event per device to hand over; "
             "use CL_EVENT_NOWAIT and clwait(cp, CL_ALL_DEVICES, ...)",
             call);
    unsigned n = unsigned(cp->devs.size());
    auto on = [&](unsigned d, int f) -> cl_event {
        try {
            return one(d, f);
        } catch (const Error& e) {
            fail(e.code, "%s (CL_ALL_DEVICES, at device %u of %u; the devices before it have theirs): %s", call, d, n,
                 e.msg.c_str());
        }
    };
    if (flags & CL_EVENT_NOWAIT) {
        cl_event last = nullptr;
        for (unsigned d = 0; d < n; ++d)
            if (cl_event e = on(d, flags)) last = e;  // NULL: nothing to do on that device
        return last;
    }
    // Every device's command is enqueued before any is waited for: the transfers
    // overlap.  This call holds one reference to each event (the lists hold theirs).
    std::vector<cl_event> evs;
    evs.reserve(n);
    int f = (flags & ~(CL_EVENT_WAIT | CL_EVENT_RELEASE)) | CL_EVENT_NOWAIT | CL_EVENT_NORELEASE;
    auto release_all = [&] {
        for (cl_event e : evs) clReleaseEvent(e);
    };
    try {
        for (unsigned d = 0; d < n; ++d)
            if (cl_event e = on(d, f)) evs.push_back(e);
    } catch (...) {
        if (!evs.empty()) wait_events(cp->devs[0], cl_uint(evs.size()), evs.data());
        release_all();
        throw;
    }
    if (evs.empty()) return nullptr;
    // The devices of a context are of one platform, and so of one policy.
    cl_int err = wait_events(cp->devs[0], cl_uint(evs.size()), evs.data());
    cl_int worst = CL_SUCCESS;
    unsigned bad = 0;
    if (err != CL_SUCCESS)
        for (size_t i = 0; i < evs.size(); ++i) {
            cl_int st = CL_COMPLETE;
            clGetEventInfo(evs[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr);
            if (st < 0 && worst == CL_SUCCESS) worst = st, bad = unsigned(i);
        }
    cl_event last = evs.back();
    release_all();
    if (err != CL_SUCCESS)
        fail_cl(worst ? worst : err, "%s (CL_ALL_DEVICES): the command on device %u failed (clWaitForEvents)", call,
                bad);
    // The sync check: the commands, noted as pending, are complete.
    if (sync_check_on()) sync_settle(call, -1);
    return last;  // as for one device waited for: it says success, the event is gone
}

namespace {

// clwait's returned events: per context, per device, the one handed out last.
struct WaitSlots {
    std::mutex mu;
    std::map<CLCONTEXT*, std::vector<cl_event>> held;
};
WaitSlots& wait_slots()
{
    static WaitSlots* w = new WaitSlots;  // never destroyed: contexts are released at exit
    return *w;
}

}  // namespace

void wait_forget_context(CLCONTEXT* cp) noexcept
{
    {
        auto& w = wait_slots();
        std::lock_guard<std::mutex> lock(w.mu);
        auto it = w.held.find(cp);
        if (it != w.held.end()) {
            for (cl_event e : it->second)
                if (e) clReleaseEvent(e);
            w.held.erase(it);
        }
    }
}

// CL_ALL_DEVICES for stdcl_wait and clwait: every device is waited for, even after
// one failed; the first failure is reported.  wait(d) waits for device d and
// returns 0 or its negative code.
template <class F> void wait_every_device(CLCONTEXT* cp, F&& wait)
{
    context_check(cp, "clwait");
    int code = 0;
    std::string why;
    for (unsigned d = 0; d < unsigned(cp->devs.size()); ++d) {
        int r = wait(d);
        if (r < 0 && code == 0) {
            code = r;
            why = take_error("failed");
        }
    }
    if (code) fail(code, "%s (CL_ALL_DEVICES)", why.c_str());
}

}  // namespace stdcl

using namespace stdcl;

extern "C" {

STDCL_API int clflush(CLCONTEXT* cp, unsigned int devnum, int flags)
{
    return guarded_int([&] {
        if (devnum == CL_ALL_DEVICES) context_check(cp, "clflush");
        if (flags & ~(CL_ALL_EVENT | kEventFlags)) fail(STDCL_EINVAL, "clflush: unknown flags 0x%x", unsigned(flags));
        unsigned first = devnum == CL_ALL_DEVICES ? 0 : devnum;
        unsigned end = devnum == CL_ALL_DEVICES ? unsigned(cp->devs.size()) : devnum + 1;
        for (unsigned i = first; i < end; ++i) {
            Device& d = context_device(cp, i, "clflush");
            check_cl(clFlush(d.queue), "clflush");
            kernel_queue_flushed(d);
            if (d.xfer != d.queue) check_cl(clFlush(d.xfer), "clflush (transfer queue)");
        }
        return 0;
    });
}

STDCL_API int stdcl_wait(CLCONTEXT* cp, unsigned int devnum, int flags)
{
    if (devnum == CL_ALL_DEVICES)
        return guarded_int([&] {
            wait_every_device(cp, [&](unsigned d) { return stdcl_wait(cp, d, flags); });
            return 0;
        });
    return guarded_int([&] {
        Device& d = context_device(cp, devnum, "clwait");
        if (flags & ~(CL_ALL_EVENT | CL_EVENT_WAIT | CL_EVENT_RELEASE | CL_EVENT_NORELEASE))
            fail(STDCL_EINVAL, "clwait: unknown flags 0x%x", unsigned(flags));
        int which = flags & CL_ALL_EVENT;
        if (which == 0) which = CL_ALL_EVENT;
        // The events stay in the lists while this thread waits, so a clwait in another
        // thread also finds and waits for them; whoever finishes first takes them
        // out, and el.waiting keeps them alive until the last waiter is done.
        EventList& el = *d.events;
        std::vector<cl_event> evs;
        size_t nkernel = 0, nlisted = 0;  // evs: the kernel list's, then the transfer list's
        std::uint64_t noev = 0;  // the newest event-less launch to join
        {
            std::lock_guard<std::mutex> lock(el.mu);
            if ((which & CL_KERNEL_EVENT) && el.noev_seq > el.noev_joined) noev = el.noev_seq;
            evs.reserve(el.kernel.size() + el.mem.size() + 1);  // + the marker for noev
            if (which & CL_KERNEL_EVENT) evs.insert(evs.end(), el.kernel.begin(), el.kernel.end());
            nkernel = evs.size();
            if (which & CL_MEM_EVENT) evs.insert(evs.end(), el.mem.begin(), el.mem.end());
            nlisted = evs.size();
            if (nlisted) ++el.waiting;
        }
        auto joined = [&] {  // every event-less launch up to noev has completed
            if (!noev || (flags & CL_EVENT_NORELEASE)) return;
            std::lock_guard<std::mutex> lock(el.mu);
            el.noev_joined = std::max(el.noev_joined, noev);
        };
        auto settled = [&] {  // what follows every wait that succeeded
            if (check_mode())  // STDCL_CHECK=1: every allocation's zones on this device
                for (auto& a : registry_of_context(cp)) guard_check(*a, int(devnum), "clwait");
            if (sync_check_on()) sync_settle("clwait", int(devnum));
            return 0;
        };
        if (noev && !nlisted) {
            // Only launches without an event to join: the kernel queue keeps its
            // order, so finishing it joins them all, as a raw program's clFinish
            // does, without a marker's enqueue and wait.
            noevent_finish(cp, devnum, "clwait", !(flags & CL_EVENT_NORELEASE));
            return settled();
        }
        // Launches without an event beside tracked events: a marker after the
        // newest (our reference), waited for with the events.
        cl_event marker = noev ? noevent_marker(d, noev) : nullptr;
        if (marker) evs.push_back(marker);  // room reserved
        if (evs.empty()) {
            joined();
            return settled();
        }
        cl_int err = wait_events(d, cl_uint(evs.size()), evs.data());
        if (nkernel || marker) kernel_queue_flushed(d);  // the wait flushed the kernel queue
        cl_int worst = CL_SUCCESS;
        if (err != CL_SUCCESS)
            for (cl_event e : evs) {
                cl_int st = CL_COMPLETE;
                clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr);
                if (st < 0) worst = st;
            }
        if (nlisted) {
            std::lock_guard<std::mutex> lock(el.mu);
            --el.waiting;
            if (!(flags & CL_EVENT_NORELEASE)) {  // with it, the events stay tracked until a later clwait
                remove_waited(el, el.kernel, evs.data(), nkernel);
                remove_waited(el, el.mem, evs.data() + nkernel, nlisted - nkernel);
            }
            if (el.waiting == 0 && !el.retired.empty()) {  // what the other waiters' lists held
                for (cl_event e : el.retired) clReleaseEvent(e);
                el.retired.clear();
            }
        }
        if (marker) clReleaseEvent(marker);
        if (cp->prof) profile_harvest(cp, int(devnum), false);
        if (err != CL_SUCCESS)
            fail_cl(worst ? worst : err, "clwait: a command on device %u failed (clWaitForEvents)", devnum);
        joined();
        return settled();
    });
}

STDCL_API cl_event clwait(CLCONTEXT* cp, unsigned int devnum, int flags)
{
    if (devnum == CL_ALL_DEVICES)
        return guarded<cl_event>(nullptr, [&] {
            cl_event last = nullptr;
            wait_every_device(cp, [&](unsigned d) {
                cl_event e = clwait(cp, d, flags);
                if (e) last = e;
                return e ? 0 : STDCL_ECL;
            });
            return last;
        });
    return guarded<cl_event>(nullptr, [&]() -> cl_event {
        Device& d = context_device(cp, devnum, "clwait");
        int which = flags & CL_ALL_EVENT;
        if (which == 0) which = CL_ALL_EVENT;
        // The slot the returned event is kept in, made before any event is retained:
        // making it allocates, and a failure after the retain would leak the event.
        auto& w = wait_slots();
        {
            std::lock_guard<std::mutex> lock(w.mu);
            auto& slots = w.held[cp];
            if (slots.size() < cp->devs.size()) slots.resize(cp->devs.size(), nullptr);
        }
        // The newest event of the selection, before stdcl_wait joins (and releases) it.
        cl_event last = nullptr;
        {
            EventList& el = *d.events;
            std::lock_guard<std::mutex> lock(el.mu);
            if ((which & CL_KERNEL_EVENT) && !el.kernel.empty())
                last = el.kernel.back();
            else if ((which & CL_MEM_EVENT) && !el.mem.empty())
                last = el.mem.back();
            if (last) check_cl(clRetainEvent(last), "clwait: clRetainEvent");
        }
        if (stdcl_wait(cp, devnum, flags) < 0) {
            std::string why = take_error("clwait failed");
            if (last) clReleaseEvent(last);
            fail(STDCL_ECL, "%s", why.c_str());
        }
        if (!last) {  // nothing was pending: a completed event stands for "done"
            cl_int err = CL_SUCCESS;
            last = clCreateUserEvent(cp->ctx, &err);
            check_cl(err, "clwait: clCreateUserEvent");
            err = clSetUserEventStatus(last, CL_COMPLETE);
            if (err != CL_SUCCESS) {
                clReleaseEvent(last);
                fail_cl(err, "clwait: clSetUserEventStatus");
            }
        }
        std::lock_guard<std::mutex> lock(w.mu);
        auto it = w.held.find(cp);  // made above; only clrelease of cp erases it
        if (it == w.held.end() || it->second.size() <= devnum) {
            clReleaseEvent(last);
            fail(STDCL_EINVAL, "clwait: the context was released while waiting");
        }
        auto& slots = it->second;
        if (slots[devnum]) clReleaseEvent(slots[devnum]);
        slots[devnum] = last;
        return last;
    });
}

STDCL_API cl_event clwaitev(CLCONTEXT* cp, unsigned int devnum, const cl_event ev, int flags)
{
    return guarded<cl_event>(nullptr, [&]() -> cl_event {
        Device& d = context_device(cp, devnum, "clwaitev");
        if (!ev) fail(STDCL_EINVAL, "clwaitev: the event is NULL");
        if (flags & ~(CL_EVENT_WAIT | CL_EVENT_RELEASE | CL_EVENT_NORELEASE))
            fail(STDCL_EINVAL, "clwaitev: unknown flags 0x%x", unsigned(flags));
        cl_int err = wait_events(d, 1, &ev);
        if (!(flags & CL_EVENT_NORELEASE)) clReleaseEvent(ev);
        if (err != CL_SUCCESS) fail_cl(err, "clwaitev: the command on device %u failed (clWaitForEvents)", devnum);
        return ev;
    });
}

}  // extern "C"
