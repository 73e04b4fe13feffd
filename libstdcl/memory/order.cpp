// SPDX-License-Identifier: MIT
// order.cpp: the order of commands on an allocation.  CommandOrder, the one path
// by which every command libstdcl enqueues is ordered after the commands on the
// memory it uses (memory.hpp says how); each allocation's last command per device
// (an event, or an event-less launch's number); AllocUse, the claims that clfree
// and clmdetach wait for; and the waits for an allocation's commands before its
// memory goes.
#include "events/events.hpp"
#include "helpers/cl_util.hpp"
#include "config/config.hpp"
#include "helpers/diag.hpp"
#include "memory/sync_check.hpp"

#include <algorithm>
#include <functional>

namespace stdcl {

void Allocation::note_event(unsigned devnum, cl_event ev, cl_command_queue q)
{
    cl_int err = clRetainEvent(ev);
    if (err != CL_SUCCESS) {
        // Without a reference of its own the allocation cannot track the command:
        // finish it now, so clfree never releases memory a command still uses.
        clWaitForEvents(1, &ev);
        trace(Trace::mem, "clRetainEvent failed (%s): waited for the command on %p instead of tracking it",
              cl_error_name(err), (void*)host);
        return;
    }
    try {
        if (last.size() <= devnum) last.resize(devnum + 1, nullptr);
        if (last_queue.size() <= devnum) last_queue.resize(devnum + 1, nullptr);
    } catch (...) {
        // No room to track it (out of host memory): finish the command now instead.
        clWaitForEvents(1, &ev);
        clReleaseEvent(ev);
        return;
    }
    if (last[devnum]) clReleaseEvent(last[devnum]);
    last[devnum] = ev;
    last_queue[devnum] = q;
    if (devnum < last_noev.size()) last_noev[devnum] = 0;  // ev is ordered after it
}

void Allocation::note_noevent(const Device& d, unsigned devnum, std::uint64_t seq)
{
    try {
        if (last_noev.size() <= devnum) last_noev.resize(devnum + 1, 0);
    } catch (...) {
        // No room to track it (out of host memory): finish the launch now instead.
        clFinish(d.queue);
        return;
    }
    // The launch came after the command in `last`: on the same in-order queue, or
    // waiting for it (CommandOrder).
    if (devnum < last.size() && last[devnum]) {
        clReleaseEvent(last[devnum]);
        last[devnum] = nullptr;
    }
    last_noev[devnum] = seq;
}

void Allocation::add_wait(const Device& d, unsigned devnum, std::vector<cl_event>& out, std::vector<cl_event>& owned,
                          cl_command_queue q)
{
    std::uint64_t seq = 0;  // an event-less launch to wait for
    {
        if (devnum < last_noev.size() && last_noev[devnum] && q != d.queue) seq = last_noev[devnum];
        cl_event e = devnum < last.size() ? last[devnum] : nullptr;
        if (e && last_queue[devnum] != q) {  // on the same in-order queue: after it already
            cl_int st = CL_QUEUED;
            if (clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr) == CL_SUCCESS &&
                (st == CL_COMPLETE || st < 0)) {
                // Finished: nothing to wait for.  Failed: clwait reports it; a later
                // command does not inherit the failure through its wait list.
                clReleaseEvent(e);
                last[devnum] = nullptr;
            } else if (std::find(out.begin(), out.end(), e) == out.end()) {
                out.push_back(e);
            }
        }
    }
    if (!seq) return;
    cl_event m = noevent_marker(d, seq);
    if (!m) return;  // completed
    if (std::find(out.begin(), out.end(), m) != out.end()) {
        clReleaseEvent(m);  // another allocation's wait brought the same marker
        return;
    }
    try {
        owned.push_back(m);
    } catch (...) {
        clWaitForEvents(1, &m);  // no room to list it: wait for it here
        clReleaseEvent(m);
        return;
    }
    try {
        out.push_back(m);
    } catch (...) {
        clWaitForEvents(1, &m);  // owned releases it
    }
}

CommandOrder::CommandOrder(const Device& d, unsigned devnum, std::initializer_list<Allocation*> allocs,
                           cl_command_queue q)
    : d_(d), devnum_(devnum), queue_(q)
{
    for (Allocation* a : allocs) add(a);
    start();
}

CommandOrder::CommandOrder(const Device& d, unsigned devnum, const AllocUse* uses, size_t n, cl_command_queue q)
    : d_(d), devnum_(devnum), queue_(q)
{
    for (size_t i = 0; i < n; ++i) add(&*uses[i]);
    start();
}

// Sorted by address, each once: by insertion (a command uses a few).
void CommandOrder::add(Allocation* a)
{
    std::less<Allocation*> before;
    size_t j = allocs_.size();
    while (j > 0 && before(a, allocs_[j - 1])) --j;
    if (j > 0 && allocs_[j - 1] == a) return;
    allocs_.push_back(a);
    for (size_t k = allocs_.size() - 1; k > j; --k) allocs_[k] = allocs_[k - 1];
    allocs_[j] = a;
}

