// SPDX-License-Identifier: MIT
// memory.cpp: the allocation registry and clmalloc, clfree, clmsync and friends.
//
// An allocation is host memory (blocks.cpp: a slab chunk below a page, mapped pages
// above; the program's own for clmadopt; none for CL_MEM_DEVONLY) plus, per device of
// its context, a cl_mem created on first use: on devices that work on host memory
// (probed at context creation) a CL_MEM_USE_HOST_PTR buffer over the host memory when
// it is aligned as the device needs, elsewhere a device buffer that clmsync fills and
// reads back.
//
// Pinned host memory: when a device of the context has memory of its own, an
// allocation of at least STDCL_PIN_MIN bytes (256 KiB) is the mapping of a
// CL_MEM_ALLOC_HOST_PTR buffer, mapped once at clmalloc and unmapped at clfree: memory
// the driver can DMA from directly, so clmsync runs at the speed of a raw pinned
// transfer (pageable memory goes through a staging copy).  Smaller allocations stay
// pageable (a buffer and a map per clmalloc would cost more than they save);
// STDCL_PINNED=0 turns pinning off.  If the driver cannot give a page-aligned mapping
// the allocation is pageable.
#include "events/events.hpp"
#include "helpers/cl_util.hpp"
#include "config/config.hpp"
#include "helpers/diag.hpp"
#include "memory/sync_check.hpp"
#include "memory/watch.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>

