// SPDX-License-Identifier: MIT
// registry.cpp: the allocation registry: any address inside a clmalloc allocation to
// its record in constant time, without a lock for readers and without reading user
// memory.
//
// Longer than 700 lines on purpose: it is one lock-free structure.  The slot
// encoding below, the readers (find) and the writers of each page kind (owned,
// slab, shared) keep one set of orderings between them (which slot is written
// first, which store releases); they are read and changed together, so they stay
// in one file.
//
// A page map keyed by address: a 3-level radix tree over 4 KiB page numbers (12 + 12
// + 12 bits of a 48-bit address) holds one 64-bit slot per page:
//   0                      no allocation;
//   kBaseBit | size        the first page of an allocation that owns its pages;
//   kSlabTag | chunk, phase, sizes
//                          a page of a slab: its chunk size and where the page
//                          starts in a chunk give the chunk x is in, and the
//                          page's 64-byte size table (a 16-bit size per 128-byte
//                          unit, 0 for a free chunk) its size: one line read;
//   kShareBit | record     a page that allocations share (adopted memory): the
//                          record lists the ones that start in it, by offset;
//   n (anything else)      a page an allocation covers whole, n pages after the page
//                          where it starts.
// A lookup is three dependent loads down the tree and one slot load, plus the page
// record on a shared page.  An address before every start in a shared page belongs to
// the allocation that covers the end of the page before, if any: that page's slot
// says which.  Interior nodes are made on first use under the node mutex and never
// freed, and slots are plain integers, so a lookup racing a clfree of the same memory
// may miss but never touches freed memory; an insert writes the other pages before
// the first page's slot (release), a removal clears the first page first.  Writers of
// pages an allocation owns take no lock for the slots: live allocations own disjoint
// pages, and a page is written by a new allocation only after the clfree that cleared
// it returned its memory.  Writers of shared pages hold share_mu.
//
// A page record is read under a sequence lock: a writer makes its sequence odd,
// changes the entries and makes it even again; a reader retries when the sequence
// moved.  Records are never freed, only reused (their sequence keeps counting), so a
// reader holding a stale one reads valid memory and sees the sequence move.
//
// The records themselves (the shared_ptr that operations hold) are in a table striped
// by first page, each stripe a small mutex and hash map, so threads that look up
// different allocations do not serialise on one lock.  A bulk insert writes one slot
// per page: 1 GiB is 262,144 stores (see BENCHMARKS.md for what that costs).
#include "events/events.hpp"
#include "memory/memory.hpp"
#include "helpers/diag.hpp"

#include <algorithm>
#include <new>
#include <stdexcept>

#include <stdlib.h>
#include <sys/mman.h>

namespace stdcl {

namespace {

constexpr unsigned kPageShift = 12;  // the map's page: 4 KiB (system pages are multiples)
constexpr unsigned kLevelBits = 12;
constexpr size_t kFanout = size_t(1) << kLevelBits;
constexpr unsigned kAddrBits = kPageShift + 3 * kLevelBits;  // 48
constexpr uint64_t kBaseBit = uint64_t(2) << 62;  // tags: the top two bits
constexpr uint64_t kShareBit = uint64_t(1) << 62;
constexpr uint64_t kSlabTag = uint64_t(3) << 62;
constexpr uint64_t kTagMask = uint64_t(3) << 62;
constexpr uint64_t kPtrMask = (uint64_t(1) << 48) - 1;
constexpr unsigned kUnitShift = 7;  // slab chunks are multiples of 128 bytes
constexpr unsigned kUnits = 1u << (kPageShift - kUnitShift);  // 32 per page
inline bool is_base(uint64_t v) { return (v & kTagMask) == kBaseBit; }
inline bool is_shared(uint64_t v) { return (v & kTagMask) == kShareBit; }
inline bool is_slab(uint64_t v) { return (v & kTagMask) == kSlabTag; }
inline bool is_distance(uint64_t v) { return v && !(v & kTagMask); }

// A slab page's sizes, per 128-byte unit where a chunk starts.
struct SlabSizes {
    std::atomic<uint16_t> size[kUnits];
};
static_assert(sizeof(SlabSizes) == 64, "one cache line");
SlabSizes* sizes_of(uint64_t v) { return reinterpret_cast<SlabSizes*>(uintptr_t(v & kPtrMask)); }
unsigned chunk_units(uint64_t v) { return unsigned(v >> 53) & 31; }
unsigned phase_units(uint64_t v) { return unsigned(v >> 48) & 31; }
constexpr uint64_t kPageMask = (uint64_t(1) << kPageShift) - 1;
constexpr unsigned kEntryShift = 48;  // a record entry: offset in the page << 48 | size
constexpr uint64_t kSizeMask = (uint64_t(1) << kEntryShift) - 1;
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

// The allocations that start in one shared page, sorted by offset, under a sequence
// lock.  cap is fixed for the record's life; the entries follow the header.
struct PageRec {
    std::atomic<uint64_t> seq{0};
    std::atomic<uint32_t> n{0};
    uint32_t cap = 0;
    PageRec* next_free = nullptr;  // in its pool (share_mu)
    std::atomic<uint64_t>* entries() { return reinterpret_cast<std::atomic<uint64_t>*>(this + 1); }
    const std::atomic<uint64_t>* entries() const { return reinterpret_cast<const std::atomic<uint64_t>*>(this + 1); }
};
static_assert(sizeof(PageRec) % sizeof(uint64_t) == 0, "entries follow the header");

PageRec* rec_of(uint64_t v) { return reinterpret_cast<PageRec*>(uintptr_t(v & kPtrMask)); }

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

