// registry.cpp: the allocation registry: any address inside a clmalloc allocation to
// its record in O(log n), without reading user memory.
//
// A two-level sorted index (a flat B+-tree): a small array of block minimums, and
// blocks of at most kBlock entries sorted by base address.  A lookup is two binary
// searches over contiguous memory (no pointer chasing across the heap, which is what
// made a std::map cost a cache and TLB miss per level); an insert or erase moves at
// most one block's entries, splitting or dropping a block when needed.
#include "internal/core.hpp"

#include <algorithm>

namespace stdcl {

namespace {

constexpr size_t kBlock = 256;

struct Entry {
    uintptr_t base;
    uintptr_t end;
    std::shared_ptr<Allocation> a;
};

struct Registry {
    std::shared_mutex mu;
    std::vector<uintptr_t> firsts;             // firsts[i] == blocks[i].front().base
    std::vector<std::vector<Entry>> blocks;    // never empty; sorted by base
    size_t count = 0;

    // Index of the block that holds x if any does; -1 when x is below every base.
    long block_of(uintptr_t x) const
    {
        auto it = std::upper_bound(firsts.begin(), firsts.end(), x);
        return long(it - firsts.begin()) - 1;
    }

    // The entry containing x, or nullptr.
    const Entry* find(uintptr_t x) const
    {
        long b = block_of(x);
        if (b < 0) return nullptr;
        const auto& blk = blocks[size_t(b)];
        auto it = std::upper_bound(blk.begin(), blk.end(), x, [](uintptr_t v, const Entry& e) { return v < e.base; });
        --it;  // blk.front().base <= x, so it is not begin()
        return x < it->end ? &*it : nullptr;
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
    uintptr_t x = uintptr_t(p);
    std::shared_lock<std::shared_mutex> lock(r.mu);
    const Entry* e = r.find(x);
    if (!e) return nullptr;
    if (offset) *offset = size_t(x - e->base);
    return e->a;
}

bool registry_lookup(const void* p, uintptr_t* base, size_t* size)
{
    auto& r = registry();
    uintptr_t x = uintptr_t(p);
    std::shared_lock<std::shared_mutex> lock(r.mu);
    const Entry* e = r.find(x);
    if (!e) return false;
    *base = e->base;
    *size = size_t(e->end - e->base);
    return true;
}

void registry_insert(const std::shared_ptr<Allocation>& a)
{
    auto& r = registry();
    uintptr_t base = uintptr_t(a->host);
    Entry e{base, base + a->size, a};
    std::unique_lock<std::shared_mutex> lock(r.mu);
    ++r.count;
    if (r.blocks.empty()) {
        r.blocks.emplace_back();
        r.blocks[0].reserve(kBlock + 1);
        r.blocks[0].push_back(std::move(e));
        r.firsts.push_back(base);
        return;
    }
    long bi = std::max(r.block_of(base), 0L);
    auto& blk = r.blocks[size_t(bi)];
    auto it = std::upper_bound(blk.begin(), blk.end(), base, [](uintptr_t v, const Entry& x) { return v < x.base; });
    blk.insert(it, std::move(e));
    r.firsts[size_t(bi)] = blk.front().base;
    if (blk.size() > kBlock) {  // split in two halves
        std::vector<Entry> upper;
        upper.reserve(kBlock + 1);
        std::move(blk.begin() + long(kBlock / 2), blk.end(), std::back_inserter(upper));
        blk.erase(blk.begin() + long(kBlock / 2), blk.end());
        uintptr_t first = upper.front().base;
        r.blocks.insert(r.blocks.begin() + bi + 1, std::move(upper));
        r.firsts.insert(r.firsts.begin() + bi + 1, first);
    }
}

RegistryTake registry_take(const void* p, std::shared_ptr<Allocation>* out, size_t* offset)
{
    auto& r = registry();
    uintptr_t x = uintptr_t(p);
    std::unique_lock<std::shared_mutex> lock(r.mu);
    long bi = r.block_of(x);
    if (bi < 0) return RegistryTake::absent;
    auto& blk = r.blocks[size_t(bi)];
    auto it = std::upper_bound(blk.begin(), blk.end(), x, [](uintptr_t v, const Entry& e) { return v < e.base; });
    --it;
    if (x >= it->end) return RegistryTake::absent;
    *out = it->a;
    if (x != it->base) {
        *offset = size_t(x - it->base);
        return RegistryTake::interior;
    }
    blk.erase(it);
    --r.count;
    if (blk.empty()) {
        r.blocks.erase(r.blocks.begin() + bi);
        r.firsts.erase(r.firsts.begin() + bi);
    } else {
        r.firsts[size_t(bi)] = blk.front().base;
    }
    return RegistryTake::removed;
}

size_t registry_count()
{
    auto& r = registry();
    std::shared_lock<std::shared_mutex> lock(r.mu);
    return r.count;
}

std::vector<std::shared_ptr<Allocation>> registry_of_context(CLCONTEXT* cp)
{
    auto& r = registry();
    std::vector<std::shared_ptr<Allocation>> out;
    std::shared_lock<std::shared_mutex> lock(r.mu);
    for (const auto& blk : r.blocks)
        for (const auto& e : blk)
            if (e.a->cp == cp) out.push_back(e.a);
    return out;
}

}  // namespace stdcl
