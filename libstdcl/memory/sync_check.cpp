// SPDX-License-Identifier: MIT
// sync_check.cpp: which copy of an allocation is current, per device, and the
// sync-check mode's findings at host accesses and transfers (sync_check.hpp);
// the findings at a launch or a foreign command are sync_launch.cpp's.
#include "memory/sync_check.hpp"
#include "memory/sync_state.hpp"

#include "helpers/cl_util.hpp"
#include "config/config.hpp"
#include "helpers/diag.hpp"
#include "memory/watch.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace stdcl {


namespace sync {

// "main+0x2b (./prog)", or the address.
std::string code_at(void* addr)
{
    if (!addr) return "an unknown place";
    Dl_info info{};
    if (dladdr(addr, &info) && info.dli_fname) {
        const char* file = std::strrchr(info.dli_fname, '/');
        file = file ? file + 1 : info.dli_fname;
        if (info.dli_sname)
            return strprintf("%s+0x%zx (%s)", info.dli_sname, size_t((char*)addr - (char*)info.dli_saddr), file);
        return strprintf("%p (%s+0x%zx)", addr, file, size_t((char*)addr - (char*)info.dli_fbase));
    }
    return strprintf("%p", addr);
}

SyncDevice& device_state(SyncState& s, unsigned devnum)
{
    if (s.dev.size() <= devnum) s.dev.resize(devnum + 1);
    return s.dev[devnum];
}

// Drops what is known of [off, off + len) (it is about to change, or did).
void forget(SyncDevice& d, size_t off, size_t len)
{
    size_t k = 0;
    for (const SyncRange& r : d.known)
        if (r.off + r.len <= off || off + len <= r.off) d.known[k++] = r;
    d.known.resize(k);
}

std::atomic<std::uint32_t>& sync_clock()
{
    static std::atomic<std::uint32_t> clock{0};
    return clock;
}

std::uint64_t next_seal()
{
    static std::atomic<std::uint64_t> clock{0};
    return ++clock;
}

void unseal(const Allocation& a, SyncState& s, size_t off, size_t len)
{
    if (s.sealed.empty() || len == 0 || off >= a.size) return;
    len = std::min(len, a.size - off);
    for (size_t P = (s.lead + off) / s.ps, end = (s.lead + off + len + s.ps - 1) / s.ps; P < end && P < s.sealed.size(); ++P)
        s.sealed[P] = 0;
}

void size_pages(SyncState& s, SyncDevice& d)
{
    const size_t n = s.legit.size();
    if (d.pages.size() != n) {
        d.pages.resize(n, 0);
        d.dirty.resize(n, 0);
    }
    if (d.match.size() != n) {
        d.match.assign(n, 0);
        d.page_how.assign(n, -1);
    }
    if (s.sealed.size() != n) s.sealed.assign(n, 0);
}

void mark_given(const Allocation& a, SyncDevice& d, size_t off, size_t len, char how, std::uint32_t unseen_after,
                bool maybe)
{
    if (!a.host || off >= a.size) return;
    len = std::min(len, a.size - off);
    SyncState* s = a.sync.get();  // its mu is held
    const bool paged = s && !s->legit.empty();
    if (paged) size_pages(*s, d);
    if (d.given.size() != a.size) {
        d.nevers = a.size;
        d.given.assign(a.size, 0);
        d.ref.assign(a.size, 0);
        d.epoch_given.assign((a.size + 3) / 4, 0);
        d.epoch_wrote.assign((a.size + 3) / 4, 0);
        d.epoch_unseen_after.assign((a.size + 3) / 4, 0);
        d.epoch_maybe.assign((a.size + 3) / 4, 0);
        if (paged) d.page_how.assign(d.page_how.size(), -1);
    }
    if (d.nevers) d.nevers -= size_t(std::count(d.given.data() + off, d.given.data() + off + len, char(kNever)));
    if (!paged) {
        std::memset(d.given.data() + off, how, len);
        std::memcpy(d.ref.data() + off, a.lib() + off, len);
    } else {
        // Page by page, leaving what is so already: a whole page given this
        // kind before, and ref equal to the host's bytes where the seals say
        // so (every byte of the page given; no fault waiting to be judged).
        const bool trust = !watch_pending();
        for (size_t P = (s->lead + off) / s->ps, end = (s->lead + off + len + s->ps - 1) / s->ps; P < end; ++P) {
            size_t po, pl;
            page_span(a, *s, P, &po, &pl);
            size_t lo = std::max(po, off), hi = std::min(po + pl, off + len);
            if (lo >= hi) continue;
            const bool whole = lo == po && hi == po + pl;
            const signed char was = d.page_how[P];
            if (!whole || was != how) std::memset(d.given.data() + lo, how, hi - lo);
            if (!whole || (was != kSent && was != kWritten) || !trust || !host_matches(*s, d, P))
                std::memcpy(d.ref.data() + lo, a.lib() + lo, hi - lo);
            d.page_how[P] = whole || was == how ? how : -1;
        }
    }
    std::uint32_t now = ++sync_clock();
    const size_t w0 = off / 4, w1 = (off + len - 1) / 4 + 1;
    d.epoch_given.fill(w0, w1, now);
    if (how == kWritten) {
        d.epoch_wrote.fill(w0, w1, now);
        d.epoch_unseen_after.fill(w0, w1, unseen_after);
        d.epoch_maybe.fill(w0, w1, maybe ? 1 : 0);
    }
}

// Whether the newest write of word wi is not known: device d's and another
// device's writes of it may have come in either order (one of them found by
// a look, in an interval that holds the other).
bool write_order_unknown(const SyncState& s, unsigned dn, size_t wi)
{
    const SyncDevice& d = s.dev[dn];
    if (wi >= d.epoch_wrote.size() || !d.epoch_wrote[wi]) return false;
    std::uint32_t dhi = d.epoch_wrote[wi], dlo = d.epoch_unseen_after[wi] ? d.epoch_unseen_after[wi] - 1 : dhi;
    for (unsigned o = 0; o < s.dev.size(); ++o) {
        if (o == dn || wi >= s.dev[o].epoch_wrote.size() || !s.dev[o].epoch_wrote[wi]) continue;
        const SyncDevice& od = s.dev[o];
        std::uint32_t ohi = od.epoch_wrote[wi],
                      olo = od.epoch_unseen_after[wi] ? od.epoch_unseen_after[wi] - 1 : ohi;
        if (!d.epoch_unseen_after[wi] && !od.epoch_unseen_after[wi]) continue;  // both seen: ordered
        if (!(dlo >= ohi || olo >= dhi)) return true;  // the intervals overlap
    }
    return false;
}

// Whether another device wrote word wi of the allocation after device dn's
// command wrote it there, or may have (a write the check found by a look lies
// between that look and the one before): dn's result is then not the newest.
bool written_later_elsewhere(const SyncState& s, unsigned dn, size_t wi)
{
    const SyncDevice& d = s.dev[dn];
    if (wi >= d.epoch_wrote.size() || !d.epoch_wrote[wi]) return false;
    std::uint32_t dlo = d.epoch_unseen_after[wi] ? d.epoch_unseen_after[wi] - 1 : d.epoch_wrote[wi];
    for (unsigned o = 0; o < s.dev.size(); ++o) {
        if (o == dn || wi >= s.dev[o].epoch_wrote.size() || !s.dev[o].epoch_wrote[wi]) continue;
        if (s.dev[o].epoch_wrote[wi] > dlo) return true;
    }
    return false;
}

int action() { return settings().check_action; }

// Device dn's copy of bytes [off, off + len) of a, read back after its queues
// finish; false when there is none or a step failed.
bool read_device(Allocation& a, unsigned dn, size_t off, size_t len, std::vector<char>* out)
{
    CLCONTEXT* cp = a.cp.load();
    cl_mem m = nullptr;
    {
        std::lock_guard<std::mutex> lock(a.mu);
        if (dn < a.mem.size()) m = a.mem[dn];
    }
    if (!m || !cp || dn >= cp->devs.size() || len == 0) return false;
    Device& dev = cp->devs[dn];
    out->resize(len);
    if (dev.xfer != dev.queue) clFinish(dev.xfer);
    return clFinish(dev.queue) == CL_SUCCESS &&
           clEnqueueReadBuffer(dev.queue, m, CL_TRUE, off, len, out->data(), 0, nullptr, nullptr) == CL_SUCCESS;
}



const char* device_name(CLCONTEXT* cp, unsigned dn)
{
    return cp && dn < cp->devs.size() ? cp->devs[dn].name.c_str() : "?";
}

// A finding: printed, or (action "error", where the call may fail) the call's
// error, or printed and the process aborted.
void report(const std::string& text, const char* call, bool may_fail)
{
    if (action() == 1 && may_fail) fail(STDCL_ESYNC, "%s: %s", call, text.c_str());
    std::fprintf(stderr, "stdcl: %s\n", text.c_str());
    std::fflush(stderr);
    if (action() == 2) std::abort();
}

}  // namespace sync