    // The last allocation starting in page pg at an offset <= off, through pg's slot
    // value v: 1 and *b, *n when there is one, 0 when none, -1 when the page changed
    // under the reader (retry).
    int start_in(uint64_t pg, uint64_t v, uint64_t off, uintptr_t* b, size_t* n) const
    {
        if (is_base(v)) {
            *b = uintptr_t(pg << kPageShift);
            *n = size_t(v & ~kBaseBit);
            return 1;
        }
        if (!is_shared(v)) return 0;  // slab chunks end inside their slab
        const PageRec* r = rec_of(v);
        uint64_t s1 = r->seq.load(std::memory_order_acquire);
        if (s1 & 1) return -1;
        uint32_t cnt = r->n.load(std::memory_order_relaxed);
        if (cnt > r->cap) return -1;
        const std::atomic<uint64_t>* e = r->entries();
        uint32_t lo = 0, hi = cnt;  // the first entry past off
        while (lo < hi) {
            uint32_t mid = (lo + hi) / 2;
            if ((e[mid].load(std::memory_order_relaxed) >> kEntryShift) <= off)
                lo = mid + 1;
            else
                hi = mid;
        }
        uint64_t ent = lo ? e[lo - 1].load(std::memory_order_relaxed) : 0;
        std::atomic_thread_fence(std::memory_order_acquire);
        if (r->seq.load(std::memory_order_relaxed) != s1) return -1;
        if (!lo) return 0;
        *b = uintptr_t((pg << kPageShift) + (ent >> kEntryShift));
        *n = size_t(ent & kSizeMask);
        return 1;
    }

    // The allocation whose pages run on past the end of page pg, if any (see start_in).
    int covering_end_of(uint64_t pg, uintptr_t* b, size_t* n) const
    {
        const std::atomic<uint64_t>* s = slot(pg);
        if (!s) return 0;
        uint64_t v = s->load(std::memory_order_acquire);
        if (v == 0) return 0;
        if (is_distance(v)) {
            if (v > pg) return 0;
            pg -= v;
            s = slot(pg);
            if (!s) return 0;
            v = s->load(std::memory_order_acquire);
        }
        return start_in(pg, v, kPageMask, b, n);
    }

    // The chunk of a slab page holding x: where the chunk starts follows from the
    // chunk size and the page's phase (its start's offset into a chunk); a chunk
    // that starts in the page before has its size there.
    int in_slab(uint64_t pg, uint64_t v, uintptr_t x, uintptr_t* b, size_t* n) const
    {
        uint64_t chunk = uint64_t(chunk_units(v)) << kUnitShift;
        uint64_t off = x & kPageMask;
        uint64_t into = ((uint64_t(phase_units(v)) << kUnitShift) + off) % chunk;
        uintptr_t start = x - uintptr_t(into);
        if (into > off) {  // the chunk starts in the page before, of the same slab
            const std::atomic<uint64_t>* s = slot(pg - 1);
            v = s ? s->load(std::memory_order_acquire) : 0;
            if (!is_slab(v)) return 0;
        }
        uint16_t size = sizes_of(v)->size[(start & kPageMask) >> kUnitShift].load(std::memory_order_acquire);
        if (size == 0) return 0;
        *b = start;
        *n = size;
        return 1;
    }

