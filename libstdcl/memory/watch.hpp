// SPDX-License-Identifier: MIT
// watch.hpp: host memory the program sees through one mapping and the library
// and the driver through another, so that the program's view can be protected
// while theirs is not (STDCL_CHECK=sync, sync_check.cpp).  A fault in a
// protected page is recorded, the page is opened again and the program goes on;
// the record is judged later, outside the signal handler.  A fault anywhere else
// goes to the handler the program had, or crashes at its address.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace stdcl {

// 8 bytes at a time, multiplied and mixed, in four independent lanes (32 bytes
// a step: a lane's multiply waits for its last one, so four run at once), the
// lanes folded together at the end (BENCHMARKS.md, Table 12.7: what it saves
// the check).  Enough to tell a change; the values are this process's only
// (never stored).  Async-signal-safe (the fault handler hashes
// the page it opens).
__attribute__((always_inline)) inline std::uint64_t hash_bytes_inline(const char* p, size_t n)
{
    const std::uint64_t k1 = 0xff51afd7ed558ccdull, k2 = 0xc4ceb9fe1a85ec53ull;
    std::uint64_t a = 0x9e3779b97f4a7c15ull ^ n, b = a ^ k1, c = a ^ k2, d = a ^ (k1 >> 7);
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        std::uint64_t w[4];
        std::memcpy(w, p + i, 32);
        a = (a ^ w[0]) * k1;
        a ^= a >> 32;
        b = (b ^ w[1]) * k1;
        b ^= b >> 32;
        c = (c ^ w[2]) * k1;
        c ^= c >> 32;
        d = (d ^ w[3]) * k1;
        d ^= d >> 32;
    }
    for (; i + 8 <= n; i += 8) {
        std::uint64_t w;
        std::memcpy(&w, p + i, 8);
        a = (a ^ w) * k1;
        a ^= a >> 32;
    }
    std::uint64_t t = 0;
    if (i < n) std::memcpy(&t, p + i, n - i);
    std::uint64_t h = a;
    for (std::uint64_t x : {b, c, d, t}) {
        h = (h ^ x) * k2;
        h ^= h >> 29;
    }
    return h ? h : 1;  // 0 means "unknown" to the callers
}

inline std::uint64_t hash_bytes(const char* p, size_t n) { return hash_bytes_inline(p, n); }

// Maps bytes (a multiple of the page size) of new zeroed memory twice: *user for
// the program, *lib for the library and the driver.  false when the system
// refuses (no memfd, no address space): the caller uses ordinary memory.
bool watch_map(size_t bytes, char** user, char** lib);
void watch_unmap(char* user, char* lib, size_t bytes) noexcept;

// Registers [user, user + bytes) (mapped by watch_map) for fault recording and
// installs the handler on first use; -1 when the table is full (the memory is
// then never protected).  owner is handed back with each fault.
int watch_add(char* user, char* lib, size_t bytes, void* owner);
// Opens the memory and forgets it; its unread faults are dropped.
void watch_remove(int slot) noexcept;
// Gives pages [first, first + n) of the slot's memory the access `access`: no
// access, read only, or read and write (open).  Protecting puts the handler
// back in front if the program installed its own since (the program's is then
// the one chained to).
enum class Access { none, read, open };
void watch_protect(int slot, size_t first, size_t n, Access access) noexcept;

struct WatchFault {
    void* owner;  // watch_add's owner
    size_t offset;  // of the faulting address, from the slot's start
    void* pc;  // the faulting instruction
    bool write;  // the access was a write (where the processor says)
    std::uint64_t seq;  // faults are numbered in the order they happened
    std::uint64_t page_hash;  // hash_bytes of the page as the program was about to touch it
    unsigned char word[4];  // the 4-byte-aligned word it touched, as it was then (the host may change it later)
    int nframes;
    void* frames[12];  // the caller's stack, innermost first
};
// Whether any fault is waiting to be judged (cheap: one atomic load).
bool watch_pending() noexcept;
// Takes the waiting faults, oldest first: the first access to each page since
// that page's last fault was taken (none is dropped, however many there are).
std::vector<WatchFault> watch_take();

}  // namespace stdcl
