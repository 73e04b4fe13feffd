// SPDX-License-Identifier: MIT
// transfer.cpp: moving an allocation's bytes between the host and a device's copy,
// or between two allocations on a device: clmsync, clmsyncn (msync_range),
// clmcopy, and stdcl_mem, the device object a plain OpenCL command uses.
// Transfers go to a device's transfer queue (two queues: ordered through
// CommandOrder), or to its kernel queue on a device that works on host memory or
// whose kernel queue the program took (foreign.cpp).
#include "events/events.hpp"
#include "helpers/cl_util.hpp"
#include "config/config.hpp"
#include "helpers/diag.hpp"
#include "memory/sync_check.hpp"
#include "memory/watch.hpp"

#include <cstring>
#include <functional>

namespace stdcl {

namespace {

// Under a polled wait (STDCL_WAIT=block or yield), a waited transfer this
// large or larger is enqueued without blocking and waited for by its event;
// a smaller one (under about 50 us on a GPU) blocks in the driver, which
// copies pageable memory faster so.
constexpr size_t kPolledCopyMin = 1 << 20;

int check_sync_flags(int flags, const char* call)
{
    int dir = flags & (CL_MEM_HOST | CL_MEM_DEVICE);
    if (dir != CL_MEM_HOST && dir != CL_MEM_DEVICE)
        fail(STDCL_EINVAL, "%s: flags must hold exactly one of CL_MEM_HOST and CL_MEM_DEVICE", call);
    // CL_MEM_NOFORCE (STDCL 1.6: skip a transfer known to be unneeded) is accepted; the
    // transfer is always made, as no record says which copy is current.
    if (flags & ~(kEventFlags | CL_MEM_HOST | CL_MEM_DEVICE | CL_MEM_NOFORCE))
        fail(STDCL_EINVAL, "%s: unknown flags 0x%x", call,
             unsigned(flags & ~(kEventFlags | CL_MEM_HOST | CL_MEM_DEVICE | CL_MEM_NOFORCE)));
    event_flags_check(flags);
    return dir;
}

}  // namespace

cl_event msync_range(CLCONTEXT* cp, unsigned devnum, void* ptr, size_t len, bool whole, int flags, const char* call,
                     void* caller)
{
    if (devnum == CL_ALL_DEVICES) {
        if (check_sync_flags(flags, call) == CL_MEM_HOST)
            fail(STDCL_EINVAL,
                 "%s: CL_MEM_HOST from CL_ALL_DEVICES: which device's copy should the host get? Name one device "
                 "(each device's part of an allocation comes back with clmsyncn from that device)",
                 call);
        return on_every_device(cp, flags & ~(CL_MEM_DEVICE | CL_MEM_HOST), call, [&](unsigned d, int f) {
            return msync_range(cp, d, ptr, len, whole, f | CL_MEM_DEVICE, call, caller);
        });
    }
    int dir = check_sync_flags(flags, call);
    Device& d = context_device(cp, devnum, call);
    size_t off = 0;
    AllocUse a(attached(cp, ptr, call, &off));
    if (a->backing == Backing::devonly)
        fail(STDCL_EINVAL, "%s: the allocation at %p is device-only (CL_MEM_DEVONLY): it has no host memory to sync",
             call, (void*)a->host);
    const bool zc = a->zero_copy_on(d);
    if (whole) {
        len = a->size - off;
    } else {
        if (len == 0) fail(STDCL_EINVAL, "%s: 0 bytes to sync", call);
        if (len > a->size - off)
            fail(STDCL_EINVAL,
                 "%s: %zu bytes from offset %zu pass the end of the %zu-byte allocation at %p by %zu bytes", call, len,
                 off, a->size, (void*)a->host, len - (a->size - off));
        if (a->is_image && (off != 0 || len != a->size))
            fail(STDCL_EINVAL, "%s: an image allocation is synced whole (from its start, %zu bytes)", call, a->size);
    }
    if (a->sync) sync_check_transfer(*a, devnum, off, len, dir == CL_MEM_DEVICE, call, caller);
    // CL_MEM_NOFORCE: nothing new to move.  Under STDCL_CHECK=sync the hashes say
    // so; otherwise clmctl(CL_MCTL_MARK_CLEAN) and a whole sync with this device
    // since its copy last changed.  A marker keeps the queue's order and the event.
    const std::uint64_t bit = std::uint64_t(1) << (devnum & 63);
    const bool skip = (flags & CL_MEM_NOFORCE) && !a->is_image &&
        (a->sync ? sync_transfer_unneeded(*a, devnum, off, len)
                 : devnum < 64 && a->clean.load() && (a->current.load() & bit));
    if (!skip && a->sync && dir == CL_MEM_DEVICE && cp->prof && sync_transfer_unneeded(*a, devnum, off, len))
        profile_unchanged(cp, devnum, len);
    cl_mem m = a->device_mem(devnum, 0);
    // Transfers go to the transfer queue (two queues: after the last command on
    // this allocation).
    cl_command_queue q = zc ? d.queue : transfer_queue(d);
    CommandOrder order(d, devnum, {&*a}, q);
    cl_uint nw = order.count();
    const cl_event* wl = order.list();
    cl_event ev = nullptr;
    cl_int err;
    bool no_event = false;  // a waited plain transfer: see below
    if (skip) {
        err = clEnqueueMarkerWithWaitList(q, nw, wl, &ev);
    } else if (a->is_image) {
        size_t origin[3] = {0, 0, 0}, region[3] = {a->img_w, a->img_h, 1};
        err = dir == CL_MEM_DEVICE ? clEnqueueWriteImage(q, m, CL_FALSE, origin, region, 0, 0, a->lib(), nw, wl, &ev)
                                   : clEnqueueReadImage(q, m, CL_FALSE, origin, region, 0, 0, a->lib(), nw, wl, &ev);
    } else if (zc) {
        // The device works on the host memory itself: nothing to copy; the marker
        // keeps the queue's order and gives the caller an event.
        err = clEnqueueMarkerWithWaitList(q, nw, wl, &ev);
    } else if (a->flags & CL_MEM_NOCOPY) {
        // A CL_MEM_USE_HOST_PTR buffer on a device with memory of its own: mapping
        // and unmapping is how OpenCL makes the host memory and the device agree.
        cl_map_flags mf = dir == CL_MEM_DEVICE ? CL_MAP_WRITE_INVALIDATE_REGION : CL_MAP_READ;
        void* p = clEnqueueMapBuffer(q, m, CL_FALSE, mf, off, len, nw, wl, nullptr, &err);
        if (err == CL_SUCCESS) err = clEnqueueUnmapMemObject(q, m, p, 0, nullptr, &ev);
    } else {
        // A blocking transfer when the caller waits anyway: drivers copy pageable
        // memory faster that way (NVIDIA: about 20% for 1 MiB).  Under a polled
        // wait (STDCL_WAIT) only a short one (below kPolledCopyMin) blocks in
        // the driver; a longer one is waited for by its event.
        cl_bool block = (flags & CL_EVENT_NOWAIT) || (wait_polls(d) && len >= kPolledCopyMin)
            ? CL_FALSE
            : CL_TRUE;
        // Waited, its event not handed out and not timed: no event at all, as a plain
        // blocking transfer (an event costs NVIDIA's driver about 0.5 us a command).
        no_event = block && !(flags & CL_EVENT_NORELEASE) && !cp->prof;
        err = dir == CL_MEM_DEVICE
            ? clEnqueueWriteBuffer(q, m, block, off, len, a->lib() + off, nw, wl, no_event ? nullptr : &ev)
            : clEnqueueReadBuffer(q, m, block, off, len, a->lib() + off, nw, wl, no_event ? nullptr : &ev);
    }
    check_cl(err, strprintf("%s to the %s", call, dir == CL_MEM_DEVICE ? "device" : "host").c_str());
    if (q != d.queue) transfer_enqueued(d, q, ev);
    trace(Trace::mem, "%s %s device %u: %zu bytes at %p%s", call, dir == CL_MEM_DEVICE ? "to" : "from", devnum, len,
          ptr,
          skip     ? " (CL_MEM_NOFORCE: nothing new, skipped)"
              : zc ? " (zero-copy, no transfer)"
                   : "");
    if (whole && !a->is_image) {
        // This device's copy is the host's now (to the device), or the host's is
        // this device's and the other devices' may differ (back to the host).
        if (dir == CL_MEM_DEVICE)
            a->current.fetch_or(devnum < 64 ? bit : 0);
        else
            a->current.store(devnum < 64 ? bit : 0);
    }
    order.enqueued(ev, flags);
    if (a->sync && (flags & CL_EVENT_NOWAIT))
        sync_note_pending(
            *a, devnum, off, len, dir == CL_MEM_HOST, true, ev,
            strprintf("%s %s device %u (CL_EVENT_NOWAIT)", call, dir == CL_MEM_DEVICE ? "to" : "from", devnum), caller);
    cl_event done;
    if (!no_event) {
        CommandTag tag{dir == CL_MEM_DEVICE ? CommandTag::to_device : CommandTag::to_host, nullptr, len,
                       a->is_image || !zc, skip};
        done = event_finish(cp, devnum, ev, flags, tag);
    } else {
        // The blocking transfer without an event (above) is done.  The documented
        // answer without CL_EVENT_NORELEASE: "the call succeeded".
        static char finished;
        done = reinterpret_cast<cl_event>(&finished);
    }
    if (a->guard && !(flags & CL_EVENT_NOWAIT)) guard_check(*a, int(devnum), call);
    if (a->sync) {
        sync_note_transfer(*a, devnum, off, len, dir == CL_MEM_DEVICE, !(flags & CL_EVENT_NOWAIT), call, caller);
        if (!(flags & CL_EVENT_NOWAIT)) sync_settle(call, int(devnum));
    }
    return done;
}

}  // namespace stdcl