using namespace sync;

namespace {

// The hash of the whole page (as the fault handler takes it) and of the
// allocation's bytes in it (as a device's copy holds them).
std::uint64_t page_hash(const Allocation& a, const SyncState& s, size_t P)
{
    return hash_bytes(a.lib() - s.lead + P * s.ps, s.ps);
}

std::uint64_t span_hash(const Allocation& a, const SyncState& s, size_t P)
{
    size_t off, len;
    page_span(a, s, P, &off, &len);
    return hash_bytes(a.lib() + off, len);
}

// Pages [first, end) of the block that bytes [off, off + len) of the allocation touch.
void pages_touched(const Allocation& a, const SyncState& s, size_t off, size_t len, size_t* first, size_t* end)
{
    (void)a;
    *first = (s.lead + off) / s.ps;
    *end = (s.lead + off + len + s.ps - 1) / s.ps;
}

bool covers_page(const Allocation& a, const SyncState& s, size_t P, size_t off, size_t len)
{
    size_t po, pl;
    page_span(a, s, P, &po, &pl);
    return off <= po && po + pl <= off + len;
}

bool dirty_anywhere(const SyncState& s, size_t P)
{
    for (const SyncDevice& d : s.dev)
        if (P < d.dirty.size() && d.dirty[P]) return true;
    return false;
}

// Sets the program's access to the pages of [first, end) as they stand, and
// their seals: a page closed to the program's writes keeps the count it was
// sealed at, or takes the next; an open one, or one a transfer back still
// writes, has none.  In one pass over the devices and one over the pending
// commands (a burst of NOWAIT launches leaves many pending), not one per page.
void apply_access(Allocation& a, SyncState& s, size_t first, size_t end)
{
    if (a.watch < 0 || first >= end) return;
    const size_t n = end - first;
    // Per page: none (a device may have changed it, or a transfer back writes
    // it), else read where a pending command reads it, else open.
    std::vector<char> none(n, 0), back(n, 0);
    std::vector<int> reads(n + 1, 0);  // pending readers starting minus ending, summed below
    for (const SyncDevice& d : s.dev)
        for (size_t P = first; P < end && P < d.dirty.size(); ++P) none[P - first] |= d.dirty[P];
    for (const SyncState::Pending& g : s.pending) {
        size_t lo = std::max(g.first, first), hi = std::min(g.end, end);
        if (lo >= hi) continue;
        if (g.host_written) {
            std::fill(back.begin() + (lo - first), back.begin() + (hi - first), 1);
        } else {
            ++reads[lo - first];
            --reads[hi - first];
        }
    }
    auto access = [&](size_t i, int readers) {
        return none[i] || back[i] ? Access::none : readers > 0 ? Access::read : Access::open;
    };
    const bool seals = s.sealed.size() == s.legit.size();
    size_t run = first;
    int readers = reads[0];
    Access cur = access(0, readers);
    for (size_t P = first; P <= end; ++P) {
        if (P > first && P < end) readers += reads[P - first];
        Access here = P < end ? access(P - first, readers) : cur;
        if (P < end && seals && P < s.sealed.size()) {
            if (here == Access::open || back[P - first])
                s.sealed[P] = 0;
            else if (!s.sealed[P])
                s.sealed[P] = next_seal();
        }
        if (P == first || (P < end && here == cur)) continue;
        watch_protect(a.watch, run, P - run, cur);
        run = P;
        cur = here;
    }
}

// The units of SyncDevice::image: pages of the block (watched memory), or the
// whole allocation; unit u's bytes of the allocation.
size_t image_units(const SyncState& s) { return s.legit.empty() ? 1 : s.legit.size(); }

void image_span(const Allocation& a, const SyncState& s, size_t u, size_t* off, size_t* len)
{
    if (s.legit.empty()) {
        *off = 0;
        *len = a.size;
    } else {
        page_span(a, s, u, off, len);
    }
}

// The device's copy of bytes [off, off + len) changed by a command the check
// sees: where it went from the host (to_device, whole units), it holds the
// host's bytes; elsewhere it is learned again at the next look.
void image_note(const Allocation& a, const SyncState& s, SyncDevice& d, size_t off, size_t len, bool to_device)
{
    for (size_t u = 0; u < d.image.size(); ++u) {
        size_t uo, ul;
        image_span(a, s, u, &uo, &ul);
        if (ul == 0 || uo + ul <= off || off + len <= uo) continue;
        bool whole = off <= uo && uo + ul <= off + len;
        d.image[u] = to_device && whole ? hash_bytes(a.lib() + uo, ul) : 0;
    }
    if (d.seen_known.size() == a.size && off < a.size) {
        len = std::min(len, a.size - off);
        if (to_device) std::memcpy(d.seen_dev.data() + off, a.lib() + off, len);
        std::memset(d.seen_known.data() + off, to_device ? 1 : 0, len);
    }
}

// A transfer back from the device, complete: the host's bytes [off, off + len)
// are the device's now, a look at them as sync_refresh_unseen takes (else a
// later command the check does not see that rewrites them would count as
// the host's change: the library's own transfer changed the host's bytes
// since the last look).
void seen_brought_back(const Allocation& a, SyncDevice& d, size_t off, size_t len)
{
    if (d.seen_known.size() != a.size || d.seen_host.size() != a.size || d.seen_dev.size() != a.size ||
        off >= a.size)
        return;
    len = std::min(len, a.size - off);
    std::memcpy(d.seen_host.data() + off, a.lib() + off, len);
    std::memcpy(d.seen_dev.data() + off, a.lib() + off, len);
    std::memset(d.seen_known.data() + off, 1, len);
}

// Bytes [off, off + len) went to device devnum's copy, or came back from it.
void note_pages_synced(Allocation& a, SyncState& s, SyncDevice& d, size_t off, size_t len, bool to_device, bool waited)
{
    if (s.legit.empty()) return;
    size_pages(s, d);
    size_t first, end;
    pages_touched(a, s, off, len, &first, &end);
    for (size_t P = first; P < end; ++P) {
        // A page synced only in part stays watched for this device: a host
        // access there is judged by the word it touches.
        if (covers_page(a, s, P, off, len)) d.dirty[P] = 0;
        if (covers_page(a, s, P, off, len) && (to_device || waited)) {
            d.pages[P] = span_hash(a, s, P);
            s.legit[P] = page_hash(a, s, P);
        } else {
            d.pages[P] = 0;
            if (!to_device) s.legit[P] = 0;
        }
    }
    apply_access(a, s, first, end);
}

// What device dn's copy (its own memory) holds in the pages of [first, end)
// where that is not known: read back once, so that a page the kernel does not
// write (another device's part, never sent here) is no finding later.
void learn_device_pages(Allocation& a, const SyncState& s, SyncDevice& d, Device& dev, unsigned dn, size_t first,
                        size_t end)
{
    size_t lo = first;
    while (lo < end && d.pages[lo]) ++lo;
    if (lo == end) return;
    size_t off, len, hoff, hlen;
    page_span(a, s, lo, &off, &len);
    page_span(a, s, end - 1, &hoff, &hlen);
    len = hoff + hlen - off;
    if (len == 0) return;
    cl_mem m = a.device_mem(dn, 0);
    std::vector<char> copy(len);
    if (dev.xfer != dev.queue) clFinish(dev.xfer);
    if (clEnqueueReadBuffer(dev.queue, m, CL_TRUE, off, len, copy.data(), 0, nullptr, nullptr) != CL_SUCCESS) return;
    for (size_t P = lo; P < end; ++P) {
        if (d.pages[P]) continue;
        size_t po, pl;
        page_span(a, s, P, &po, &pl);
        d.pages[P] = hash_bytes(copy.data() + (po - off), pl);
    }
}

// A kernel or copy on device dn may change bytes [from, from + len): the
// program's view of those pages is protected until they are brought back.
void note_pages_written(Allocation& a, SyncState& s, SyncDevice& d, unsigned dn, size_t from, size_t len,
                        std::string writer)
{
    if (s.legit.empty()) return;
    size_pages(s, d);
    size_t first, end;
    pages_touched(a, s, from, len, &first, &end);
    CLCONTEXT* cp = a.cp.load();
    if (cp && dn < cp->devs.size() && !a.zero_copy_on(cp->devs[dn]))
        learn_device_pages(a, s, d, cp->devs[dn], dn, first, end);
    for (size_t P = first; P < end; ++P) {
        if (!dirty_anywhere(s, P)) s.legit[P] = page_hash(a, s, P);
        d.dirty[P] = 1;
    }
    d.writer = std::move(writer);
    d.from = from;
    apply_access(a, s, first, end);
    // The caller gave this copy's ref the host's bytes there just now (under
    // s.mu): where the page is sealed since, they are the same.
    for (size_t P = first; P < end; ++P)
        if (s.sealed[P] && covers_page(a, s, P, from, len)) d.match[P] = s.sealed[P];
}

// The stack of a fault from the faulting instruction out: "f+0x1 (prog) < main+0x2 (prog)".
std::string fault_stack(const WatchFault& f)
{
    int from = 0;
    for (int i = 0; i < f.nframes; ++i)
        if (f.frames[i] == f.pc) from = i;  // the frames before are the handler's
    std::string out;
    for (int i = from; i < f.nframes && i < from + 6; ++i) {
        if (!out.empty()) out += " < ";
        out += code_at(f.frames[i]);
    }
    return out.empty() ? std::string("not known") : out;
}

// A recorded access of the program to a protected page: a finding if a device
// that may have written the page really changed it.
void judge(const WatchFault& f, const char* call, bool may_fail)
{
    Allocation& a = *static_cast<Allocation*>(f.owner);
    SyncState* s = a.sync.get();
    CLCONTEXT* cp = a.cp.load();
    if (!s || !cp) return;
    std::lock_guard<std::mutex> lock(s->mu);
    size_t P = f.offset / s->ps;
    if (P >= s->legit.size()) return;
    size_t byte = f.offset >= s->lead ? f.offset - s->lead : 0;
    for (const SyncState::Pending& g : s->pending) {
        // The byte itself: a command's bytes, not its pages (the page is watched
        // again below, for a later access).
        if (P < g.first || P >= g.end || (!f.write && !g.host_written)) continue;
        if (byte < g.off || byte >= g.off + g.len) continue;
        if (s->reported & nowait_race) break;
        s->reported |= nowait_race;
        std::string text = strprintf(
            "sync check: the host %s byte %zu of an allocation while %s is still pending: the command may %s it "
            "before or after this access\n"
            "  allocation: %p, %zu bytes, made at %s\n"
            "  the access: the instruction at %s\n"
            "  backtrace: %s\n"
            "  fix: wait for the command (clwait(cp, %u, CL_ALL_EVENT), or a call with CL_EVENT_WAIT on device %u) "
            "before the host touches the memory",
            f.write ? "writes" : "reads", byte, g.what.c_str(), g.host_written ? "write" : "read", (void*)a.host,
            a.size, s->where.c_str(), code_at(f.pc).c_str(), fault_stack(f).c_str(), g.dev, g.dev);
        report(text, call, may_fail);
        break;
    }
    // The devices that may have changed the page, the one given the narrowest
    // view that holds the byte first: on shared host memory the change itself
    // cannot be told apart, and that device is the likeliest writer.
    std::vector<unsigned> devs;
    for (unsigned dn = 0; dn < s->dev.size() && dn < cp->devs.size(); ++dn)
        if (P < s->dev[dn].dirty.size() && s->dev[dn].dirty[P]) devs.push_back(dn);
    std::stable_sort(devs.begin(), devs.end(), [&](unsigned x, unsigned y) {
        bool hx = s->dev[x].from <= byte, hy = s->dev[y].from <= byte;
        if (hx != hy) return hx;
        return s->dev[x].from > s->dev[y].from;
    });
    for (unsigned dn : devs) {
        SyncDevice& d = s->dev[dn];
        if (f.write) {
            // A host write is no finding by itself (a program may change a
            // result and send just that); a transfer that then loses one
            // side's changes is (lost_bytes).  The device's results there
            // stay not brought back.
            continue;
        }
        Device& dev = cp->devs[dn];
        bool changed;
        bool moved = false;  // the host wrote the page after the read
        std::string fix = strprintf("clmsync(cp, %u, ptr, CL_MEM_HOST) after the kernel and before the host uses "
                                    "its results (clmsyncn for this device's part only)",
                                    dn);
        if (a.zero_copy_on(dev)) {
            d.dirty[P] = 0;  // the handler gave the page back to the program
            changed = s->legit[P] && f.page_hash != s->legit[P];
        } else {
            // By the word the host touched: one the device wrote, that the host
            // left as it was then, and whose bytes differ on the device.  A word
            // of the page that is not the device's result is no finding; the
            // page is watched again from the next library call on.
            size_t po, pl;
            page_span(a, *s, P, &po, &pl);
            std::vector<char> page;
            if (d.given.size() != a.size || !read_device(a, dn, po, pl, &page)) continue;
            // A word another device wrote after this one did holds that device's
            // result as the newest: this device's is no longer the program's.
            auto superseded = [&](size_t w) {
                size_t wi = w / 4;
                if (wi >= d.epoch_wrote.size()) return false;
                for (size_t o = 0; o < s->dev.size(); ++o)
                    if (o != dn && wi < s->dev[o].epoch_wrote.size() && s->dev[o].epoch_wrote[wi] > d.epoch_wrote[wi])
                        return true;
                return false;
            };
            auto result = [&](size_t w, const char* devb) {
                if (superseded(w)) return false;
                bool differs = false;
                for (size_t b = w; b < std::min(w + 4, a.size); ++b) {
                    if (d.given[b] != kWritten || d.ref[b] != a.lib()[b]) return false;
                    differs = differs || devb[b - w] != a.lib()[b];
                }
                return differs;
            };
            // The touched word as the host held it at the access (the program may
            // have written it since, before this judgment at the next call).
            size_t w = std::min(byte, a.size - 1) / 4 * 4;
            auto result_at_fault = [&](const char* devb) {
                if (superseded(w)) return false;
                bool differs = false;
                for (size_t b = w; b < std::min(w + 4, a.size); ++b) {
                    char then = char(f.word[b - w]);
                    if (d.given[b] != kWritten || d.ref[b] != then) return false;
                    differs = differs || devb[b - w] != then;
                }
                return differs;
            };
            changed = w >= po && w < po + pl && result_at_fault(page.data() + (w - po));
            if (!changed) continue;
            d.dirty[P] = 0;
            // The fix: the one run of this device's results the host lacks, where
            // there is one; else none (a transfer of all of it would put the
            // device's older bytes over the host's or another device's).
            std::vector<char> all;
            // Where the program wrote the page after the read (before this call
            // judged it), the host's bytes are no longer those the fix would go
            // before: no fix is named.
            moved = page_hash(a, *s, P) != f.page_hash;
            if (moved) fix.clear();
            if (!moved && !(s->reported & host_access) && read_device(a, dn, 0, a.size, &all)) {
                // Memory the program holds a device object of: words a command
                // the check does not see changed since the last look (the host
                // left them as they were then) are this device's results too,
                // written after that look.
                const bool look = a.handed_out.load(std::memory_order_relaxed) && d.seen_known.size() == a.size &&
                    d.seen_dev.size() == a.size && d.seen_host.size() == a.size;
                bool order_unknown = false;
                auto unseen_result = [&](size_t x) {
                    if (!look) return false;
                    size_t wl = std::min<size_t>(4, a.size - x);
                    for (size_t b = x; b < x + wl; ++b)
                        if (!d.seen_known[b]) return false;
                    if (std::memcmp(d.seen_dev.data() + x, all.data() + x, wl) == 0 ||
                        std::memcmp(d.seen_host.data() + x, a.lib() + x, wl) != 0 ||
                        std::memcmp(all.data() + x, a.lib() + x, wl) == 0)
                        return false;
                    for (size_t o = 0; o < s->dev.size(); ++o)
                        if (o != dn && x / 4 < s->dev[o].epoch_wrote.size() &&
                            s->dev[o].epoch_wrote[x / 4] > d.look_epoch)
                            order_unknown = true;  // another device wrote it since: which came last?
                    return true;
                };
                // A word both a command the check does not see and the host
                // changed since the last look: which is the program's newest is
                // not known, nor what a transfer back would undo.
                for (size_t x = 0; look && x < a.size && !order_unknown; x += 4) {
                    size_t wl = std::min<size_t>(4, a.size - x);
                    order_unknown = d.seen_known[x] && std::memcmp(d.seen_dev.data() + x, all.data() + x, wl) != 0 &&
                        std::memcmp(d.seen_host.data() + x, a.lib() + x, wl) != 0;
                }
                std::vector<std::pair<size_t, size_t>> runs;
                for (size_t x = 0; x < a.size && runs.size() < 2; x += 4) {
                    if (!result(x, all.data() + x) && !unseen_result(x)) continue;
                    if (!runs.empty() && runs.back().second == x)
                        runs.back().second = std::min(x + 4, a.size);
                    else
                        runs.emplace_back(x, std::min(x + 4, a.size));
                }
                // Where this device's result and another device's write of the
                // same word may have come in either order, which is newest is
                // not known: no transfer is named.  So too where this device's
                // last write of it was only a possible one and another device
                // wrote it (this copy may hold its older result).
                auto maybe_older = [&](size_t wi) {
                    if (wi >= d.epoch_maybe.size() || !d.epoch_maybe[wi]) return false;
                    for (size_t o = 0; o < s->dev.size(); ++o)
                        if (o != dn && wi < s->dev[o].epoch_wrote.size() && s->dev[o].epoch_wrote[wi]) return true;
                    return false;
                };
                for (const auto& r : runs)
                    for (size_t x = r.first; x < r.second && !order_unknown; x += 4)
                        order_unknown = write_order_unknown(*s, dn, x / 4) || maybe_older(x / 4);
                // Memory stdcl_mem handed out with no command on it announced:
                // another device's copy may hold bytes a plain command wrote
                // that no look has seen (a copy's first look has nothing to
                // compare with), newer than this device's: no transfer is named.
                if (!order_unknown && a.handed_out.load(std::memory_order_relaxed) && !a.announced.load()) {
                    std::lock_guard<std::mutex> al(a.mu);
                    for (size_t o = 0; o < a.mem.size() && !order_unknown; ++o)
                        order_unknown = o != dn && a.mem[o] != nullptr;
                }
                if (order_unknown) runs.clear();
                if (runs.size() == 1 && runs[0].first == 0 && runs[0].second == a.size)
                    fix = strprintf("clmsync(cp, %u, ptr, CL_MEM_HOST) after the kernel and before the host uses its "
                                    "results",
                                    dn);
                else if (runs.size() == 1)
                    fix = strprintf("clmsyncn(cp, %u, (char*)ptr + %zu, %zu, CL_MEM_HOST) after the kernel and "
                                    "before the host uses its results",
                                    dn, runs[0].first, runs[0].second - runs[0].first);
                else
                    fix.clear();
            }
        }
        if (!changed || (s->reported & host_access)) continue;
        s->reported |= host_access;
        std::string text =
            strprintf("sync check: the host %s byte %zu of an allocation that %s changed on device %u (%s); no "
                      "clmsync(..., CL_MEM_HOST) from device %u brought it back\n"
                      "  allocation: %p, %zu bytes, made at %s\n"
                      "  the access: the instruction at %s\n"
                      "  backtrace: %s\n"
                      "  last sync with device %u: %s\n"
                      "%s",
                      f.write ? "writes" : "reads", byte, d.writer.c_str(), dn, dev.name.c_str(), dn, (void*)a.host,
                      a.size, s->where.c_str(), code_at(f.pc).c_str(), fault_stack(f).c_str(), dn,
                      d.last_sync.empty() ? "none" : d.last_sync.c_str(),
                      moved         ? "  (the host has written that page since the read: bring this device's results "
                                      "back after the kernel and before the host reads them, each run with clmsyncn)"
                      : fix.empty() ? "  (no single transfer fixes it: this device's results lie in several runs; "
                                      "bring each back with clmsyncn)"
                                    : ("  fix: " + fix).c_str());
        report(text, call, may_fail);
    }
    apply_access(a, *s, P, P + 1);  // watched again as it stands now
}

std::mutex& judge_mu()
{
    static auto* mu = new std::mutex;  // usable during exit
    return *mu;
}

void judge_at_exit() { sync::judge_pending("exit", false); }

}  // namespace

