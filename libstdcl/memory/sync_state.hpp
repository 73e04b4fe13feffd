// SPDX-License-Identifier: MIT
// sync_state.hpp: what the sync check keeps per allocation (SyncState, one
// SyncDevice per device) and the helpers its two sources share: sync_check.cpp
// (host accesses, transfers, pending commands) and sync_launch.cpp (launches
// and foreign commands).  Private to memory/.
#pragma once

#include "memory/memory.hpp"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace stdcl {

// Bytes [off, off + len) of the host copy as they were sent to a device (or
// brought back from it): what the device's copy holds there.
struct SyncRange {
    size_t off, len;
    std::uint64_t hash;
};

// Per 4-byte word of an allocation, a running count (SyncDevice's epochs).
// A whole chunk of words given one value at once is kept as that value, not
// word by word: a launch that may write a whole argument sets a count per
// 4 KiB, not per word (BENCHMARKS.md, Table 12.10), and the words take no
// memory until a chunk is given values in part.
class WordStamps {
public:
    static constexpr size_t kChunk = 1024;  // words
    size_t size() const { return n_; }
    void assign(size_t nwords, std::uint32_t v)
    {
        n_ = nwords;
        word_.clear();  // made at the first fill of part of a chunk
        chunk_.assign((nwords + kChunk - 1) / kChunk, v);
        whole_.assign(chunk_.size(), 1);
    }
    std::uint32_t operator[](size_t w) const { return whole_[w / kChunk] ? chunk_[w / kChunk] : word_[w]; }
    // Words [w0, w1) hold v.
    void fill(size_t w0, size_t w1, std::uint32_t v)
    {
        w1 = std::min(w1, n_);
        while (w0 < w1) {
            const size_t c = w0 / kChunk, cb = c * kChunk, ce = std::min(cb + kChunk, n_);
            if (w0 == cb && w1 >= ce) {
                whole_[c] = 1;
                chunk_[c] = v;
                w0 = ce;
                continue;
            }
            if (word_.size() != n_) word_.assign(n_, 0);
            if (whole_[c]) {
                std::fill(word_.begin() + cb, word_.begin() + ce, chunk_[c]);
                whole_[c] = 0;
            }
            const size_t e = std::min(w1, ce);
            std::fill(word_.begin() + w0, word_.begin() + e, v);
            w0 = e;
        }
    }

private:
    size_t n_ = 0;
    std::vector<std::uint32_t> word_, chunk_;  // word_: empty while every chunk is whole
    std::vector<char> whole_;  // per chunk: every word holds chunk_'s value (word_ is stale there)
};

struct SyncDevice {
    std::vector<SyncRange> known;  // what the device's copy holds, where known: sent, or brought back
    // Per byte of the allocation (sized at first use): whether the device's
    // copy was given a value (kSent: sent or brought back; kWritten: written
    // by a command there; kNever), and the host's byte at that time.  A byte never given, or whose
    // host byte changed since, may be older on the device than on the host
    // (sync_probe_launch finds out whether a kernel reads it).
    std::vector<char> given, ref;
    // How many bytes of given are kNever (a byte given a value never is again,
    // until given is made anew for a new size): at 0 the hot loops skip looking.
    size_t nevers = 0;
    // Per 4-byte word of the allocation: when this device's copy there was last
    // given a value, and last written by a command there (a running count):
    // another device's result is newer than this copy only where it came later.
    WordStamps epoch_given, epoch_wrote;
    // Per word written by a command the check does not see (found by a look,
    // sync_refresh_unseen): the count at the look before, so that the write
    // lies after it and no later than epoch_wrote; 0 for a write the check saw
    // (at epoch_wrote).  And the count at this device's last look.
    WordStamps epoch_unseen_after;
    // Per word: 1 where this device's last write was only a possible one (a
    // launch noted as writing all of its argument, its words not seen; an
    // announced foreign command): the copy there may still hold what it held
    // before, so which device's write is the newest is not known where
    // another device wrote the word too; 0 where it was seen word by word.
    WordStamps epoch_maybe;
    std::uint32_t look_epoch = 0;
    std::string last_sync;  // "clmsync to the device at main+0x2b (./prog)"
    // Watched memory (Backing::watched), per page of the block: the hash of the
    // bytes this device's copy holds there (0: unknown), and whether a kernel or
    // copy here may have changed them since they were last brought back.
    std::vector<std::uint64_t> pages;
    std::vector<char> dirty;
    // Watched memory, per page of the block: the seal count (sync::seal_clock)
    // at which this copy's ref was last known to equal the host's bytes there
    // (given bytes only): a compare that found them so, or all of the page
    // given the host's bytes.  With the page sealed since (SyncState::sealed,
    // no later than this), the host's bytes are unchanged and the compare is
    // not made again.  A cache: 0 or an old count only means "compare".
    mutable std::vector<std::uint64_t> match;
    // ... and the kind given (kNever, kSent, kWritten) of every byte of the
    // page, where all are one kind; -1 where not known.
    std::vector<signed char> page_how;
    std::string writer;  // the last command here that may have written it
    size_t from = 0;  // ... and the first byte it was given
    // Memory stdcl_mem handed out (sync_refresh_unseen): what the device's copy
    // held, per page of the block (watched memory) or whole, when the check
    // last saw it (0: not known, learned at the next look).
    std::vector<std::uint64_t> image;
    // ... and by the byte: the device's copy and the host's bytes at that look,
    // and which device bytes are known (a command the check sees may have
    // changed the others since).
    std::vector<char> seen_dev, seen_host, seen_known;
};

