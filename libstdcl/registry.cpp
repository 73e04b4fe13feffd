// SPDX-License-Identifier: MIT
// registry.cpp: the allocation registry: any address inside a clmalloc allocation to
// its record in constant time, without a lock for readers and without reading user
// memory.
//
// A page map keyed by address.  clmalloc memory is page-aligned, so every 4 KiB page
// belongs to at most one allocation: a 3-level radix tree over 4 KiB page numbers
// (12 + 12 + 12 bits of a 48-bit address) holds one 64-bit slot per page: 0 for no
// allocation, (1 << 63 | size in bytes) for an allocation's first page, and for each
// other page of it the distance in pages back to its first page.  A lookup is three
// dependent loads down the tree and one or two slot loads: the same cost at 10 and
// at 1,000,000 live allocations (BENCHMARKS.md, row (4) of bench_core).  Interior nodes
// are made on first use under the node mutex and never freed, and slots are plain
// integers, so a lookup racing a clfree of the same memory may miss but never
// touches freed memory; an insert writes the distance slots before the first page's
// slot (release), a removal clears the first page's slot first.  Writers take no
// lock for the slots: live allocations own disjoint pages, and a page is written by
// a new allocation only after the clfree that cleared it returned its memory.
//
// The records themselves (the shared_ptr that operations hold) are in a table striped
// by first page, each stripe a small mutex and hash map, so threads that look up
// different allocations do not serialise on one lock.  A bulk insert writes one slot
// per page: 1 GiB is 262,144 stores (see BENCHMARKS.md for what that costs).
#include "internal/core.hpp"
#include "internal/diag.hpp"

#include <algorithm>
#include <new>

#include <stdlib.h>
#include <sys/mman.h>

namespace stdcl {

namespace {

constexpr unsigned kPageShift = 12;  // the map's page: 4 KiB (system pages are multiples)
constexpr unsigned kLevelBits = 12;
constexpr size_t kFanout = size_t(1) << kLevelBits;
constexpr unsigned kAddrBits = kPageShift + 3 * kLevelBits;  // 48
constexpr uint64_t kBaseBit = uint64_t(1) << 63;
constexpr size_t kStripes = 64;

struct Leaf {
    std::atomic<uint64_t> slot[kFanout];
    Leaf()
    {
        for (auto& s : slot) s.store(0, std::memory_order_relaxed);
    }
};
struct Mid {
    std::atomic<Leaf*> leaf[kFanout];
    Mid()
    {
        for (auto& l : leaf) l.store(nullptr, std::memory_order_relaxed);
    }
};

struct Stripe {
    std::mutex mu;
    std::unordered_map<uintptr_t, std::shared_ptr<Allocation>> by_base;
};

struct Registry {
    std::mutex node_mu;  // node creation
    std::atomic<Mid*> root[kFanout];
    Stripe stripes[kStripes];

    Registry()
    {
        for (auto& m : root) m.store(nullptr, std::memory_order_relaxed);
    }

    static Stripe& stripe_of(Registry& r, uintptr_t base)
    {
        return r.stripes[((base >> kPageShift) * 0x9E3779B97F4A7C15ull) >> 58];
    }

    // The slot of page pg, or nullptr when its nodes do not exist.
    const std::atomic<uint64_t>* slot(uint64_t pg) const
    {
        Mid* m = root[pg >> (2 * kLevelBits)].load(std::memory_order_acquire);
        if (!m) return nullptr;
        Leaf* l = m->leaf[(pg >> kLevelBits) & (kFanout - 1)].load(std::memory_order_acquire);
        if (!l) return nullptr;
        return &l->slot[pg & (kFanout - 1)];
    }

    // Leaves after the first kPlainLeaves come from 2 MiB chunks advised for huge
    // pages (64 leaves a chunk).  At 1,000,000 live 4 KiB allocations the leaves
    // span 8 MB, and with 4 KiB pages nearly every random lookup missed the TLB:
    // 39-41 ns on the H200 host, against 7-8 ns at 100,000.  The first leaves (128 MiB
    // of clmalloc memory) are plain: a small program keeps its small footprint.
    static constexpr unsigned kPlainLeaves = 8;
    static constexpr size_t kChunk = size_t(2) << 20;
    unsigned leaves = 0;  // leaves, chunk, chunk_left: under node_mu
    char* chunk = nullptr;  // the current chunk's next free byte
    size_t chunk_left = 0;