    // One try of find: 1 found, 0 not, -1 retry.
    int find_once(uintptr_t x, uintptr_t* base, size_t* size) const
    {
        uint64_t pg = uint64_t(x) >> kPageShift;
        const std::atomic<uint64_t>* s = slot(pg);
        if (!s) return 0;
        uint64_t v = s->load(std::memory_order_acquire);
        if (v == 0) return 0;
        uintptr_t b = 0;
        size_t n = 0;
        int r;
        if (is_slab(v)) {
            r = in_slab(pg, v, x, &b, &n);
        } else if (is_shared(v)) {
            r = start_in(pg, v, x & kPageMask, &b, &n);
            if (r == 0 && pg > 0) r = covering_end_of(pg - 1, &b, &n);
        } else if (is_base(v)) {
            r = start_in(pg, v, 0, &b, &n);
        } else {
            r = v <= pg ? covering_end_of(pg - v, &b, &n) : 0;
        }
        if (r != 1) return r;
        if (x - b >= n) return 0;
        *base = b;
        *size = n;
        return 1;
    }

    // Base and size of the allocation holding x; false if none (or it is being removed).
    bool find(uintptr_t x, uintptr_t* base, size_t* size) const
    {
        if (x >> kAddrBits) return false;
        for (int tries = 0; tries < 1000; ++tries) {
            int r = find_once(x, base, size);
            if (r >= 0) return r == 1;
        }
        return false;  // a page rewritten a thousand times meanwhile: as if removed
    }

    // Clears the slots of pages [first, first + pages): one node lookup per leaf.
    void clear_pages(uint64_t first, uint64_t pages)
    {
        for (uint64_t p = 0; p < pages;) {
            uint64_t stop = std::min(first + pages, ((first + p) | (kFanout - 1)) + 1);
            auto* s = const_cast<std::atomic<uint64_t>*>(slot(first + p));
            if (s)
                for (uint64_t q = first + p; q < stop; ++q, ++s) s->store(0, std::memory_order_relaxed);
            p = stop - first;
        }
    }

    // Writes each page of [first, first + pages) as covered whole by an allocation that
    // starts in page `start`; throws (bad_alloc) only before a slot is written... per leaf.
    void write_distances(uint64_t start, uint64_t first, uint64_t pages)
    {
        for (uint64_t p = 0; p < pages;) {
            std::atomic<uint64_t>* s = make_slot(first + p);
            uint64_t stop = std::min(first + pages, ((first + p) | (kFanout - 1)) + 1);
            for (uint64_t q = first + p; q < stop; ++q, ++s) s->store(q - start, std::memory_order_relaxed);
            p = stop - first;
        }
    }

    // Clears the pages of an allocation that owns them, [base, base + size): first
    // page first.
    void clear(uintptr_t base, size_t size)
    {
        uint64_t first = uint64_t(base) >> kPageShift;
        uint64_t pages = (uint64_t(size) + kPageMask) >> kPageShift;
        auto* fs = const_cast<std::atomic<uint64_t>*>(slot(first));
        if (fs) fs->store(0, std::memory_order_release);
        if (pages > 1) clear_pages(first + 1, pages - 1);
    }

    // Slab pages (share_mu held): each page of [base, base + bytes) gets its size
    // table; throws (bad_alloc) before any slot is written.
    void add_slab(uintptr_t base, size_t bytes, size_t chunk)
    {
        uint64_t first = uint64_t(base) >> kPageShift, pages = uint64_t(bytes) >> kPageShift;
        std::vector<SlabSizes*> tables(pages);
        for (auto& t : tables) {
            t = new (rec_memory(sizeof(SlabSizes))) SlabSizes;
            for (auto& z : t->size) z.store(0, std::memory_order_relaxed);
        }
        for (uint64_t p = 0; p < pages; ++p) make_slot(first + p);
        for (uint64_t p = 0; p < pages; ++p) {
            uint64_t phase = ((p << kPageShift) % chunk) >> kUnitShift;
            uint64_t v = kSlabTag | uint64_t(chunk >> kUnitShift) << 53 | phase << 48 | uint64_t(uintptr_t(tables[p]));
            make_slot(first + p)->store(v, std::memory_order_release);
        }
    }

