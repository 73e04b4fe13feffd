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
#include "memory/memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

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

}  // namespace stdcl