void CommandOrder::start()
{
    // One queue: its own order suffices, unless a program's queue holds commands
    // on this device's memory (clforeign_end).
    if (allocs_.empty() ||
        (d_.xfer == d_.queue && queue_ == d_.queue && !d_.events->other_queues.load(std::memory_order_relaxed)))
        return;
    for (Allocation* a : allocs_) a->order.lock();  // in address order: no deadlock
    locked_ = true;
    try {
        for (Allocation* a : allocs_) a->add_wait(d_, devnum_, waits_, owned_, queue_);
    } catch (...) {
        unlock_all();
        throw;
    }
}

void CommandOrder::unlock_all() noexcept
{
    if (locked_)
        for (Allocation* a : allocs_) a->order.unlock();
    locked_ = false;
    for (cl_event m : owned_) clReleaseEvent(m);
    owned_.clear();
}

CommandOrder::~CommandOrder() { unlock_all(); }

// One queue: each order mutex is taken only to note the command.
template <class F> void CommandOrder::note_each(F&& note)
{
    for (Allocation* a : allocs_) {
        if (locked_) {
            note(*a);
        } else {
            std::lock_guard<std::mutex> lock(a->order);
            note(*a);
        }
    }
}

void CommandOrder::enqueued(cl_event ev, int flags)
{
    if (!(flags & CL_EVENT_NOWAIT)) return;
    note_each([&](Allocation& a) { a.note_event(devnum_, ev, queue_); });
}

void CommandOrder::enqueued_noevent(std::uint64_t seq)
{
    note_each([&](Allocation& a) { a.note_noevent(d_, devnum_, seq); });
}

void Allocation::wait_idle()
{
    // Allocates nothing (clfree must not fail half way): the tracked events are
    // taken by swapping the vector out.
    std::vector<cl_event> pending;
    std::vector<std::uint64_t> noev;
    CLCONTEXT* owner = nullptr;
    {
        std::lock_guard<std::mutex> lock(order);
        owner = cp.load();
        pending.swap(last);
        noev.swap(last_noev);
    }
    finish_events(pending, noev, owner);
}

void Allocation::finish_events(std::vector<cl_event>& pending, const std::vector<std::uint64_t>& noev,
                               CLCONTEXT* owner) noexcept
{
    for (size_t dn = 0; dn < noev.size(); ++dn) {
        // Without a context the queues were finished when it went.
        if (!noev[dn] || !owner || dn >= owner->devs.size()) continue;
        const Device& d = owner->devs[dn];
        if (cl_event m = noevent_marker(d, noev[dn])) {
            if (wait_events(d, 1, &m) != CL_SUCCESS) clFinish(d.queue);
            clReleaseEvent(m);
        }
    }
    size_t n = 0;
    for (cl_event e : pending)
        if (e) pending[n++] = e;
    // The devices of a context share a platform, and so a policy.
    cl_int err = !n ? CL_SUCCESS
        : owner && !owner->devs.empty() ? wait_events(owner->devs[0], cl_uint(n), pending.data())
                                        : clWaitForEvents(cl_uint(n), pending.data());
    if (err != CL_SUCCESS) {
        // A failed command makes the wait fail; a failed wait itself may return before
        // the commands end.  Either way: nothing may use the memory after this.
        for (size_t i = 0; i < n; ++i) clWaitForEvents(1, &pending[i]);
        if (owner)
            for (auto& d : owner->devs) {
                clFinish(d.queue);
                if (d.xfer && d.xfer != d.queue) clFinish(d.xfer);
            }
    }
    for (size_t i = 0; i < n; ++i) clReleaseEvent(pending[i]);
}

void Allocation::wait_unused(std::unique_lock<std::mutex>& lock)
{
    idle_waiters.fetch_add(1);
    idle.wait(lock, [this] { return users.load() == 0; });
    idle_waiters.fetch_sub(1);
}

AllocUse::AllocUse(std::shared_ptr<Allocation> a) : a_(std::move(a))
{
    a_->users.fetch_add(1);
    bool dead = a_->dead.load();
    if (dead || !a_->cp.load()) {
        release();
        void* h = a_->host;
        a_.reset();
        if (dead) fail(STDCL_ENOENT, "the allocation at %p was freed", h);
        fail(STDCL_ESTATE, "the allocation at %p is detached", h);
    }
}

void AllocUse::release() noexcept
{
    if (a_->users.fetch_sub(1) == 1 && a_->idle_waiters.load() > 0) {
        std::lock_guard<std::mutex> lock(a_->mu);  // the waiter is asleep or not yet checking
        a_->idle.notify_all();
    }
}

AllocUse::~AllocUse()
{
    if (a_) release();
}

}  // namespace stdcl