namespace sync {

void judge_pending(const char* call, bool may_fail)
{
    if (!watch_pending()) return;
    std::lock_guard<std::mutex> lock(judge_mu());
    std::vector<WatchFault> faults = watch_take();
    // The handler opened each page: its seal is gone, before any judgment
    // (which may fail the call).
    for (const WatchFault& f : faults) {
        SyncState* s = static_cast<Allocation*>(f.owner)->sync.get();
        if (!s) continue;
        std::lock_guard<std::mutex> lock(s->mu);
        size_t P = f.offset / std::max<size_t>(s->ps, 1);
        if (P < s->sealed.size()) s->sealed[P] = 0;
    }
    for (const WatchFault& f : faults) judge(f, call, may_fail);
}

}  // namespace sync

bool sync_check_on() { return settings().check_sync; }

void sync_note_alloc(Allocation& a, void* caller)
{
    if (a.backing == Backing::devonly) return;  // no host copy to fall behind
    auto s = std::make_shared<SyncState>();
    s->where = code_at(caller);
    if (a.host) s->born = hash_bytes(a.lib(), a.size);
    if (a.backing == Backing::watched) {
        s->ps = size_t(sysconf(_SC_PAGESIZE));
        s->lead = size_t(a.host - a.block);
        s->legit.assign(a.block_bytes / s->ps, 0);
        a.watch = watch_add(a.block, a.lib() - s->lead, a.block_bytes, &a);
        if (a.watch < 0) {
            s->legit.clear();
            trace(Trace::mem, "STDCL_CHECK=sync: too many allocations to watch; host reads of %p are not checked",
                  (void*)a.host);
        }
        static std::once_flag once;
        std::call_once(once, [] { std::atexit(judge_at_exit); });
    } else {
        trace(Trace::mem, "STDCL_CHECK=sync: %p (%s) cannot be protected: host reads of it are not checked",
              (void*)a.host,
              a.backing == Backing::adopted    ? "the program's memory"
                  : (a.flags & CL_MEM_NOCOPY)  ? "CL_MEM_NOCOPY"
                  : (a.flags & CL_MEM_IMAGE2D) ? "an image"
                                               : "not mapped twice");
    }
    a.sync = std::move(s);
}