    Leaf* new_leaf()
    {
        if (leaves < kPlainLeaves) {
            Leaf* l = new Leaf;
            ++leaves;
            return l;
        }
        if (chunk_left < sizeof(Leaf)) {
            void* c = nullptr;
            if (posix_memalign(&c, kChunk, kChunk) != 0 || !c) throw std::bad_alloc();
            madvise(c, kChunk, MADV_HUGEPAGE);  // a hint: fewer TLB misses on lookups
            chunk = static_cast<char*>(c);  // never freed, like every node
            chunk_left = kChunk;
        }
        Leaf* l = new (chunk) Leaf;
        chunk += sizeof(Leaf);
        chunk_left -= sizeof(Leaf);
        ++leaves;
        return l;
    }

    // The slot of page pg, making its nodes (under node_mu); throws on no memory.
    std::atomic<uint64_t>* make_slot(uint64_t pg)
    {
        auto& mref = root[pg >> (2 * kLevelBits)];
        Mid* m = mref.load(std::memory_order_acquire);
        if (!m) {
            std::lock_guard<std::mutex> lock(node_mu);
            m = mref.load(std::memory_order_relaxed);
            if (!m) {
                m = new Mid;
                mref.store(m, std::memory_order_release);
            }
        }
        auto& lref = m->leaf[(pg >> kLevelBits) & (kFanout - 1)];
        Leaf* l = lref.load(std::memory_order_acquire);
        if (!l) {
            std::lock_guard<std::mutex> lock(node_mu);
            l = lref.load(std::memory_order_relaxed);
            if (!l) {
                l = new_leaf();
                lref.store(l, std::memory_order_release);
            }
        }
        return &l->slot[pg & (kFanout - 1)];
    }

    // Base and size of the allocation holding x; false if none (or it is being removed).
    bool find(uintptr_t x, uintptr_t* base, size_t* size) const
    {
        if (x >> kAddrBits) return false;
        uint64_t pg = uint64_t(x) >> kPageShift;
        const std::atomic<uint64_t>* s = slot(pg);
        if (!s) return false;
        uint64_t v = s->load(std::memory_order_acquire);
        if (v == 0) return false;
        if (!(v & kBaseBit)) {
            if (v > pg) return false;
            pg -= v;
            s = slot(pg);
            if (!s) return false;
            v = s->load(std::memory_order_acquire);
            if (!(v & kBaseBit)) return false;
        }
        uintptr_t b = uintptr_t(pg << kPageShift);
        size_t n = size_t(v & ~kBaseBit);
        if (x - b >= n) return false;
        *base = b;
        *size = n;
        return true;
    }

