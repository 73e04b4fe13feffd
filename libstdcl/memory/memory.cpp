// SPDX-License-Identifier: MIT
// memory.cpp: allocations: clmalloc, clfree, clmrealloc, clmadopt, clmattach,
// clmdetach, clmctl, and each allocation's device objects.  Their transfers are in
// transfer.cpp, the order of their commands in order.cpp.
//
// An allocation is host memory (blocks.cpp: a slab chunk below a page, mapped pages
// above, pinned or mapped twice where that serves; the program's own for clmadopt;
// none for CL_MEM_DEVONLY) plus, per device of
// its context, a cl_mem created on first use: on devices that work on host memory
// (probed at context creation) a CL_MEM_USE_HOST_PTR buffer over the host memory when
// it is aligned as the device needs, elsewhere a device buffer that clmsync fills and
// reads back.
#include "events/events.hpp"
#include "helpers/cl_util.hpp"
#include "config/config.hpp"
#include "helpers/diag.hpp"
#include "memory/sync_check.hpp"

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
        // A context clcontext_destroy may be destroying: it forgets a itself.
        // (A default one is never destroyed while a call runs: no lookup.)
        bool std_ctx = owner == stddev || owner == stdcpu || owner == stdgpu || owner == stdacc;
        if (owner && !std_ctx && !context_live(owner)) owner = nullptr;
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

}  // namespace

void fill_pattern(char* p, size_t n)
{
    const std::uint32_t pattern = kFillPattern;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) std::memcpy(p + i, &pattern, 4);
    std::memcpy(p + i, &pattern, n - i);
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

}  // extern "C"