void sync_check_before(const char* call) { judge_pending(call, true); }

namespace {

// A transfer of bytes [off, off + len) with device dn that races a transfer
// still pending on another device: the two queues keep no order between them,
// so an upload may send the host bytes before or after a transfer back lands
// on them, and two transfers back may land in either order.  A finding until
// the program joins the pending one (clwait, or a call that waits).
void transfer_race(Allocation& a, SyncState& s, unsigned dn, size_t off, size_t len, bool to_device,
                   const char* call, void* caller)
{
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.reported & nowait_race) return;
    for (const SyncState::Pending& g : s.pending) {
        if (!g.transfer || g.dev == dn || (to_device && !g.host_written)) continue;
        size_t lo = std::max(off, g.off), hi = std::min(off + len, g.off + g.len);
        if (lo >= hi) continue;
        s.reported |= nowait_race;
        CLCONTEXT* cp = a.cp.load();
        std::string text = strprintf(
            "sync check: %s %s device %u (%s) %s bytes %zu to %zu of an allocation while %s, still pending, %s "
            "them: the two devices' queues keep no order between them, so %s\n"
            "  allocation: %p, %zu bytes, made at %s\n"
            "  this transfer: %s at %s\n"
            "  the pending one: enqueued at %s\n"
            "  fix: clwait(cp, %u, CL_MEM_EVENT) (or CL_EVENT_WAIT on that transfer) before this one",
            call, to_device ? "to" : "from", dn, device_name(cp, dn), to_device ? "reads" : "writes", lo, hi - 1,
            g.what.c_str(), g.host_written ? "writes" : "reads",
            to_device          ? "the device may get the bytes from before that transfer lands or from after"
                : g.host_written ? "either transfer's bytes may be the ones left in the host memory"
                                 : "that transfer may send the bytes from before this one or from after",
            (void*)a.host, a.size, s.where.c_str(), call, code_at(caller).c_str(), code_at(g.site).c_str(), g.dev);
        report(text, call, true);
        return;
    }
}

}  // namespace