    // Sets the size of the slab chunk at base (0: free).
    void set_chunk(uintptr_t base, size_t size)
    {
        const std::atomic<uint64_t>* s = slot(uint64_t(base) >> kPageShift);
        uint64_t v = s ? s->load(std::memory_order_relaxed) : 0;
        if (!is_slab(v)) throw std::logic_error("a slab chunk outside its slab");
        sizes_of(v)->size[(base & kPageMask) >> kUnitShift].store(uint16_t(size), std::memory_order_release);
    }

    // Shared pages (share_mu held for everything below).
    std::mutex share_mu;
    PageRec* pool[13] = {};  // free records by log2(cap), cap 4 .. 4096

    static unsigned cap_class(uint32_t cap)
    {
        unsigned c = 0;
        while ((4u << c) < cap) ++c;
        return c;
    }

    // Records are carved from chunks, 64-byte aligned, never freed: the first chunk
    // 64 KiB, the next ones 2 MiB advised for huge pages, so that the records of a
    // million small allocations sit in a few pages (a lookup reads one record).
    char* rec_next = nullptr;
    size_t rec_left = 0;
    unsigned rec_chunks = 0;

    void* rec_memory(size_t bytes)
    {
        bytes = (bytes + 63) & ~size_t(63);
        if (rec_left < bytes) {
            size_t chunk = rec_chunks ? kChunk : size_t(64) << 10;
            if (chunk < bytes) chunk = bytes;
            void* c = nullptr;
            if (posix_memalign(&c, rec_chunks ? kChunk : 64, chunk) != 0 || !c) throw std::bad_alloc();
            if (rec_chunks) madvise(c, chunk, MADV_HUGEPAGE);
            ++rec_chunks;
            rec_next = static_cast<char*>(c);
            rec_left = chunk;
        }
        void* p = rec_next;
        rec_next += bytes;
        rec_left -= bytes;
        return p;
    }

    PageRec* new_rec(uint32_t cap)
    {
        unsigned c = cap_class(cap);
        cap = 4u << c;
        PageRec* r = pool[c];
        if (r) {
            pool[c] = r->next_free;
            r->seq.store(r->seq.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);  // even again
            r->n.store(0, std::memory_order_relaxed);
            return r;
        }
        r = new (rec_memory(sizeof(PageRec) + size_t(cap) * sizeof(uint64_t))) PageRec;
        r->cap = cap;
        for (uint32_t i = 0; i < cap; ++i) new (&r->entries()[i]) std::atomic<uint64_t>(0);
        return r;
    }

    // Retires r (no slot points to it any more): its sequence stays odd until reuse.
    void retire(PageRec* r)
    {
        r->seq.store(r->seq.load(std::memory_order_relaxed) + 1, std::memory_order_release);
        unsigned c = cap_class(r->cap);
        r->next_free = pool[c];
        pool[c] = r;
    }

    // Adds the entry (off, size) to page pg's record, making or growing it.
    void add_entry(uint64_t pg, uint64_t off, uint64_t size)
    {
        std::atomic<uint64_t>* s = make_slot(pg);
        uint64_t v = s->load(std::memory_order_relaxed);
        PageRec* r = is_shared(v) ? rec_of(v) : nullptr;
        uint64_t ent = off << kEntryShift | size;
        uint32_t cnt = r ? r->n.load(std::memory_order_relaxed) : 0;
        if (!r || cnt == r->cap) {
            PageRec* g = new_rec(r ? r->cap * 2 : 4);
            uint32_t j = 0;
            for (uint32_t i = 0; i < cnt; ++i) {
                uint64_t e = r->entries()[i].load(std::memory_order_relaxed);
                if (ent && (e >> kEntryShift) > off) g->entries()[j++].store(ent, std::memory_order_relaxed), ent = 0;
                g->entries()[j++].store(e, std::memory_order_relaxed);
            }
            if (ent) g->entries()[j++].store(ent, std::memory_order_relaxed);
            g->n.store(j, std::memory_order_relaxed);
            s->store(kShareBit | uint64_t(uintptr_t(g)), std::memory_order_release);
            if (r) retire(r);
            return;
        }
        uint64_t q = r->seq.load(std::memory_order_relaxed);
        r->seq.store(q + 1, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_release);
        std::atomic<uint64_t>* e = r->entries();
        uint32_t i = cnt;
        for (; i > 0 && (e[i - 1].load(std::memory_order_relaxed) >> kEntryShift) > off; --i)
            e[i].store(e[i - 1].load(std::memory_order_relaxed), std::memory_order_relaxed);
        e[i].store(ent, std::memory_order_relaxed);
        r->n.store(cnt + 1, std::memory_order_relaxed);
        r->seq.store(q + 2, std::memory_order_release);
    }