    // Clears the pages of [base, base + size): first page first.
    void clear(uintptr_t base, size_t size)
    {
        uint64_t first = uint64_t(base) >> kPageShift;
        uint64_t pages = (uint64_t(size) + (uint64_t(1) << kPageShift) - 1) >> kPageShift;
        auto* fs = const_cast<std::atomic<uint64_t>*>(slot(first));
        if (fs) fs->store(0, std::memory_order_release);
        for (uint64_t p = 1; p < pages;) {  // one node lookup per leaf
            uint64_t stop = std::min(first + pages, ((first + p) | (kFanout - 1)) + 1);
            auto* s = const_cast<std::atomic<uint64_t>*>(slot(first + p));
            if (s)
                for (uint64_t q = first + p; q < stop; ++q, ++s) s->store(0, std::memory_order_relaxed);
            p = stop - first;
        }
    }
};

Registry& registry()
{
    static Registry* r = new Registry;  // never destroyed: usable during exit
    return *r;
}

}  // namespace

std::shared_ptr<Allocation> registry_find(const void* p, size_t* offset)
{
    auto& r = registry();
    uintptr_t x = uintptr_t(p), base = 0;
    size_t size = 0;
    if (!r.find(x, &base, &size)) return nullptr;
    Stripe& st = Registry::stripe_of(r, base);
    std::lock_guard<std::mutex> lock(st.mu);
    auto it = st.by_base.find(base);
    if (it == st.by_base.end()) return nullptr;  // removed meanwhile
    if (offset) *offset = size_t(x - base);
    return it->second;
}

bool registry_lookup(const void* p, uintptr_t* base, size_t* size) { return registry().find(uintptr_t(p), base, size); }

void registry_insert(std::shared_ptr<Allocation> a)
{
    // All or nothing: the record and every node the pages need are made before any
    // slot changes, so a failed insert (out of memory) leaves the map as it was, and
    // the record (the caller's, moved in) goes with its memory.
    auto& r = registry();
    const uintptr_t base = uintptr_t(a->host);
    const size_t size = a->size;
    if ((base & ((uintptr_t(1) << kPageShift) - 1)) || size == 0 || (uint64_t(base) + size) >> kAddrBits ||
        uint64_t(size) >= kBaseBit)
        fail(STDCL_ENOMEM, "the registry cannot hold %zu bytes at %p (not page-aligned or beyond 48-bit addresses)",
             size, (void*)base);
    uint64_t first = uint64_t(base) >> kPageShift;
    uint64_t pages = (uint64_t(size) + (uint64_t(1) << kPageShift) - 1) >> kPageShift;
    Stripe& st = Registry::stripe_of(r, base);
    {
        std::lock_guard<std::mutex> lock(st.mu);
        st.by_base[base] = std::move(a);
    }
    std::atomic<uint64_t>* base_slot = nullptr;
    try {
        base_slot = r.make_slot(first);
        // One node lookup per leaf, not per page.
        for (uint64_t p = 1; p < pages;) {
            std::atomic<uint64_t>* s = r.make_slot(first + p);
            uint64_t leaf_end = ((first + p) | (kFanout - 1)) + 1;
            uint64_t stop = std::min(first + pages, leaf_end);
            for (uint64_t q = first + p; q < stop; ++q, ++s) s->store(q - first, std::memory_order_relaxed);
            p = stop - first;
        }
    } catch (...) {
        // Nodes made so far stay (empty nodes are valid); the pages written so far
        // hold distances to a first page whose slot is 0: lookups miss.  Clear them.
        if (base_slot) r.clear(base, size_t(std::min<uint64_t>(size, pages << kPageShift)));
        std::shared_ptr<Allocation> gone;  // destroyed (its memory freed) after the lock
        {
            std::lock_guard<std::mutex> lock(st.mu);
            auto it = st.by_base.find(base);
            if (it != st.by_base.end()) {
                gone = std::move(it->second);
                st.by_base.erase(it);
            }
        }
        throw;
    }
    base_slot->store(kBaseBit | uint64_t(size), std::memory_order_release);
}

RegistryTake registry_take(const void* p, std::shared_ptr<Allocation>* out, size_t* offset)
{
    auto& r = registry();
    uintptr_t x = uintptr_t(p), base = 0;
    size_t size = 0;
    if (!r.find(x, &base, &size)) return RegistryTake::absent;
    Stripe& st = Registry::stripe_of(r, base);
    std::lock_guard<std::mutex> lock(st.mu);
    auto it = st.by_base.find(base);
    if (it == st.by_base.end()) return RegistryTake::absent;
    // The record decides, not the slots read before the lock: the memory may have
    // been freed and handed to a new allocation of another size meanwhile.
    size = it->second->size;
    if (x - base >= size) return RegistryTake::absent;
    if (x != base) {
        *out = it->second;
        *offset = size_t(x - base);
        return RegistryTake::interior;
    }
    r.clear(base, size);
    *out = std::move(it->second);
    st.by_base.erase(it);
    return RegistryTake::removed;
}

std::vector<std::shared_ptr<Allocation>> registry_of_context(CLCONTEXT* cp)
{
    auto& r = registry();
    std::vector<std::shared_ptr<Allocation>> out;
    for (auto& st : r.stripes) {
        std::lock_guard<std::mutex> lock(st.mu);
        for (const auto& kv : st.by_base)
            if (kv.second->cp == cp) out.push_back(kv.second);
    }
    return out;
}

}  // namespace stdcl