namespace {

// A transfer of bytes [off, off + len) with device dn that loses a change
// (byte by byte, from what each copy was last given):
// - to the device: bytes a command wrote there that the host does not have
//   (its bytes are still what they were when the command wrote them, and the
//   device's differ) get the host's older bytes;
// - back to the host: bytes the host changed since the device's copy was last
//   given them (or never gave it) get the device's older bytes.
void lost_bytes(Allocation& a, SyncState& s, unsigned dn, size_t off, size_t len, bool to_device, const char* call,
                void* caller)
{
    std::vector<size_t> cand;  // offsets of the words to look at on the device
    {
        std::lock_guard<std::mutex> lock(s.mu);
        if (s.unattributed || (s.reported & lost_update) || !a.host) return;
        SyncDevice& d = device_state(s, dn);
        bool sized = d.given.size() == a.size;
        if (to_device && !sized) return;  // nothing written there
        if (!to_device && !sized && hash_bytes(a.lib(), a.size) == s.born) return;  // the host never wrote it
        const char* host = a.lib();
        for (size_t j = off / 4 * 4; j < off + len && j < a.size; j += 4) {
            // 256 bytes at a time where no word can be a candidate.
            while (sized && j >= off && j + 256 <= std::min(off + len, a.size) &&
                   (to_device ? std::memchr(d.given.data() + j, kWritten, 256) == nullptr
                              : (d.nevers == 0 || std::memchr(d.given.data() + j, kNever, 256) == nullptr) &&
                                    std::memcmp(d.ref.data() + j, host + j, 256) == 0))
                j += 256;
            if (j >= off + len || j >= a.size) break;
            size_t lo = std::max(j, off), hi = std::min({j + 4, off + len, a.size});
            // A word: to the device, one the host left as it was when the device
            // wrote it (all its bytes); back, one the host changed since the
            // device was given it (any byte), or wrote where the device never
            // had it (a word still as clmalloc made it, zero or the fill
            // pattern, holds nothing of the host's).
            // Back: a host byte another device's copy was given as it is (sent
            // from the host, or brought back from there) lives on there: the
            // transfer loses no change of it.
            auto elsewhere = [&](size_t b) {
                for (size_t o = 0; o < s.dev.size(); ++o)
                    if (o != dn && s.dev[o].given.size() == a.size && s.dev[o].given[b] == kSent &&
                        s.dev[o].ref[b] == host[b])
                        return true;
                return false;
            };
            bool all = true, any = false, never = false;
            for (size_t b = lo; b < hi; ++b) {
                char g = sized ? d.given[b] : char(kNever);
                never = never || g == kNever;
                // To the device: a result another device's command replaced (or
                // may have) is not the newest: sending over it loses nothing
                // the program can still see (a stale read of it is judged where
                // it is read).
                bool c = to_device ? g == kWritten && d.ref[b] == host[b] && !written_later_elsewhere(s, dn, b / 4)
                                   : (g == kNever || d.ref[b] != host[b]) && !elsewhere(b);
                all = all && c;
                any = any || c;
            }
            // A word the device never had holds nothing to lose on the host
            // either, as far as the check knows: programs bring back a whole
            // struct or array of which a kernel wrote a part, and read only
            // that part (a read of the rest is a stale host read, where seen).
            if (!to_device && never) any = false;
            if (to_device ? all : any) cand.push_back(j);
        }
    }
    if (cand.empty()) return;
    size_t lo = std::max(cand.front(), off), hi = std::min({cand.back() + 4, off + len, a.size});
    std::vector<char> dev;
    if (!read_device(a, dn, lo, hi - lo, &dev)) return;
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.reported & lost_update) return;
    SyncDevice& d = device_state(s, dn);
    const char* host = a.lib();
    size_t first = SIZE_MAX, last = 0;
    bool written = false;  // a lost byte holds a result of the device's
    for (size_t j : cand)
        for (size_t b = std::max(j, lo); b < std::min(j + 4, hi); ++b)
            if (dev[b - lo] != host[b]) {
                first = std::min(first, j);
                last = std::max(last, std::min(j + 4, hi));
                written = written || (d.given.size() == a.size && d.given[b] == kWritten);
            }
    if (first == SIZE_MAX) return;
    s.reported |= lost_update;
    first = std::max(first, off);
    CLCONTEXT* cp = a.cp.load();
    std::string last_sync = d.last_sync.empty() ? std::string("none") : d.last_sync;
    std::string text;
    if (to_device)
        text = strprintf(
            "sync check: %s to device %u (%s) sends the host's bytes over results a command wrote there that the "
            "host does not have: bytes %zu to %zu of the allocation (a lost update)\n"
            "  allocation: %p, %zu bytes, made at %s\n"
            "  the transfer: %s at %s\n"
            "  last sync with device %u: %s\n"
            "  (no single transfer fixes it: send only the bytes the host changed, or bring device %u's results "
            "back before the host changes them)",
            call, dn, device_name(cp, dn), first, last - 1, (void*)a.host, a.size, s.where.c_str(), call,
            code_at(caller).c_str(), dn, last_sync.c_str(), dn);
    else
        text = strprintf(
            "sync check: %s from device %u (%s) overwrites host changes nobody read: the host changed bytes %zu to "
            "%zu of the allocation after device %u's copy of them was last given a value, and the device's copy "
            "does not have them (a lost update)\n"
            "  allocation: %p, %zu bytes, made at %s\n"
            "  the transfer back: %s at %s\n"
            "  last sync with device %u: %s\n"
            "%s",
            call, dn, device_name(cp, dn), first, last - 1, dn, (void*)a.host, a.size, s.where.c_str(), call,
            code_at(caller).c_str(), dn, last_sync.c_str(),
            written ? "  (no single transfer fixes it: the device's results and the host's changes share these bytes)"
                    : (first == 0 && last == a.size
                           ? strprintf("  fix: clmsync(cp, %u, ptr, CL_MEM_DEVICE) after the host's change and "
                                       "before this transfer",
                                       dn)
                           : strprintf("  fix: clmsyncn(cp, %u, (char*)ptr + %zu, %zu, CL_MEM_DEVICE) after the "
                                       "host's change and before this transfer",
                                       dn, first, last - first))
                          .c_str());
    report(text, call, true);
}

}  // namespace

