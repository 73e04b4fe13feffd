// SPDX-License-Identifier: MIT
// foreign.cpp: plain OpenCL commands on libstdcl memory.  stdcl_queue hands the
// program a device's kernel queue: from then on that device's transfers go to
// the kernel queue too, so whatever the program enqueues there keeps its order
// with every libstdcl command.  clforeign_begin and clforeign_end bracket
// commands on any queue of the context (a library's own): the commands wait
// for libstdcl's earlier ones on the allocations named, and libstdcl's later
// ones, clfree and the sync check treat them as a kernel of its own.
#include "helpers/cl_util.hpp"
#include "helpers/diag.hpp"
#include "memory/sync_check.hpp"

#include <memory>
#include <mutex>
#include <vector>

// A ticket: what clforeign_begin announced, until clforeign_end.
struct stdcl_foreign {
    CLCONTEXT* cp = nullptr;
    unsigned devnum = 0;
    cl_command_queue queue = nullptr;
    std::vector<stdcl::AllocUse> uses;  // claims: clfree in another thread waits for clforeign_end
    std::vector<int> access;  // per use
    std::vector<size_t> offset;  // per use: where in its allocation the commands start
    std::vector<size_t> length;  // per use: and how many bytes they use
    std::vector<cl_event> waits;  // CL_FOREIGN_WAITLIST: retained
    bool open = false;  // each allocation's foreign_open counts this ticket

    stdcl_foreign() = default;
    stdcl_foreign(const stdcl_foreign&) = delete;
    stdcl_foreign& operator=(const stdcl_foreign&) = delete;
    ~stdcl_foreign()
    {
        for (cl_event e : waits) clReleaseEvent(e);
        if (open)
            for (auto& u : uses) u->foreign_open.fetch_sub(1);
    }
};

namespace stdcl {

namespace {

// The first stdcl_queue of device d: its transfers move to the kernel queue.
// What the transfer queue holds already runs before anything enqueued on the
// kernel queue from now on (a barrier waiting for a marker; if that cannot be
// enqueued, the transfer queue is finished here).
void share_kernel_queue(Device& d)
{
    if (d.events->queue_shared.load(std::memory_order_acquire)) return;
    static std::mutex mu;  // one hand-over per device
    std::lock_guard<std::mutex> lock(mu);
    if (d.events->queue_shared.load()) return;
    d.events->queue_shared.store(true);  // before the marker: see transfer_enqueued
    if (d.xfer == d.queue) return;
    cl_event m = nullptr;
    cl_int err = clEnqueueMarkerWithWaitList(d.xfer, 0, nullptr, &m);
    if (err == CL_SUCCESS) {
        clFlush(d.xfer);
        err = clEnqueueBarrierWithWaitList(d.queue, 1, &m, nullptr);
        clReleaseEvent(m);
    }
    if (err != CL_SUCCESS) clFinish(d.xfer);
}

// Throws unless q is a command queue of cp's OpenCL context on device d.
void check_queue(CLCONTEXT* cp, const Device& d, unsigned devnum, cl_command_queue q)
{
    cl_context c = nullptr;
    cl_device_id id = nullptr;
    cl_int err = clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof c, &c, nullptr);
    if (err == CL_SUCCESS) err = clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof id, &id, nullptr);
    if (err != CL_SUCCESS) fail_cl(err, "clforeign_begin: clGetCommandQueueInfo of the queue");
    if (c != cp->ctx)
        fail(STDCL_EINVAL, "clforeign_begin: the queue belongs to another OpenCL context than %s's (stdcl_clcontext)",
             cp->label.c_str());
    if (id != d.id)
        fail(STDCL_EINVAL, "clforeign_begin: the queue is on another device than device %u (%s)", devnum,
             d.name.c_str());
}

}  // namespace

void transfer_enqueued(const Device& d, cl_command_queue q, cl_event ev)
{
    // The queue was chosen before stdcl_queue handed the kernel queue over, and the
    // transfer may have been enqueued after the hand-over's marker: the kernel
    // queue waits for it as well.  (A blocking transfer without an event is done.)
    if (q == d.queue || !ev || !d.events->queue_shared.load()) return;
    clFlush(q);
    if (clEnqueueBarrierWithWaitList(d.queue, 1, &ev, nullptr) != CL_SUCCESS) clWaitForEvents(1, &ev);
}