using namespace stdcl;

extern "C" {

STDCL_API cl_event clmsync(CLCONTEXT* cp, unsigned int devnum, void* ptr, int flags)
{
    void* caller = __builtin_return_address(0);
    return guarded<cl_event>(nullptr, [&] { return msync_range(cp, devnum, ptr, 0, true, flags, "clmsync", caller); });
}

STDCL_API cl_event clmsyncn(CLCONTEXT* cp, unsigned int devnum, void* ptr, size_t nbytes, int flags)
{
    void* caller = __builtin_return_address(0);
    return guarded<cl_event>(nullptr,
                             [&] { return msync_range(cp, devnum, ptr, nbytes, false, flags, "clmsyncn", caller); });
}

STDCL_API cl_event clmcopy(CLCONTEXT* cp, unsigned int devnum, void* src, void* dst, int flags)
{
    void* caller = __builtin_return_address(0);
    if (devnum == CL_ALL_DEVICES)
        return guarded<cl_event>(nullptr, [&] {
            if (flags & ~kEventFlags) fail(STDCL_EINVAL, "clmcopy: unknown flags 0x%x", unsigned(flags & ~kEventFlags));
            context_check(cp, "clmcopy");
            size_t soff = 0, doff = 0;
            auto s = attached(cp, src, "clmcopy (source)", &soff);
            auto t = attached(cp, dst, "clmcopy (destination)", &doff);
            bool shared_done = false;
            return on_every_device(cp, flags, "clmcopy", [&](unsigned d, int f) -> cl_event {
                // Devices that work on the same host memory share one copy: it is
                // made once (two at once would write the same bytes together).
                const Device& dev = cp->devs[d];
                if (s->zero_copy_on(dev) && t->zero_copy_on(dev)) {
                    if (shared_done) return nullptr;
                    shared_done = true;
                }
                cl_event e = clmcopy(cp, d, src, dst, f);
                if (!e) fail(STDCL_ECL, "%s", take_error("clmcopy failed").c_str());
                return e;
            });
        });
    return guarded<cl_event>(nullptr, [&]() -> cl_event {
        if (flags & ~kEventFlags) fail(STDCL_EINVAL, "clmcopy: unknown flags 0x%x", unsigned(flags & ~kEventFlags));
        event_flags_check(flags);
        Device& d = context_device(cp, devnum, "clmcopy");
        size_t soff = 0, doff = 0;
        AllocUse s(attached(cp, src, "clmcopy (source)", &soff));
        AllocUse t(attached(cp, dst, "clmcopy (destination)", &doff));
        if (s->is_image || t->is_image) fail(STDCL_EINVAL, "clmcopy: image allocations are not supported");
        size_t len = std::min(s->size - soff, t->size - doff);
        cl_mem sm = s->device_mem(devnum, 0), tm = t->device_mem(devnum, 0);
        // The sync check: the copy reads the source's device copy, as a kernel
        // would (a copy older than the host's, or never sent, is a finding).
        if (s->sync) sync_check_command_read(cp, devnum, *s, soff, len, "clmcopy", "its source", "called as", "clmcopy", caller);
        // What commands the check does not see wrote into the destination before.
        if (t->sync) sync_refresh_unseen(*t, devnum);
        cl_command_queue q = transfer_queue(d);
        CommandOrder order(d, devnum, {&*s, &*t}, q);
        cl_event ev = nullptr;
        check_cl(clEnqueueCopyBuffer(q, sm, tm, soff, doff, len, order.count(), order.list(), &ev), "clmcopy");
        if (q != d.queue) transfer_enqueued(d, q, ev);
        t->note_device_write(devnum);
        if (t->sync) sync_note_device_write(*t, devnum, doff, "clmcopy", len);  // only the bytes it copies
        order.enqueued(ev, flags);
        // Pending, it reads the source: the host must not write it until then.
        if (s->sync && (flags & CL_EVENT_NOWAIT))
            sync_note_pending(*s, devnum, soff, len, false, false, ev,
                              strprintf("clmcopy on device %u (its source, CL_EVENT_NOWAIT)", devnum), caller);
        return event_finish(cp, devnum, ev, flags, CommandTag{CommandTag::copy, nullptr, len, true});
    });
}

STDCL_API cl_mem stdcl_mem(CLCONTEXT* cp, unsigned int devnum, void* ptr)
{
    return guarded<cl_mem>(nullptr, [&]() -> cl_mem {
        context_device(cp, devnum, "stdcl_mem");
        size_t off = 0;
        auto a = attached(cp, ptr, "stdcl_mem", &off);
        cl_mem m = a->device_mem(devnum, off);
        a->handed_out.store(true, std::memory_order_relaxed);
        if (a->sync) {
            // The host's accesses so far judged against the device copies as they
            // are now, before commands the check does not see change them.
            sync_check_before("stdcl_mem");
            sync_refresh_unseen(*a, devnum);  // what the copy holds before the program's commands
        }
        return m;
    });
}

}  // extern "C"