void sync_check_transfer(Allocation& a, unsigned devnum, size_t off, size_t len, bool to_device, const char* call,
                         void* caller)
{
    judge_pending(call, true);
    SyncState* s = a.sync.get();
    // An upload over what a command the check does not see wrote is a lost
    // update by the word (lost_bytes), once the look has found those words.
    if (s && a.handed_out.load(std::memory_order_relaxed)) sync_refresh_unseen(a, devnum);
    if (s) transfer_race(a, *s, devnum, off, len, to_device, call, caller);
    if (!s) return;
    if (!to_device) {
        // The transfer back is about to write the host's bytes (through the
        // library's view, which no fault sees): no seal vouches for them now.
        std::lock_guard<std::mutex> lock(s->mu);
        unseal(a, *s, off, len);
    }
    // Memory the program has a device object of may be written by commands not
    // seen here: its host bytes changing is no sign of a host write.
    if (!to_device && a.handed_out.load(std::memory_order_relaxed) && !a.announced.load()) {
        sync_note_unchecked(a, call, caller);
        return;
    }
    lost_bytes(a, *s, devnum, off, len, to_device, call, caller);
}

bool sync_transfer_unneeded(Allocation& a, unsigned devnum, size_t off, size_t len)
{
    SyncState* s = a.sync.get();
    if (!s) return false;
    std::lock_guard<std::mutex> lock(s->mu);
    if (s->unattributed || devnum >= s->dev.size()) return false;
    for (const SyncRange& r : s->dev[devnum].known)
        if (r.off <= off && off + len <= r.off + r.len) return hash_bytes(a.lib() + r.off, r.len) == r.hash;
    return false;
}