namespace stdcl {

namespace {

constexpr int kAllocFlags =
    CL_MEM_RW | CL_MEM_RO | CL_MEM_WO | CL_MEM_DETACHED | CL_MEM_NOCOPY | CL_MEM_IMAGE2D | CL_MEM_DEVONLY | CL_MEM_ZERO;

size_t page_size()
{
    static const size_t ps = size_t(sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096);
    return ps;
}

cl_mem_flags access_flags(int flags)
{
    if (flags & CL_MEM_RO) return CL_MEM_READ_ONLY;
    if (flags & CL_MEM_WO) return CL_MEM_WRITE_ONLY;
    return CL_MEM_READ_WRITE;
}

size_t pixel_size(const cl_image_format& f)
{
    size_t channels = 4;
    switch (f.image_channel_order) {
    case CL_R:
    case CL_A:
    case CL_INTENSITY:
    case CL_LUMINANCE: channels = 1; break;
    case CL_RG:
    case CL_RA: channels = 2; break;
    case CL_RGB: channels = 3; break;
    default: channels = 4;
    }
    switch (f.image_channel_data_type) {
    case CL_SNORM_INT8:
    case CL_UNORM_INT8:
    case CL_SIGNED_INT8:
    case CL_UNSIGNED_INT8: return channels;
    case CL_SNORM_INT16:
    case CL_UNORM_INT16:
    case CL_SIGNED_INT16:
    case CL_UNSIGNED_INT16:
    case CL_HALF_FLOAT: return 2 * channels;
    case CL_UNORM_SHORT_565:
    case CL_UNORM_SHORT_555: return 2;
    case CL_UNORM_INT_101010: return 4;
    default: return 4 * channels;
    }
}

}  // namespace

std::shared_ptr<Allocation> attached(CLCONTEXT* cp, const void* ptr, const char* call, size_t* offset)
{
    if (!ptr) fail(STDCL_EINVAL, "%s: the pointer is NULL", call);
    auto a = registry_find(ptr, offset);
    if (!a) fail(STDCL_ENOENT, "%s: %p is not memory returned by clmalloc (or it was freed)", call, ptr);
    if (a->cp != cp)
        fail(STDCL_EINVAL, "%s: the allocation at %p is %s, not to this context", call, (void*)a->host,
             a->cp ? "attached to another context" : "detached (clmattach it first)");
    return a;
}

namespace {

void check_size_fits(CLCONTEXT* cp, size_t size, const char* call)
{
    for (size_t i = 0; i < cp->devs.size(); ++i) {
        const Device& d = cp->devs[i];
        if (d.max_alloc && size > d.max_alloc)
            fail(STDCL_ENOMEM, "%s: %zu bytes is more than device %zu (%s) can allocate (at most %llu bytes)", call,
                 size, i, d.name.c_str(), (unsigned long long)d.max_alloc);
    }
}

}  // namespace

void memory_forget_context(CLCONTEXT* cp)
{
    for (auto& a : registry_of_context(cp)) {
        a->wait_idle();
        a->release_device_objects();
        a->cp = nullptr;
    }
}

namespace {

// Serial numbers of the device objects allocations create (Allocation::device_mem).
std::uint64_t mem_serial_next()
{
    static std::atomic<std::uint64_t> n{0};
    return n.fetch_add(1, std::memory_order_relaxed) + 1;
}

}  // namespace

cl_mem Allocation::device_mem(unsigned devnum, size_t offset, std::uint64_t* serial)
{
    std::lock_guard<std::mutex> lock(mu);
    if (dead) fail(STDCL_ENOENT, "the allocation at %p was freed", (void*)host);
    CLCONTEXT* owner = cp.load();
    if (!owner) fail(STDCL_ESTATE, "the allocation at %p is detached", (void*)host);
    const Device& d = owner->devs[devnum];
    if (mem.size() < owner->devs.size()) mem.resize(owner->devs.size(), nullptr);  // `last`: at note_event
    if (mem_serial.size() < mem.size()) mem_serial.resize(mem.size(), 0);
    cl_int err = CL_SUCCESS;
    if (!mem[devnum]) {
        cl_mem_flags f = access_flags(flags);
        if (is_image) {
            cl_image_desc desc;
            std::memset(&desc, 0, sizeof desc);
            desc.image_type = CL_MEM_OBJECT_IMAGE2D;
            desc.image_width = img_w;
            desc.image_height = img_h;
            mem[devnum] = clCreateImage(owner->ctx, f, &img_fmt, &desc, nullptr, &err);
            check_cl(err, "clCreateImage (image2d allocation)");
            mem_serial[devnum] = mem_serial_next();
        } else {
            bool zc = zero_copy_on(d) || (flags & CL_MEM_NOCOPY);
            ClRef<cl_mem> m(clCreateBuffer(owner->ctx, f | (zc ? CL_MEM_USE_HOST_PTR : 0), size + guard,
                                           zc ? lib() : nullptr, &err));
            if (err != CL_SUCCESS)
                fail_cl(err, "clCreateBuffer of %zu bytes on device %u (%s)", size, devnum, d.name.c_str());
            if (guard) guard_init_device(*this, d, m.get());  // m is released if it throws
            if (!zc && ((flags & CL_MEM_ZERO) || settings().check_fill)) {
                // CL_MEM_ZERO: a device copy starts as zeros, as the host memory
                // does.  STDCL_CHECK=fill: a device copy never given a value
                // reads as the pattern, not as whatever the driver's memory held.
                std::vector<char> start(size);
                if (!(flags & CL_MEM_ZERO)) fill_pattern(start.data(), size);
                check_cl(clEnqueueWriteBuffer(d.queue, m.get(), CL_TRUE, 0, size, start.data(), 0, nullptr, nullptr),
                         (flags & CL_MEM_ZERO) ? "clEnqueueWriteBuffer (CL_MEM_ZERO)"
                                               : "clEnqueueWriteBuffer (STDCL_CHECK=fill)");
            }
            mem[devnum] = m.release();
            mem_serial[devnum] = mem_serial_next();
            trace(Trace::mem, "device %u copy of %p (%zu bytes)%s", devnum, (void*)host, size,
                  zc ? ": host memory, zero-copy" : "");
        }
    }
    if (offset == 0) {
        if (serial) *serial = mem_serial[devnum];
        return mem[devnum];
    }
    if (is_image) fail(STDCL_EINVAL, "an interior pointer into an image allocation cannot be a kernel argument");
    auto key = std::make_pair(devnum, offset);
    auto it = subs.find(key);
    if (it != subs.end()) {
        if (serial) *serial = it->second.second;
        return it->second.first;
    }
    if (offset % d.base_align)
        fail(STDCL_EINVAL,
             "interior pointer %p (offset %zu into the allocation at %p): device %u (%s) needs sub-buffer offsets "
             "aligned to %u bytes",
             (void*)(host + offset), offset, (void*)host, devnum, d.name.c_str(), d.base_align);
    cl_buffer_region region{offset, size - offset};
    // The memory of both tables first: nothing to leak if either allocation fails.
    subs_made.reserve(subs_made.size() + 1);
    auto slot = subs.emplace(key, std::make_pair(cl_mem(nullptr), std::uint64_t(0))).first;
    cl_mem sub = clCreateSubBuffer(mem[devnum], access_flags(flags), CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    if (err != CL_SUCCESS) {
        subs.erase(slot);
        fail_cl(err, "clCreateSubBuffer for an interior pointer");
    }
    slot->second = {sub, mem_serial_next()};
    subs_made.push_back(sub);
    if (serial) *serial = slot->second.second;
    return sub;
}

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
            if (clWaitForEvents(1, &m) != CL_SUCCESS) clFinish(d.queue);
            clReleaseEvent(m);
        }
    }
    size_t n = 0;
    for (cl_event e : pending)
        if (e) pending[n++] = e;
    if (n && clWaitForEvents(cl_uint(n), pending.data()) != CL_SUCCESS) {
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

namespace {

// A memory object's destruction, told by its destructor callback.
struct Destroyed {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
};

void CL_CALLBACK note_destroyed(cl_mem, void* user)
{
    auto* keep = static_cast<std::shared_ptr<Destroyed>*>(user);
    std::shared_ptr<Destroyed> d = std::move(*keep);
    delete keep;
    {
        std::lock_guard<std::mutex> lock(d->mu);
        d->done = true;
    }
    d->cv.notify_all();
}

// Releases m, then waits until the driver has destroyed it: the driver may hold
// references of its own for a while after the commands that used m completed.
// At most a second: a driver that is slower than that is traced, not waited for.
void release_destroyed(cl_mem m) noexcept
{
    std::shared_ptr<Destroyed> d;
    std::shared_ptr<Destroyed>* keep = nullptr;
    try {
        d = std::make_shared<Destroyed>();
        keep = new std::shared_ptr<Destroyed>(d);
    } catch (...) {
        clReleaseMemObject(m);  // out of memory: release without waiting
        return;
    }
    if (clSetMemObjectDestructorCallback(m, note_destroyed, keep) != CL_SUCCESS) {
        delete keep;
        clReleaseMemObject(m);
        return;
    }
    clReleaseMemObject(m);
    std::unique_lock<std::mutex> lock(d->mu);
    if (d->done) return;
    auto t0 = std::chrono::steady_clock::now();
    bool done = d->cv.wait_for(lock, std::chrono::seconds(1), [&] { return d->done; });
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
    trace(Trace::mem, "sub-buffer %p destroyed by the driver %lld us after its release%s", (void*)m, (long long)us,
          done ? "" : ": not yet, going on");
}

}  // namespace

void Allocation::release_device_objects()
{
    // No kernel object keeps a handle to what is released here (kernel_unbind).
    // Then sub-buffers newest first, each waited for until the driver has
    // destroyed it, then the buffers.  NVIDIA's OpenCL (driver 580) crashes
    // releasing a sub-buffer of a buffer while a newer sub-buffer of it that a
    // kernel was launched with still exists, and releasing a buffer while a
    // sub-buffer of it still exists; the driver keeps a released sub-buffer for a
    // while after the commands that used it completed.
    kernel_unbind(*this);
    std::lock_guard<std::mutex> lock(mu);
    for (auto it = subs_made.rbegin(); it != subs_made.rend(); ++it) release_destroyed(*it);
    subs_made.clear();
    subs.clear();
    for (auto& m : mem)
        if (m) clReleaseMemObject(m), m = nullptr;
    mem.clear();
    mem_serial.clear();
}

namespace {

// Whether an allocation of `bytes` for cp should be pinned: some device copies.
bool want_pinned(CLCONTEXT* cp, size_t size, int flags)
{
    const Settings& s = settings();
    if (!s.pinned || !cp || size < s.pin_min || (flags & (CL_MEM_DETACHED | CL_MEM_NOCOPY))) return false;
    for (const Device& d : cp->devs)
        if (!d.zero_copy) return true;
    return false;
}

// Maps a new CL_MEM_ALLOC_HOST_PTR buffer and makes its first page boundary a's block
// of `bytes`; false (nothing held) when any step fails: the caller allocates pageable
// memory instead.  The buffer has one page more than the block: a driver may map it
// at any alignment (PoCL: 128 bytes; NVIDIA: a page).
// Unmaps p (the mapping of m on q) and waits for it.
void unmap_and_wait(cl_command_queue q, cl_mem m, void* p) noexcept
{
    cl_event ev = nullptr;
    if (clEnqueueUnmapMemObject(q, m, p, 0, nullptr, &ev) != CL_SUCCESS) return;
    ClRef<cl_event> done(ev);
    clWaitForEvents(1, &ev);
}

bool pin_block(Allocation& a, CLCONTEXT* cp, size_t bytes, size_t ps)
{
    if (bytes > SIZE_MAX - ps) return false;
    bytes += ps;
    cl_int err = CL_SUCCESS;
    ClRef<cl_mem> m(clCreateBuffer(cp->ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, nullptr, &err));
    if (err != CL_SUCCESS || !m.get()) {
        trace(Trace::mem, "pinned %zu bytes: clCreateBuffer(CL_MEM_ALLOC_HOST_PTR): %s; pageable instead", bytes,
              cl_error_name(err));
        return false;
    }
    cl_command_queue q = cp->devs[0].queue;
    void* p = clEnqueueMapBuffer(q, m.get(), CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, nullptr, nullptr, &err);
    const char* why = nullptr;
    if (err != CL_SUCCESS || !p)
        why = "clEnqueueMapBuffer failed";
    else if (clRetainCommandQueue(q) != CL_SUCCESS)
        why = "clRetainCommandQueue failed";
    if (why) {
        if (err == CL_SUCCESS && p) unmap_and_wait(q, m.get(), p);
        trace(Trace::mem, "pinned %zu bytes: %s; pageable instead", bytes, why);
        return false;  // m released
    }
    a.backing = Backing::pinned;
    a.pin = m.release();
    a.pin_queue = q;
    a.pin_map = static_cast<char*>(p);
    a.block = a.pin_map + (ps - uintptr_t(p) % ps) % ps;
    return true;
}

// Frees a's block: unmaps and releases a pinned buffer, returns a slab chunk or
// pages; the program's own memory (adopted) stays.
void release_block(Allocation& a) noexcept
{
    switch (a.backing) {
    case Backing::pinned:
        unmap_and_wait(a.pin_queue, a.pin, a.pin_map);
        clReleaseMemObject(a.pin);
        clReleaseCommandQueue(a.pin_queue);
        a.pin = nullptr;
        a.pin_map = nullptr;
        a.pin_queue = nullptr;
        break;
    case Backing::slab: slab_free(a.block, a.slab); break;
    case Backing::pages: pages_free(a.block, a.block_bytes, true); break;
    case Backing::devonly: release_addresses(a.block, a.block_bytes); break;
    case Backing::heap: pages_free(a.block, a.block_bytes, false); break;
    case Backing::adopted: break;
    case Backing::watched:
        watch_remove(a.watch);
        watch_unmap(a.block, a.libview - (a.host - a.block), a.block_bytes);
        a.watch = -1;
        a.libview = nullptr;
        break;
    }
    a.block = nullptr;  // host stays: it is read without a lock (bind_global's fast path; messages)
}

// The alignment of small detached allocations: the largest a default context needs.
size_t detached_align()
{
    size_t al = 128;
    for (CLCONTEXT* c : {stddev, stdcpu, stdgpu, stdacc, stdrpu, stdnpu})
        if (c && c->mem_align > al) al = c->mem_align;
    return al;
}

// STDCL_CHECK=sync: pages mapped twice, so that the program's view can be
// protected while the library and the driver work through the other.
bool watch_block(Allocation& a, size_t bytes, size_t ps)
{
    size_t rounded = (bytes + ps - 1) / ps * ps;
    char *user, *lib;
    if (!watch_map(rounded, &user, &lib)) {
        trace(Trace::mem,
              "STDCL_CHECK=sync: %zu bytes could not be mapped twice; host reads of this allocation "
              "are not checked",
              bytes);
        return false;
    }
    a.block = user;
    a.libview = lib;  // made block-relative in new_allocation
    a.block_bytes = rounded;
    a.backing = Backing::watched;
    return true;
}

// Host memory for a new allocation of size bytes: a's block and backing.
void host_block(Allocation& a, CLCONTEXT* cp, size_t size, size_t bytes, bool paged, int flags, const char* call)
{
    size_t ps = page_size();
    if (flags & CL_MEM_DEVONLY) {
        a.block = reserve_addresses(bytes);
        if (!a.block) fail(STDCL_ENOMEM, "%s: no address range for %zu bytes of device-only memory", call, size);
        a.block_bytes = bytes;
        a.backing = Backing::devonly;
        return;
    }
    if (settings().check_sync && !(flags & (CL_MEM_NOCOPY | CL_MEM_IMAGE2D)) && watch_block(a, bytes, ps)) return;
    if (want_pinned(cp, size, flags) && pin_block(a, cp, bytes, ps)) return;
    if (!paged) {
        unsigned cls = slab_class(size, cp ? std::max<size_t>(cp->mem_align, 128) : detached_align());
        if (cls) {
            a.block = slab_alloc(cls);
            if (!a.block) fail(STDCL_ENOMEM, "%s: out of host memory for %zu bytes", call, size);
            a.slab = cls;
            a.backing = Backing::slab;
            return;
        }
    }
    bool mapped = false;
    a.block = pages_alloc(bytes, &mapped);
    if (!a.block) fail(STDCL_ENOMEM, "%s: out of host memory for %zu bytes", call, size);
    a.block_bytes = bytes;
    a.backing = mapped ? Backing::pages : Backing::heap;
}

}  // namespace

Allocation::~Allocation()
{
    if (block) release_block(*this);
}

namespace {

std::shared_ptr<Allocation> new_allocation(CLCONTEXT* cp, size_t size, int flags, const char* call)
{
    if (size == 0) fail(STDCL_EINVAL, "%s: size is 0", call);
    if (flags & ~kAllocFlags) fail(STDCL_EINVAL, "%s: unknown flags 0x%x", call, unsigned(flags & ~kAllocFlags));
    int access = flags & (CL_MEM_RW | CL_MEM_RO | CL_MEM_WO);
    if (access & (access - 1)) fail(STDCL_EINVAL, "%s: CL_MEM_RW, CL_MEM_RO and CL_MEM_WO exclude each other", call);
    if ((flags & CL_MEM_DEVONLY) && (flags & (CL_MEM_DETACHED | CL_MEM_NOCOPY)))
        fail(STDCL_EINVAL, "%s: CL_MEM_DEVONLY memory lives on the devices of a context: not with %s", call,
             (flags & CL_MEM_DETACHED) ? "CL_MEM_DETACHED" : "CL_MEM_NOCOPY (host memory for the devices)");
    if (flags & CL_MEM_DETACHED) {
        cp = nullptr;  // STDCL 1.6 ignores the context of detached memory
    } else {
        context_check(cp, call);
        check_size_fits(cp, size, call);
    }
    size_t ps = page_size();
    if (size > SIZE_MAX - ps) fail(STDCL_ENOMEM, "%s: %zu bytes cannot be allocated", call, size);
    size_t rounded = (size + ps - 1) / ps * ps;
    bool devonly = flags & CL_MEM_DEVONLY;
    size_t front = 0, back = 0;  // STDCL_CHECK=1: guard zones (host memory only)
    if (!devonly) front = guard_front_bytes(ps), back = guard_back_bytes(size, ps);
    size_t bytes = back ? front + size + back : rounded;
    std::shared_ptr<Allocation> a = std::make_shared<Allocation>();
    host_block(*a, cp, size, bytes, back != 0, flags, call);
    a->host = a->block + front;
    if (a->libview) a->libview += front;
    a->guard = back;
    a->size = size;
    if (!devonly) guard_init_host(*a, front);
    if (!devonly && (flags & CL_MEM_ZERO))
        std::memset(a->lib(), 0, size);  // as calloc: reused pages and slab chunks hold old data
    else if (!devonly && settings().check_fill)
        fill_pattern(a->lib(), size);
    a->flags = flags & ~CL_MEM_DETACHED;
    a->cp = (flags & CL_MEM_DETACHED) ? nullptr : cp;
    return a;
}

void destroy_allocation(const std::shared_ptr<Allocation>& a)
{
    if (a->sync) sync_note_free(*a);
    std::vector<cl_event> pending;
    std::vector<std::uint64_t> noev;
    CLCONTEXT* owner = nullptr;
    {
        std::unique_lock<std::mutex> lock(a->mu);
        a->dead = true;  // no new AllocUse from here on
        a->wait_unused(lock);
    }
    {
        std::lock_guard<std::mutex> lock(a->order);  // as wait_idle
        owner = a->cp.load();
        pending.swap(a->last);
        noev.swap(a->last_noev);
    }
    a->finish_events(pending, noev, owner);
    if (a->handed_out.load(std::memory_order_relaxed)) foreign_wait_queues(owner);
    std::exception_ptr overrun;
    if (a->guard) {
        try {
            guard_check(*a, -1, "clfree");
        } catch (...) {
            overrun = std::current_exception();  // reported once the memory is freed
        }
    }
    a->release_device_objects();
    release_block(*a);
    if (overrun) std::rethrow_exception(overrun);
}

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

// clmsync and clmsyncn: len bytes from ptr (to the end of the allocation if whole).
void fill_pattern(char* p, size_t n)
{
    const std::uint32_t pattern = kFillPattern;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) std::memcpy(p + i, &pattern, 4);
    std::memcpy(p + i, &pattern, n - i);
}

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
        // memory faster that way (NVIDIA: about 20% for 1 MiB).
        cl_bool block = (flags & CL_EVENT_NOWAIT) ? CL_FALSE : CL_TRUE;
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
            *a, devnum, off, len, dir == CL_MEM_HOST, ev,
            strprintf("%s %s device %u (CL_EVENT_NOWAIT)", call, dir == CL_MEM_DEVICE ? "to" : "from", devnum));
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
        if (!(flags & CL_EVENT_NOWAIT)) sync_settle(call);
    }
    return done;
}

}  // namespace stdcl