void foreign_check_closed(const Allocation& a, const char* call)
{
    if (int n = a.foreign_open.load())
        fail(STDCL_ESTATE,
             "%s: the allocation at %p is in use by foreign commands: %d clforeign_begin ticket%s naming it %s not "
             "ended (clforeign_end)",
             call, (void*)a.host, n, n == 1 ? "" : "s", n == 1 ? "is" : "are");
}

void foreign_wait_queues(CLCONTEXT* owner) noexcept
{
    if (!owner) return;  // detached: its context's queues were finished when it went
    for (const Device& d : owner->devs)
        if (d.events->queue_shared.load()) clFinish(d.queue);
}

}  // namespace stdcl

using namespace stdcl;

extern "C" {

STDCL_API cl_command_queue stdcl_queue(CLCONTEXT* cp, unsigned int devnum)
{
    return guarded<cl_command_queue>(nullptr, [&] {
        Device& d = context_device(cp, devnum, "stdcl_queue");
        // The sync check judges the host's accesses so far before commands it
        // does not see, enqueued on this queue, change the device copies.
        if (sync_check_on()) sync_check_before("stdcl_queue");
        share_kernel_queue(d);
        return d.queue;
    });
}

STDCL_API CLFOREIGN* clforeign_begin(CLCONTEXT* cp, unsigned int devnum, cl_command_queue queue,
                                     const struct clforeign_use* uses, size_t nuses, int flags)
{
    void* caller = __builtin_return_address(0);
    return guarded<CLFOREIGN*>(nullptr, [&]() -> CLFOREIGN* {
        const char* call = "clforeign_begin";
        Device& d = context_device(cp, devnum, call);
        if (flags & ~CL_FOREIGN_WAITLIST)
            fail(STDCL_EINVAL, "clforeign_begin: unknown flags 0x%x", unsigned(flags & ~CL_FOREIGN_WAITLIST));
        if (nuses && !uses) fail(STDCL_EINVAL, "clforeign_begin: uses is NULL, with nuses %zu", nuses);
        if (queue) check_queue(cp, d, devnum, queue);
        auto f = std::make_unique<stdcl_foreign>();
        f->cp = cp;
        f->devnum = devnum;
        f->queue = queue ? queue : d.queue;
        f->uses.reserve(nuses);
        f->access.reserve(nuses);
        f->offset.reserve(nuses);
        f->length.reserve(nuses);
        for (size_t i = 0; i < nuses; ++i) {
            int acc = uses[i].access;
            if (acc != CL_MEM_RO && acc != CL_MEM_WO && acc != CL_MEM_RW)
                fail(STDCL_EINVAL,
                     "clforeign_begin: uses[%zu].access is 0x%x: give one of CL_MEM_RO, CL_MEM_WO and CL_MEM_RW", i,
                     unsigned(acc));
            std::string what = strprintf("clforeign_begin: uses[%zu].ptr", i);
            size_t off = 0;
            auto a = attached(cp, uses[i].ptr, what.c_str(), &off);
            if (acc != CL_MEM_RO && (a->flags & CL_MEM_RO))
                fail(STDCL_EINVAL,
                     "clforeign_begin: uses[%zu]: the allocation at %p was made CL_MEM_RO: its device objects are "
                     "read-only, so no command may write it",
                     i, (void*)a->host);
            size_t len = uses[i].size ? uses[i].size : a->size - off;
            if (len > a->size - off)
                fail(STDCL_EINVAL,
                     "clforeign_begin: uses[%zu].size: %zu bytes from offset %zu pass the end of the %zu-byte "
                     "allocation at %p by %zu bytes",
                     i, len, off, a->size, (void*)a->host, len - (a->size - off));
            f->uses.emplace_back(std::move(a));
            f->access.push_back(acc);
            f->offset.push_back(off);
            f->length.push_back(len);
        }
        // Nothing is changed above this line.  The device objects exist before the
        // program asks for them (stdcl_mem), and the sync check sees the reads.
        for (size_t i = 0; i < nuses; ++i) {
            Allocation& a = *f->uses[i];
            a.device_mem(devnum, 0);
            if (a.sync && f->access[i] != CL_MEM_WO)
                sync_check_foreign_read(cp, devnum, a, f->offset[i], f->length[i], i, call, caller);
        }
        // The writes are noted before the commands, as a kernel's: the check learns
        // what the device's copy held before them.
        for (size_t i = 0; i < nuses; ++i)
            if (f->uses[i]->sync && f->access[i] != CL_MEM_RO)
                sync_note_foreign_write(cp, devnum, *f->uses[i], f->offset[i], f->length[i], call, caller);
        {
            CommandOrder order(d, devnum, f->uses.data(), f->uses.size(), f->queue);
            if (order.count()) {
                // The commands waited for must be under way before another queue
                // waits for them.
                clFlush(d.queue);
                if (d.xfer != d.queue) clFlush(d.xfer);
                if (flags & CL_FOREIGN_WAITLIST) {
                    f->waits.reserve(order.count());
                    for (cl_uint i = 0; i < order.count(); ++i) {
                        check_cl(clRetainEvent(order.list()[i]), "clforeign_begin: clRetainEvent");
                        f->waits.push_back(order.list()[i]);
                    }
                } else {
                    check_cl(clEnqueueBarrierWithWaitList(f->queue, order.count(), order.list(), nullptr),
                             "clforeign_begin: clEnqueueBarrierWithWaitList on the queue");
                }
            }
        }
        for (auto& u : f->uses) {
            u->foreign_open.fetch_add(1);
            u->announced.store(true);
        }
        f->open = true;
        trace(Trace::mem, "clforeign_begin on device %u: %zu allocations, %zu events to wait for", devnum, nuses,
              f->waits.size());
        return f.release();
    });
}

STDCL_API cl_command_queue clforeign_queue(const CLFOREIGN* f) { return f ? f->queue : nullptr; }

STDCL_API cl_uint clforeign_waitlist(const CLFOREIGN* f, const cl_event** list)
{
    if (list) *list = f && !f->waits.empty() ? f->waits.data() : nullptr;
    return f ? cl_uint(f->waits.size()) : 0;
}

STDCL_API int clforeign_end(CLFOREIGN* f, cl_uint nevents, const cl_event* events)
{
    return guarded_int([&] {
        if (!f) fail(STDCL_EINVAL, "clforeign_end: the ticket is NULL");
        if (nevents && !events) fail(STDCL_EINVAL, "clforeign_end: events is NULL, with nevents %u", nevents);
        for (cl_uint i = 0; i < nevents; ++i) {
            cl_context c = nullptr;
            if (!events[i]) fail(STDCL_EINVAL, "clforeign_end: events[%u] is NULL", i);
            cl_int err = clGetEventInfo(events[i], CL_EVENT_CONTEXT, sizeof c, &c, nullptr);
            if (err != CL_SUCCESS) fail_cl(err, "clforeign_end: clGetEventInfo of events[%u]", i);
            if (c != f->cp->ctx)
                fail(STDCL_EINVAL, "clforeign_end: events[%u] belongs to another OpenCL context than %s's", i,
                     f->cp->label.c_str());
        }
        CLCONTEXT* cp = f->cp;
        const unsigned devnum = f->devnum;
        Device& d = cp->devs[devnum];
        // One event stands for the commands: the one given, or a marker after them
        // (after everything on the ticket's queue so far when none is given).
        cl_event done = nullptr;
        if (nevents == 1) {
            check_cl(clRetainEvent(events[0]), "clforeign_end: clRetainEvent");
            done = events[0];
        } else {
            check_cl(clEnqueueMarkerWithWaitList(f->queue, nevents, nevents ? events : nullptr, &done),
                     "clforeign_end: clEnqueueMarkerWithWaitList on the queue");
        }
        clFlush(f->queue);  // libstdcl's commands on other queues may wait for it
        if (f->queue != d.queue && f->queue != d.xfer) d.events->other_queues.store(true);
        for (auto& u : f->uses) {  // noted as CommandOrder::enqueued notes a command; nothing to wait for
            std::lock_guard<std::mutex> lock(u->order);
            u->note_event(devnum, done, f->queue);
        }
        bool checked = false;  // STDCL_CHECK=sync watches a copy the commands write
        for (size_t i = 0; i < f->uses.size(); ++i) {
            if (f->access[i] == CL_MEM_RO) continue;
            f->uses[i]->note_device_write(devnum);
            checked = checked || f->uses[i]->sync;
        }
        // The check reads device copies back on libstdcl's queues, which know
        // nothing of the program's: the commands end first.
        if (checked) wait_events(cp->devs[devnum], 1, &done);
        clReleaseEvent(done);
        trace(Trace::mem, "clforeign_end on device %u: %zu allocations", devnum, f->uses.size());
        delete f;
        return 0;
    });
}

}  // extern "C"