    // Makes page pg shared (an empty record) unless it is.
    void share_page(uint64_t pg)
    {
        std::atomic<uint64_t>* s = make_slot(pg);
        if (is_shared(s->load(std::memory_order_relaxed))) return;
        s->store(kShareBit | uint64_t(uintptr_t(new_rec(4))), std::memory_order_release);
    }

    // Removes the entry at off from page pg's record (if present); an emptied record
    // goes back to its pool and the slot to 0.
    void remove_entry(uint64_t pg, uint64_t off)
    {
        auto* s = const_cast<std::atomic<uint64_t>*>(slot(pg));
        if (!s) return;
        uint64_t v = s->load(std::memory_order_relaxed);
        if (!is_shared(v)) return;
        PageRec* r = rec_of(v);
        uint32_t cnt = r->n.load(std::memory_order_relaxed);
        std::atomic<uint64_t>* e = r->entries();
        uint32_t i = 0;
        while (i < cnt && (e[i].load(std::memory_order_relaxed) >> kEntryShift) != off) ++i;
        if (i == cnt) {
            if (cnt == 0) release_if_empty(pg);
            return;
        }
        uint64_t q = r->seq.load(std::memory_order_relaxed);
        r->seq.store(q + 1, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_release);
        for (; i + 1 < cnt; ++i) e[i].store(e[i + 1].load(std::memory_order_relaxed), std::memory_order_relaxed);
        r->n.store(cnt - 1, std::memory_order_relaxed);
        r->seq.store(q + 2, std::memory_order_release);
        if (cnt == 1) release_if_empty(pg);
    }

    // A shared page without entries, whose start no allocation from the page before
    // covers: slot 0, record back to its pool.  (A covered one stays shared: a
    // lookup of a page with slot 0 looks no further.)
    void release_if_empty(uint64_t pg)
    {
        auto* s = const_cast<std::atomic<uint64_t>*>(slot(pg));
        if (!s) return;
        uint64_t v = s->load(std::memory_order_relaxed);
        if (!is_shared(v) || rec_of(v)->n.load(std::memory_order_relaxed)) return;
        uintptr_t b = 0;
        size_t n = 0;
        if (pg > 0 && covering_end_of(pg - 1, &b, &n) == 1 && uint64_t(b) + n > (pg << kPageShift)) return;
        s->store(0, std::memory_order_release);
        retire(rec_of(v));
    }

    // Whether [base, base + size) meets an allocation already registered.
    bool overlaps(uintptr_t base, size_t size) const
    {
        uintptr_t b = 0;
        size_t n = 0;
        if (find(base, &b, &n)) return true;
        uint64_t first = uint64_t(base) >> kPageShift, last = uint64_t(base + size - 1) >> kPageShift;
        for (uint64_t pg = first; pg <= last; ++pg) {
            const std::atomic<uint64_t>* s = slot(pg);
            uint64_t v = s ? s->load(std::memory_order_acquire) : 0;
            if (v == 0) continue;
            if (!is_shared(v)) return true;
            const PageRec* r = rec_of(v);
            for (uint32_t i = 0; i < r->n.load(std::memory_order_relaxed); ++i) {
                uintptr_t at =
                    uintptr_t((pg << kPageShift) + (r->entries()[i].load(std::memory_order_relaxed) >> kEntryShift));
                if (at >= base && at - base < size) return true;
            }
        }
        return false;
    }