namespace {

// The allocations with pending commands noted (sync_note_pending).
std::mutex& pending_mu()
{
    static auto* mu = new std::mutex;
    return *mu;
}
std::vector<Allocation*>& pending_allocs()
{
    static auto* v = new std::vector<Allocation*>;
    return *v;
}

// Forgets a's pending commands that are complete (all, with every), and gives
// their pages back (pending_mu held).
void settle(Allocation& a, bool every, int devnum)
{
    SyncState* s = a.sync.get();
    std::lock_guard<std::mutex> lock(s->mu);
    size_t k = 0, first = SIZE_MAX, end = 0;
    std::vector<SyncState::Pending> done;
    for (SyncState::Pending& g : s->pending) {
        cl_int st = CL_COMPLETE;
        if (!every && devnum >= 0 && g.dev != unsigned(devnum))
            st = CL_QUEUED;  // another device's: the call did not wait for it
        else if (!every &&
                 clGetEventInfo(g.ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, nullptr) != CL_SUCCESS)
            st = CL_COMPLETE;
        if (st == CL_COMPLETE || st < 0) {
            clReleaseEvent(g.ev);
            first = std::min(first, g.first);
            end = std::max(end, g.end);
            if (g.host_written && g.transfer) {
                // A transfer back done: the host's bytes there are the device's,
                // as after a waited one.
                if (st == CL_COMPLETE && g.dev < s->dev.size() && g.off + g.len <= a.size && a.host) {
                    SyncDevice& d = s->dev[g.dev];
                    d.known.push_back(SyncRange{g.off, g.len, hash_bytes(a.lib() + g.off, g.len)});
                    mark_given(a, d, g.off, g.len, kSent);
                    seen_brought_back(a, d, g.off, g.len);
                    note_pages_synced(a, *s, d, g.off, g.len, false, true);
                }
                if (s->backs_pending && --s->backs_pending == 0 && !s->unattributed_other) s->unattributed = false;
            }
        } else {
            if (&s->pending[k] != &g) s->pending[k] = std::move(g);  // not onto itself: that would empty `what`
            ++k;
        }
    }
    s->pending.resize(k);
    if (end) apply_access(a, *s, first, end);
}

}  // namespace

void sync_note_pending(Allocation& a, unsigned devnum, size_t off, size_t len, bool host_written, bool transfer,
                       cl_event ev, std::string what, void* site)
{
    SyncState* s = a.sync.get();
    if (!s || s->legit.empty() || !ev || len == 0) return;
    std::lock_guard<std::mutex> plock(pending_mu());
    std::vector<Allocation*>& all = pending_allocs();
    if (std::find(all.begin(), all.end(), &a) == all.end()) all.push_back(&a);
    if (clRetainEvent(ev) != CL_SUCCESS) return;
    std::lock_guard<std::mutex> lock(s->mu);
    size_t first, end;
    pages_touched(a, *s, off, len, &first, &end);
    s->pending.push_back(
        SyncState::Pending{ev, first, end, off, len, host_written, transfer, devnum, std::move(what), site});
    apply_access(a, *s, first, end);
}

