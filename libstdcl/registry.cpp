// registry.cpp: the allocation registry: any address inside a clmalloc allocation to
// its record in O(log n), without reading user memory.
//
// A two-level sorted index (a flat B+-tree): a small array of block minimums, and
// blocks of at most kBlock entries sorted by base address, stored as parallel arrays.  A lookup is two binary
// searches over contiguous memory (no pointer chasing across the heap, which is what
// made a std::map cost a cache and TLB miss per level); an insert or erase moves at
// most one block's entries, splitting or dropping a block when needed.
#include "internal/core.hpp"

#include <algorithm>

namespace stdcl {

namespace {

constexpr size_t kBlock = 256;

// One block, as parallel arrays: a lookup's binary search reads only `base`
// (2 KiB for a full block), then one `end` and, if wanted, one `alloc`.
struct Block {
    std::vector<uintptr_t> base;  // sorted
    std::vector<uintptr_t> end;
    std::vector<std::shared_ptr<Allocation>> alloc;

    size_t size() const { return base.size(); }
    // Index of the last entry whose base is <= x (the caller knows base[0] <= x).
    size_t floor(uintptr_t x) const
    {
        return size_t(std::upper_bound(base.begin(), base.end(), x) - base.begin()) - 1;
    }
    void insert_at(size_t i, uintptr_t b, uintptr_t e, std::shared_ptr<Allocation> a)
    {
        base.insert(base.begin() + long(i), b);
        end.insert(end.begin() + long(i), e);
        alloc.insert(alloc.begin() + long(i), std::move(a));
    }
    void erase_at(size_t i)
    {
        base.erase(base.begin() + long(i));
        end.erase(end.begin() + long(i));
        alloc.erase(alloc.begin() + long(i));
    }
    void reserve(size_t n)
    {
        base.reserve(n);
        end.reserve(n);
        alloc.reserve(n);
    }
    // Moves entries [from, size) into a new block; leaves this one as it was if
    // that throws.
    Block split(size_t from)
    {
        Block upper;
        upper.base.assign(base.begin() + long(from), base.end());
        upper.end.assign(end.begin() + long(from), end.end());
        upper.alloc.assign(std::make_move_iterator(alloc.begin() + long(from)), std::make_move_iterator(alloc.end()));
        base.resize(from);
        end.resize(from);
        alloc.resize(from);
        return upper;
    }
};

struct Registry {
    std::shared_mutex mu;
    std::vector<uintptr_t> firsts;  // firsts[i] == blocks[i].base[0]
    std::vector<Block> blocks;      // never empty

    // Index of the block that holds x if any does; -1 when x is below every base.
    long block_of(uintptr_t x) const
    {
        auto it = std::upper_bound(firsts.begin(), firsts.end(), x);
        return long(it - firsts.begin()) - 1;
    }

    // Block and entry containing x; false if none.
    bool find(uintptr_t x, size_t* bi, size_t* ei) const
    {
        long b = block_of(x);
        if (b < 0) return false;
        const Block& blk = blocks[size_t(b)];
        size_t i = blk.floor(x);
        if (x >= blk.end[i]) return false;
        *bi = size_t(b);
        *ei = i;
        return true;
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
    size_t bi, ei;
    std::shared_lock<std::shared_mutex> lock(r.mu);
    if (!r.find(x, &bi, &ei)) return nullptr;
    const Block& blk = r.blocks[bi];
    if (offset) *offset = size_t(x - blk.base[ei]);
    return blk.alloc[ei];
}

bool registry_lookup(const void* p, uintptr_t* base, size_t* size)
{
    auto& r = registry();
    uintptr_t x = uintptr_t(p);
    size_t bi, ei;
    std::shared_lock<std::shared_mutex> lock(r.mu);
    if (!r.find(x, &bi, &ei)) return false;
    const Block& blk = r.blocks[bi];
    *base = blk.base[ei];
    *size = size_t(blk.end[ei] - blk.base[ei]);
    return true;
}

void registry_insert(const std::shared_ptr<Allocation>& a)
{
    // All or nothing: every allocation that can fail happens before the index
    // changes, so a failed insert (out of memory) leaves it as it was.
    auto& r = registry();
    uintptr_t base = uintptr_t(a->host);
    std::unique_lock<std::shared_mutex> lock(r.mu);
    r.firsts.reserve(r.firsts.size() + 1);
    r.blocks.reserve(r.blocks.size() + 1);
    if (r.blocks.empty()) {
        Block first;
        first.reserve(1);
        first.insert_at(0, base, base + a->size, a);
        r.blocks.push_back(std::move(first));  // capacity reserved: no throw
        r.firsts.push_back(base);
        return;
    }
    size_t bi = size_t(std::max(r.block_of(base), 0L));
    Block& blk = r.blocks[bi];
    blk.reserve(blk.size() + 1);
    size_t at = size_t(std::upper_bound(blk.base.begin(), blk.base.end(), base) - blk.base.begin());
    blk.insert_at(at, base, base + a->size, a);  // capacity reserved: no throw
    r.firsts[bi] = blk.base[0];
    if (blk.size() > kBlock) {  // split in two halves
        Block upper;
        try {
            upper = blk.split(kBlock / 2);
        } catch (...) {
            return;  // out of memory: the block stays whole (larger than kBlock), which is still correct
        }
        uintptr_t first = upper.base[0];
        r.blocks.insert(r.blocks.begin() + long(bi) + 1, std::move(upper));  // capacity reserved: no throw
        r.firsts.insert(r.firsts.begin() + long(bi) + 1, first);
    }
}

RegistryTake registry_take(const void* p, std::shared_ptr<Allocation>* out, size_t* offset)
{
    auto& r = registry();
    uintptr_t x = uintptr_t(p);
    size_t bi, ei;
    std::unique_lock<std::shared_mutex> lock(r.mu);
    if (!r.find(x, &bi, &ei)) return RegistryTake::absent;
    Block& blk = r.blocks[bi];
    *out = blk.alloc[ei];
    if (x != blk.base[ei]) {
        *offset = size_t(x - blk.base[ei]);
        return RegistryTake::interior;
    }
    blk.erase_at(ei);
    if (blk.size() == 0) {
        r.blocks.erase(r.blocks.begin() + long(bi));
        r.firsts.erase(r.firsts.begin() + long(bi));
    } else {
        r.firsts[bi] = blk.base[0];
    }
    return RegistryTake::removed;
}

std::vector<std::shared_ptr<Allocation>> registry_of_context(CLCONTEXT* cp)
{
    auto& r = registry();
    std::vector<std::shared_ptr<Allocation>> out;
    std::shared_lock<std::shared_mutex> lock(r.mu);
    for (const auto& blk : r.blocks)
        for (const auto& a : blk.alloc)
            if (a->cp == cp) out.push_back(a);
    return out;
}

}  // namespace stdcl