using namespace stdcl;

extern "C" {

STDCL_API void* clmalloc(CLCONTEXT* cp, size_t size, int flags)
{
    void* caller = __builtin_return_address(0);
    return guarded<void*>(nullptr, [&]() -> void* {
        auto a = new_allocation(cp, size, flags, "clmalloc");
        if (sync_check_on()) sync_note_alloc(*a, caller);
        char* host = a->host;
        const char* kind = !a->cp            ? " (detached)"
            : a->backing == Backing::pinned  ? " (pinned)"
            : a->backing == Backing::slab    ? " (slab)"
            : a->backing == Backing::devonly ? " (device-only)"
            : a->backing == Backing::watched ? " (watched)"
                                             : "";
        registry_insert(std::move(a));  // on failure the record's destructor frees the memory
        trace(Trace::mem, "clmalloc %zu bytes at %p%s", size, (void*)host, kind);
        return host;
    });
}

STDCL_API int clfree(void* ptr)
{
    return guarded_int([&] {
        if (!ptr) return 0;
        std::shared_ptr<Allocation> a;
        size_t off = 0;
        if (auto named = registry_find(ptr, &off)) foreign_check_closed(*named, "clfree");
        switch (registry_take(ptr, &a, &off)) {
        case RegistryTake::absent:
            fail(STDCL_ENOENT, "clfree: %p is not memory returned by clmalloc (or it was already freed)", ptr);
        case RegistryTake::interior:
            fail(STDCL_ENOENT,
                 "clfree: %p points %zu bytes into the allocation at %p; pass the pointer clmalloc returned", ptr, off,
                 (void*)a->host);
        case RegistryTake::removed: break;
        }
        trace(Trace::mem, "clfree %p (%zu bytes)", ptr, a->size);
        destroy_allocation(a);
        return 0;
    });
}

STDCL_API void* clmrealloc(CLCONTEXT* cp, void* ptr, size_t size, int flags)
{
    void* caller = __builtin_return_address(0);
    return guarded<void*>(nullptr, [&]() -> void* {
        if (!ptr) return clmalloc(cp, size, flags);
        size_t off = 0;
        auto old = registry_find(ptr, &off);
        if (!old || off) fail(STDCL_ENOENT, "clmrealloc: %p is not memory returned by clmalloc", ptr);
        if (old->backing == Backing::adopted)
            fail(STDCL_EINVAL, "clmrealloc: %p is the program's memory (clmadopt): clfree it and adopt the new memory",
                 ptr);
        if (old->backing == Backing::devonly || (flags & CL_MEM_DEVONLY))
            fail(STDCL_EINVAL,
                 "clmrealloc: device-only memory (CL_MEM_DEVONLY) has no host copy to move: clmalloc "
                 "the new size and clmcopy");
        foreign_check_closed(*old, "clmrealloc");
        auto a = new_allocation(cp, size, flags, "clmrealloc");
        old->wait_idle();
        std::memcpy(a->lib(), old->lib(), std::min(size, old->size));
        if (sync_check_on()) sync_note_alloc(*a, caller);
        registry_insert(a);  // on failure the record's destructor frees the new memory
        std::shared_ptr<Allocation> same;
        if (registry_take(ptr, &same, &off) == RegistryTake::removed) destroy_allocation(old);
        trace(Trace::mem, "clmrealloc %p (%zu bytes) -> %p (%zu bytes)", ptr, old->size, (void*)a->host, size);
        return a->host;
    });
}

STDCL_API int clmadopt(CLCONTEXT* cp, void* ptr, size_t size, int flags)
{
    void* caller = __builtin_return_address(0);
    return guarded_int([&] {
        constexpr int kAdoptFlags = CL_MEM_RW | CL_MEM_RO | CL_MEM_WO | CL_MEM_DETACHED | CL_MEM_NOCOPY;
        if (!ptr) fail(STDCL_EINVAL, "clmadopt: the pointer is NULL");
        if (size == 0) fail(STDCL_EINVAL, "clmadopt: size is 0");
        if (flags & ~kAdoptFlags)
            fail(STDCL_EINVAL, "clmadopt: flags 0x%x cannot be adopted (RW, RO, WO, NOCOPY and DETACHED can)",
                 unsigned(flags & ~kAdoptFlags));
        int access = flags & (CL_MEM_RW | CL_MEM_RO | CL_MEM_WO);
        if (access & (access - 1))
            fail(STDCL_EINVAL, "clmadopt: CL_MEM_RW, CL_MEM_RO and CL_MEM_WO exclude each other");
        if (uintptr_t(ptr) > UINTPTR_MAX - size)
            fail(STDCL_EINVAL, "clmadopt: %zu bytes at %p pass the end of the address space", size, ptr);
        if (flags & CL_MEM_DETACHED) {
            cp = nullptr;
        } else {
            context_check(cp, "clmadopt");
            check_size_fits(cp, size, "clmadopt");
        }
        auto a = std::make_shared<Allocation>();
        a->block = a->host = static_cast<char*>(ptr);
        a->size = size;
        a->backing = Backing::adopted;
        a->flags = flags & ~CL_MEM_DETACHED;
        a->cp = cp;
        if (sync_check_on()) sync_note_alloc(*a, caller);
        registry_insert(std::move(a));
        trace(Trace::mem, "clmadopt %zu bytes at %p%s", size, ptr, cp ? "" : " (detached)");
        return 0;
    });
}

STDCL_API size_t clsizeofmem(void* ptr)
{
    return guarded<size_t>(0, [&]() -> size_t {
        uintptr_t base = 0;
        size_t size = 0;
        if (!ptr || !registry_lookup(ptr, &base, &size) || base != uintptr_t(ptr))
            fail(STDCL_ENOENT, "clsizeofmem: %p is not the start of a clmalloc allocation", ptr);
        return size;
    });
}

STDCL_API void* stdcl_mem_base(const void* ptr, size_t* offset)
{
    return guarded<void*>(nullptr, [&]() -> void* {
        uintptr_t base = 0;
        size_t size = 0;
        if (!ptr || !registry_lookup(ptr, &base, &size))
            fail(STDCL_ENOENT, "stdcl_mem_base: %p is not inside memory returned by clmalloc", ptr);
        if (offset) *offset = size_t(uintptr_t(ptr) - base);
        return reinterpret_cast<void*>(base);
    });
}

STDCL_API int clmattach(CLCONTEXT* cp, void* ptr)
{
    return guarded_int([&] {
        context_check(cp, "clmattach");
        size_t off = 0;
        auto a = ptr ? registry_find(ptr, &off) : nullptr;
        if (!a || off) fail(STDCL_ENOENT, "clmattach: %p is not the start of a clmalloc allocation", ptr);
        check_size_fits(cp, a->size, "clmattach");
        std::lock_guard<std::mutex> lock(a->mu);
        if (a->cp) fail(STDCL_ESTATE, "clmattach: %p is already attached to a context (clmdetach it first)", ptr);
        a->cp = cp;
        return 0;
    });
}

STDCL_API int clmdetach(void* ptr)
{
    return guarded_int([&] {
        size_t off = 0;
        auto a = ptr ? registry_find(ptr, &off) : nullptr;
        if (!a || off) fail(STDCL_ENOENT, "clmdetach: %p is not the start of a clmalloc allocation", ptr);
        foreign_check_closed(*a, "clmdetach");
        CLCONTEXT* owner = a->cp.load();
        {
            std::unique_lock<std::mutex> lock(a->mu);
            if (!a->cp) fail(STDCL_ESTATE, "clmdetach: %p is not attached", ptr);
            if (a->backing == Backing::devonly)
                fail(STDCL_EINVAL, "clmdetach: %p is device-only (CL_MEM_DEVONLY): its contents live on the devices",
                     ptr);
            a->cp = nullptr;  // no new AllocUse from here on
            a->wait_unused(lock);
        }
        a->wait_idle();
        if (a->handed_out.load(std::memory_order_relaxed)) foreign_wait_queues(owner);
        a->release_device_objects();
        return 0;
    });
}

STDCL_API int clmctl_va(void* ptr, int op, va_list ap)
{
    return guarded_int([&] {
        size_t off = 0;
        auto a = ptr ? registry_find(ptr, &off) : nullptr;
        if (!a || off) fail(STDCL_ENOENT, "clmctl: %p is not the start of a clmalloc allocation", ptr);
        switch (op) {
        case CL_MCTL_GET_STATUS: return a->flags;
        case CL_MCTL_MARK_CLEAN: a->clean.store(true); return 0;
        case CL_MCTL_SET_IMAGE2D: {
            // STDCL 1.6's three values: width, height, format (any allocation becomes an image).
            size_t w = va_arg(ap, size_t), h = va_arg(ap, size_t);
            const cl_image_format* fmt = va_arg(ap, const cl_image_format*);
            cl_image_format f = fmt ? *fmt : cl_image_format{CL_RGBA, CL_FLOAT};
            if (w == 0 || h == 0 || w * h * pixel_size(f) > a->size)
                fail(STDCL_EINVAL, "clmctl: a %zux%zu image of %zu-byte pixels does not fit in %zu bytes", w, h,
                     pixel_size(f), a->size);
            a->wait_idle();
            a->release_device_objects();
            std::lock_guard<std::mutex> lock(a->mu);
            a->is_image = true;
            a->flags |= CL_MEM_IMAGE2D;
            a->img_w = w;
            a->img_h = h;
            a->img_fmt = f;
            return 0;
        }
        case CL_MCTL_SET_USRFLAGS:
        case CL_MCTL_CLR_USRFLAGS: {
            int f = va_arg(ap, int);
            if (a->cp) fail(STDCL_ESTATE, "clmctl: user flags can only change on a detached allocation");
            if (f & (~kAllocFlags | CL_MEM_DETACHED | CL_MEM_DEVONLY))
                fail(STDCL_EINVAL,
                     "clmctl: 0x%x is not a set of user flags (CL_MEM_DETACHED is clmdetach's; CL_MEM_DEVONLY is fixed "
                     "at clmalloc)",
                     unsigned(f));
            a->flags = op == CL_MCTL_SET_USRFLAGS ? (a->flags | f) : (a->flags & ~f);
            return 0;
        }
        default: fail(STDCL_EINVAL, "clmctl: unsupported operation %d", op);
        }
    });
}

STDCL_API int clmctl(void* ptr, int op, ...)
{
    va_list ap;
    va_start(ap, op);
    int r = clmctl_va(ptr, op, ap);
    va_end(ap);
    return r;
}

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
        cl_command_queue q = transfer_queue(d);
        CommandOrder order(d, devnum, {&*s, &*t}, q);
        cl_event ev = nullptr;
        check_cl(clEnqueueCopyBuffer(q, sm, tm, soff, doff, len, order.count(), order.list(), &ev), "clmcopy");
        if (q != d.queue) transfer_enqueued(d, q, ev);
        t->note_device_write(devnum);
        if (t->sync) sync_note_device_write(*t, devnum, doff, "clmcopy");
        order.enqueued(ev, flags);
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
        return m;
    });
}

}  // extern "C"