void sync_settle(const char* call, int devnum)
{
    judge_pending(call, true);  // an access recorded while the commands were pending
    std::lock_guard<std::mutex> plock(pending_mu());
    std::vector<Allocation*>& all = pending_allocs();
    size_t k = 0;
    for (Allocation* a : all) {
        settle(*a, false, devnum);
        std::lock_guard<std::mutex> lock(a->sync->mu);
        if (!a->sync->pending.empty()) all[k++] = a;
    }
    all.resize(k);
}

void sync_note_free(Allocation& a)
{
    std::lock_guard<std::mutex> lock(judge_mu());
    for (const WatchFault& f : watch_take()) judge(f, "clfree", false);
    {
        std::lock_guard<std::mutex> plock(pending_mu());
        std::vector<Allocation*>& all = pending_allocs();
        all.erase(std::remove(all.begin(), all.end(), &a), all.end());
        if (a.sync) settle(a, true, -1);  // clfree waited for every command on it
    }
    watch_remove(a.watch);
    a.watch = -1;
}

void sync_note_transfer(Allocation& a, unsigned devnum, size_t off, size_t len, bool to_device, bool waited,
                        const char* call, void* caller)
{
    SyncState* s = a.sync.get();
    if (!s || !a.host) return;
    std::lock_guard<std::mutex> lock(s->mu);
    if (!to_device) unseal(a, *s, off, len);  // the library wrote the host's bytes there
    SyncDevice& d = device_state(*s, devnum);
    forget(d, off, len);
    bool whole = off == 0 && len == a.size;
    if ((!to_device && waited) || (to_device && whole && s->unattributed))
        s->unattributed = s->unattributed_other = false;
    if (!to_device && !waited) {
        s->unattributed = true;
        ++s->backs_pending;
    }
    // Sent: the host bytes now are what the device gets.  Brought back and
    // complete: the host bytes are the device's.  A NOWAIT transfer back is not
    // complete yet: its bytes stay unknown.
    if (to_device || waited) {
        d.known.push_back(SyncRange{off, len, hash_bytes(a.lib() + off, len)});
        mark_given(a, d, off, len, kSent);
    }
    if (to_device) image_note(a, *s, d, off, len, true);
    if (!to_device && waited) seen_brought_back(a, d, off, len);
    note_pages_synced(a, *s, d, off, len, to_device, waited);
    d.last_sync = strprintf("%s %s device %u at %s", call, to_device ? "to" : "from", devnum, code_at(caller).c_str());
}

void sync_note_device_write(Allocation& a, unsigned devnum, size_t from, std::string writer, size_t len, bool maybe)
{
    SyncState* s = a.sync.get();
    if (!s) return;
    len = std::min(len, a.size - from);
    std::lock_guard<std::mutex> lock(s->mu);
    SyncDevice& d = device_state(*s, devnum);
    forget(d, from, len);
    mark_given(a, d, from, len, kWritten, 0, maybe);
    image_note(a, *s, d, from, len, false);
    note_pages_written(a, *s, d, devnum, from, len, std::move(writer));
}

void sync_refresh_unseen(Allocation& a, unsigned devnum)
{
    SyncState* s = a.sync.get();
    CLCONTEXT* cp = a.cp.load();
    if (!s || !a.host || a.dead || !a.handed_out.load(std::memory_order_relaxed) || !cp ||
        devnum >= cp->devs.size())
        return;
    cl_mem m = nullptr;
    {
        std::lock_guard<std::mutex> lock(a.mu);
        if (devnum < a.mem.size()) m = a.mem[devnum];
    }
    if (!m || a.size == 0) return;
    Device& dev = cp->devs[devnum];
    std::vector<char> copy(a.size);
    if (dev.xfer != dev.queue) clFinish(dev.xfer);
    if (clFinish(dev.queue) != CL_SUCCESS ||
        clEnqueueReadBuffer(dev.queue, m, CL_TRUE, 0, a.size, copy.data(), 0, nullptr, nullptr) != CL_SUCCESS)
        return;
    std::lock_guard<std::mutex> lock(s->mu);
    SyncDevice& d = device_state(*s, devnum);
    size_t n = image_units(*s);
    std::vector<std::uint64_t> now(n, 0);
    for (size_t u = 0; u < n; ++u) {
        size_t uo, ul;
        image_span(a, *s, u, &uo, &ul);
        if (ul) now[u] = hash_bytes(copy.data() + uo, ul);
    }
    if (d.image.size() == n) {
        size_t lo = SIZE_MAX, hi = 0;
        for (size_t u = 0; u < n; ++u) {
            if (!d.image[u] || now[u] == d.image[u]) continue;
            size_t uo, ul;
            image_span(a, *s, u, &uo, &ul);
            forget(d, uo, ul);
            // By the word: one the command changed is the device's newest where
            // the host left it as it was at the last look (the program takes
            // stdcl_mem's object before it enqueues), the host's where it
            // changed it since.
            bool any = false;
            for (size_t w = uo; w < uo + ul; w += 4) {
                size_t wl = std::min<size_t>(4, uo + ul - w);
                if (d.seen_known.size() != a.size || !d.seen_known[w] ||
                    std::memcmp(d.seen_dev.data() + w, copy.data() + w, wl) == 0)
                    continue;
                if (std::memcmp(d.seen_host.data() + w, a.lib() + w, wl) != 0) continue;
                mark_given(a, d, w, wl, kWritten, d.look_epoch + 1);
                any = true;
            }
            if (!any) continue;
            lo = std::min(lo, uo);
            hi = std::max(hi, uo + ul);
            if (!s->legit.empty()) {
                size_pages(*s, d);
                d.pages[u] = d.image[u];  // what it held before: a host read of the change is judged against it
                if (!dirty_anywhere(*s, u)) s->legit[u] = page_hash(a, *s, u);
                d.dirty[u] = 1;
            }
        }
        if (hi) {
            d.writer = strprintf("a command the check does not see (on the device object stdcl_mem handed out, not "
                                 "announced with clforeign_begin)");
            d.from = lo;
            if (!s->legit.empty()) {
                size_t first, end;
                pages_touched(a, *s, lo, hi - lo, &first, &end);
                apply_access(a, *s, first, end);
            }
        }
    }
    d.look_epoch = sync_clock().load();
    d.image = std::move(now);
    d.seen_dev = std::move(copy);
    d.seen_host.assign(a.lib(), a.lib() + a.size);
    d.seen_known.assign(a.size, 1);
}

}  // namespace stdcl