    // Enters [base, base + size) for an allocation on shared pages: the pages after the
    // first, then the first (publishing it).
    void insert_shared(uintptr_t base, size_t size)
    {
        uint64_t first = uint64_t(base) >> kPageShift, last = uint64_t(base + size - 1) >> kPageShift;
        uint64_t end = uint64_t(base) + size;
        bool owns_first = !(base & kPageMask) && (last > first || !(end & kPageMask));
        if (last > first) {
            bool owns_last = !(end & kPageMask);
            write_distances(first, first + 1, last - first - (owns_last ? 0 : 1));
            if (!owns_last) share_page(last);
        }
        if (owns_first)
            make_slot(first)->store(kBaseBit | uint64_t(size), std::memory_order_release);
        else
            add_entry(first, base & kPageMask, size);
    }

    // Removes what insert_shared entered: the first page first.
    void remove_shared(uintptr_t base, size_t size)
    {
        uint64_t first = uint64_t(base) >> kPageShift, last = uint64_t(base + size - 1) >> kPageShift;
        uint64_t end = uint64_t(base) + size;
        auto* fs = const_cast<std::atomic<uint64_t>*>(slot(first));
        if (fs && is_base(fs->load(std::memory_order_relaxed)))
            fs->store(0, std::memory_order_release);
        else
            remove_entry(first, base & kPageMask);
        if (last > first) {
            bool owns_last = !(end & kPageMask);
            clear_pages(first + 1, last - first - (owns_last ? 0 : 1));
            if (!owns_last) release_if_empty(last);
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

void registry_add_slab(char* base, size_t bytes, size_t chunk)
{
    auto& r = registry();
    std::lock_guard<std::mutex> share(r.share_mu);
    r.add_slab(uintptr_t(base), bytes, chunk);
}

void registry_insert(std::shared_ptr<Allocation> a)
{
    // All or nothing: the record and every node the pages need are made before any
    // slot changes, so a failed insert (out of memory) leaves the map as it was, and
    // the record (the caller's, moved in) goes with its memory.
    auto& r = registry();
    const uintptr_t base = uintptr_t(a->host);
    const size_t size = a->size;
    const bool shared = a->shares_pages();
    if ((!shared && (base & kPageMask)) || size == 0 || (uint64_t(base) + size) >> kAddrBits ||
        uint64_t(size) > kSizeMask)
        fail(STDCL_ENOMEM, "the registry cannot hold %zu bytes at %p (not page-aligned or beyond 48-bit addresses)",
             size, (void*)base);
    if (a->backing == Backing::slab) {
        Stripe& st = Registry::stripe_of(r, base);
        std::lock_guard<std::mutex> lock(st.mu);
        st.by_base[base] = std::move(a);  // throws before anything is entered
        r.set_chunk(base, size);
        return;
    }
    if (shared) {
        // Under the stripe's lock throughout: the record is in the table before a
        // lookup can find the pages, and a second registration of the same address
        // is refused before it could replace the first.
        const bool adopted = a->backing == Backing::adopted;
        Stripe& st = Registry::stripe_of(r, base);
        std::lock_guard<std::mutex> lock(st.mu);
        auto ins = st.by_base.emplace(base, nullptr);
        if (!ins.second)
            fail(STDCL_EINVAL, "clmadopt: %zu bytes at %p overlap memory already registered (clmalloc or clmadopt)",
                 size, (void*)base);
        try {
            std::lock_guard<std::mutex> share(r.share_mu);
            if (adopted && r.overlaps(base, size))
                fail(STDCL_EINVAL, "clmadopt: %zu bytes at %p overlap memory already registered (clmalloc or clmadopt)",
                     size, (void*)base);
            try {
                r.insert_shared(base, size);
            } catch (...) {
                r.remove_shared(base, size);  // what was written so far
                throw;
            }
        } catch (...) {
            st.by_base.erase(ins.first);
            throw;
        }
        ins.first->second = std::move(a);
        return;
    }
    uint64_t first = uint64_t(base) >> kPageShift;
    uint64_t pages = (uint64_t(size) + kPageMask) >> kPageShift;
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
        if (base_slot) r.clear(base, size);
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
    if (it->second->backing == Backing::slab) {
        r.set_chunk(base, 0);
    } else if (it->second->shares_pages()) {
        std::lock_guard<std::mutex> share(r.share_mu);
        r.remove_shared(base, size);
    } else {
        r.clear(base, size);
    }
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