struct SyncState {
    std::mutex mu;
    std::string where;  // where the allocation was made
    // Hash of the host bytes as clmalloc made them: while they are so, the
    // host never wrote the allocation, and no device's copy can be older.
    std::uint64_t born = 0;
    // The host bytes may have been changed by a device since: a kernel that may
    // write them on a device that works on host memory, or a transfer back not
    // yet waited for.  Host writes and device writes cannot be told apart then:
    // no finding until a waited transfer back, or a whole transfer to a device.
    bool unattributed = false;
    // Of that: the transfers back with CL_EVENT_NOWAIT not yet seen complete,
    // and whether something else (a foreign command's write on a device that
    // works on host memory) made it so.  Once the last such transfer is seen
    // complete (settle), its bytes are the host's and, with nothing else, the
    // allocation is judged again.
    unsigned backs_pending = 0;
    bool unattributed_other = false;
    std::vector<SyncDevice> dev;
    unsigned reported = 0;  // the kinds reported (once per allocation and kind)
    // Watched memory: the page size, the bytes of the block before the host
    // memory, and per page the hash of the whole page when the host last had it
    // rightly (a sync either way; a launch that found no device's changes
    // pending there); 0: unknown.  On a device that works on host memory a page
    // whose bytes differ from it holds a kernel's results not brought back.
    size_t ps = 0, lead = 0;
    std::vector<std::uint64_t> legit;
    // Per page: the seal count at which the program's view of the page was
    // last protected against writes (no access, or read only) with no
    // transfer back pending on it, and has been since; 0: open now, or
    // opened by a fault since.  The host's bytes there are then the same as
    // at that count: nothing writes them (the library and the driver write
    // only through transfers back, which unseal while pending).
    std::vector<std::uint64_t> sealed;
    // CL_EVENT_NOWAIT commands on these pages not yet seen complete (sync_settle):
    // the host must not write them (nor, where the command writes them, read).
    struct Pending {
        cl_event ev;  // retained
        size_t first, end;  // pages of the block
        size_t off, len;  // its bytes
        bool host_written;  // a transfer back: the command writes the host memory
        bool transfer;  // a transfer (else a kernel, which does not touch the host memory)
        unsigned dev;
        std::string what;
        void* site;  // the program's call, or null
    };
    std::vector<Pending> pending;
};

namespace sync {

// The kinds of finding, each reported once per allocation (SyncState::reported).
enum Kind : unsigned { stale = 1, never_sent = 2, host_access = 4, lost_update = 8, nowait_race = 16, unchecked = 32 };

// The count behind SyncDevice::match and SyncState::sealed: each seal and
// each compare takes the next.
std::uint64_t next_seal();
// Whether device d's ref equals the host's bytes in page P (given bytes), as
// the seals say, without looking at the bytes (s.mu held).
inline bool host_matches(const SyncState& s, const SyncDevice& d, size_t P)
{
    return P < s.sealed.size() && s.sealed[P] != 0 && P < d.match.size() && d.match[P] >= s.sealed[P];
}
// Watched memory, page P of the block: the allocation's bytes there
// ([*off, *off + *len) of the allocation).
inline void page_span(const Allocation& a, const SyncState& s, size_t P, size_t* off, size_t* len)
{
    size_t lo = P * s.ps > s.lead ? P * s.ps : s.lead;
    size_t hi = (P + 1) * s.ps < s.lead + a.size ? (P + 1) * s.ps : s.lead + a.size;
    *off = lo - s.lead;
    *len = hi > lo ? hi - lo : 0;
}
// Bytes [off, off + len) of the host's copy are about to change, or did,
// through the library's view (a transfer back): their pages lose their seals.
void unseal(const Allocation& a, SyncState& s, size_t off, size_t len);
// Sizes d's per-page vectors (and s's seals) to s's pages (watched memory).
void size_pages(SyncState& s, SyncDevice& d);

// "main+0x2b (./prog)", or the address.
std::string code_at(void* addr);
// s.dev[devnum], made on first use (s.mu held).
SyncDevice& device_state(SyncState& s, unsigned devnum);
// Drops what is known of [off, off + len) (it is about to change, or did):
// every entry that overlaps it, whole.
void forget(SyncDevice& d, size_t off, size_t len);
// Bytes [off, off + len) of a's copy on the device were given the host's
// bytes as they are now (sent, brought back), or written by a command there
// while the host held these.
// how: kSent (the device's copy and the host's agreed then), kWritten (a
// command there changed it while the host held these bytes).
enum : char { kNever = 0, kSent = 1, kWritten = 2 };
// unseen_after: for a write found by a look (a command the check does not
// see), 1 + the count at the device's look before; else 0.
// maybe: a write that may not have happened (SyncDevice::epoch_maybe).
void mark_given(const Allocation& a, SyncDevice& d, size_t off, size_t len, char how, std::uint32_t unseen_after = 0,
                bool maybe = false);
// Device dn's name in reports ("?" when cp or dn is not known).
const char* device_name(CLCONTEXT* cp, unsigned dn);
// Device dn's copy of bytes [off, off + len) of a, read back after its queues
// finish; false when there is none or a step failed.
bool read_device(Allocation& a, unsigned dn, size_t off, size_t len, std::vector<char>* out);
// STDCL_CHECK's action: 0 print, 1 error, 2 abort.
int action();
// A finding: printed, or (action "error", where the call may fail) the call's
// error (throws Error(STDCL_ESYNC)), or printed and the process aborted.
void report(const std::string& text, const char* call, bool may_fail);
// Judges the program's accesses to protected pages recorded since the last call.
void judge_pending(const char* call, bool may_fail);

}  // namespace sync

}  // namespace stdcl
