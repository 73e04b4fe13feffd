// SPDX-License-Identifier: MIT
// blocks.cpp: host memory for allocations (memory/memory.hpp).
//
// Small allocations (under kSlabMax bytes) come from slabs: 64 KiB regions mapped
// for one chunk size each, a multiple of the alignment asked for, so that every
// chunk of a slab is aligned as its first.  A 256-byte allocation costs 256 bytes
// of host memory plus its record, where a page-aligned block cost two pages in
// glibc.  Freed chunks go back to their size's free list; slabs are kept for reuse,
// not returned to the system.  Larger blocks are mapped pages; if the system
// refuses a mapping (the map count limit), glibc's posix_memalign serves instead.
// Freed blocks up to 256 KiB are kept, 32 MiB at most, for the next allocation of
// the same size: a clmalloc and clfree of 4 KiB then costs no system call and no
// page fault; larger ones are unmapped at once.  Device-only allocations get addresses reserved
// without access: unique, never backed by memory.
//
// Pinned host memory: when a device of the context has memory of its own, an
// allocation of at least STDCL_PIN_MIN bytes (256 KiB) is the mapping of a
// CL_MEM_ALLOC_HOST_PTR buffer, mapped once at clmalloc and unmapped at clfree: memory
// the driver can DMA from directly, so clmsync runs at the speed of a raw pinned
// transfer (pageable memory goes through a staging copy).  Smaller allocations stay
// pageable (a buffer and a map per clmalloc would cost more than they save);
// STDCL_PINNED=0 turns pinning off.  If the driver cannot give a page-aligned mapping
// the allocation is pageable.
//
// Under STDCL_CHECK=sync an allocation's pages are mapped twice (watch.hpp), so that
// the program's view can be protected while the library and the driver use the other.
#include "memory/memory.hpp"

#include "config/config.hpp"
#include "helpers/cl_util.hpp"
#include "helpers/diag.hpp"
#include "memory/watch.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

namespace stdcl {

namespace {

constexpr size_t kSlabBytes = size_t(64) << 10;
constexpr size_t kUnit = 128;  // chunk sizes are multiples of it (and of the alignment)
constexpr unsigned kClasses = unsigned(kSlabMax / kUnit) + 1;

struct SizeClass {
    std::mutex mu;
    std::vector<char*> free_chunks;  // room for every chunk carved (no allocation at free)
    char* next = nullptr;  // the current slab's next uncarved chunk
    size_t left = 0;  // chunks left to carve there
};

SizeClass* size_classes()
{
    static SizeClass* c = new SizeClass[kClasses];  // never destroyed: usable during exit
    return c;
}

size_t sys_page()
{
    static const size_t ps = size_t(sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096);
    return ps;
}

constexpr size_t kCachedBlockMax = size_t(256) << 10;
constexpr size_t kCacheBytes = size_t(32) << 20;

// Freed mapped blocks by size in pages (1 .. kCachedBlockMax / page).
struct BlockCache {
    std::mutex mu;
    std::vector<std::vector<char*>> by_pages;
    size_t bytes = 0;
};

BlockCache& block_cache()
{
    static BlockCache* c = new BlockCache;  // never destroyed: usable during exit
    return *c;
}

}  // namespace

unsigned slab_class(size_t size, size_t align)
{
    if (size == 0 || align > kSlabMax || size > kSlabMax) return 0;
    size_t unit = align > kUnit ? align : kUnit;
    size_t chunk = (size + unit - 1) / unit * unit;
    return chunk <= kSlabMax ? unsigned(chunk / kUnit) : 0;
}

size_t slab_chunk_bytes(unsigned cls) { return size_t(cls) * kUnit; }

char* slab_alloc(unsigned cls)
{
    SizeClass& c = size_classes()[cls];
    const size_t chunk = slab_chunk_bytes(cls);
    std::lock_guard<std::mutex> lock(c.mu);
    if (!c.free_chunks.empty()) {
        char* p = c.free_chunks.back();
        c.free_chunks.pop_back();
        return p;
    }
    if (c.left == 0) {
        size_t per = kSlabBytes / chunk;
        try {
            c.free_chunks.reserve(c.free_chunks.capacity() + per);
        } catch (...) {
            return nullptr;
        }
        void* m = mmap(nullptr, kSlabBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return nullptr;
        try {
            registry_add_slab(static_cast<char*>(m), kSlabBytes, chunk);
        } catch (...) {
            munmap(m, kSlabBytes);
            return nullptr;
        }
        c.next = static_cast<char*>(m);
        c.left = per;
    }
    char* p = c.next;
    c.next += chunk;
    --c.left;
    return p;
}

void slab_free(char* p, unsigned cls) noexcept
{
    SizeClass& c = size_classes()[cls];
    std::lock_guard<std::mutex> lock(c.mu);
    c.free_chunks.push_back(p);  // capacity reserved when the chunk was carved
}

char* pages_alloc(size_t bytes, bool* mapped)
{
    if (bytes <= kCachedBlockMax) {
        BlockCache& c = block_cache();
        std::lock_guard<std::mutex> lock(c.mu);
        size_t n = bytes / sys_page();
        if (n < c.by_pages.size() && !c.by_pages[n].empty()) {
            char* p = c.by_pages[n].back();
            c.by_pages[n].pop_back();
            c.bytes -= bytes;
            *mapped = true;
            return p;
        }
    }
    void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m != MAP_FAILED) {
        *mapped = true;
        return static_cast<char*>(m);
    }
    void* block = nullptr;
    if (posix_memalign(&block, sys_page(), bytes) != 0) return nullptr;
    *mapped = false;
    return static_cast<char*>(block);
}

void pages_free(char* p, size_t bytes, bool mapped) noexcept
{
    if (mapped && bytes <= kCachedBlockMax && bytes % sys_page() == 0) {
        BlockCache& c = block_cache();
        std::lock_guard<std::mutex> lock(c.mu);
        size_t n = bytes / sys_page();
        if (c.bytes + bytes <= kCacheBytes) {
            try {
                if (c.by_pages.size() <= n) c.by_pages.resize(kCachedBlockMax / sys_page() + 1);
                c.by_pages[n].push_back(p);
                c.bytes += bytes;
                return;
            } catch (...) {
                // no room to remember it: unmapped below
            }
        }
    }
    if (!mapped) {
        free(p);
    } else if (munmap(p, bytes) != 0) {
        // Unmapping part of a larger mapping can fail at the map count limit: give
        // the memory back without splitting the mapping; the addresses stay reserved.
        madvise(p, bytes, MADV_DONTNEED);
    }
}

char* reserve_addresses(size_t bytes)
{
    void* m = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return m == MAP_FAILED ? nullptr : static_cast<char*>(m);
}

void release_addresses(char* p, size_t bytes) noexcept { munmap(p, bytes); }

size_t page_size()
{
    static const size_t ps = size_t(sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096);
    return ps;
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

}  // namespace

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

}  // namespace stdcl
