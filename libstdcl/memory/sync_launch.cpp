// SPDX-License-Identifier: MIT
// sync_launch.cpp: the sync check at a launch and at a foreign command: an
// argument or a use whose device copy was never sent or is older than the
// host's, and what the command may write (sync_check.hpp).
#include "memory/sync_check.hpp"
#include "memory/sync_state.hpp"

#include "helpers/diag.hpp"
#include "memory/watch.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>

namespace stdcl {

using namespace sync;

void sync_note_pending_launch(CLCONTEXT* cp, unsigned devnum, const KernelInfo& ki, cl_event ev, const char* call,
                              void* caller)
{
    std::string site;
    for (cl_uint i = 0; i < ki.nargs; ++i) {
        const KernelArg& arg = ki.args[i];
        if (arg.kind != KernelArg::global || !arg.alloc || !arg.alloc->sync || arg.alloc->dead) continue;
        Allocation& a = *arg.alloc;
        bool reads_only = (a.flags & CL_MEM_RO) || ki.read_only_arg(i);
        if (!reads_only || (a.flags & CL_MEM_WO)) continue;  // one it may write is protected whole already
        if (site.empty()) site = code_at(caller);
        sync_note_pending(a, devnum, arg.offset, a.size - arg.offset, false, false, ev,
                          strprintf("kernel '%s' on device %u (%s, argument %u, launched with CL_EVENT_NOWAIT by %s at "
                                    "%s)",
                                    ki.name.c_str(), devnum, cp->devs[devnum].name.c_str(), i, call, site.c_str()), caller);
    }
}

namespace {

// Bytes [from, end) of a on device devnum (s, d: its state, locked), by 4-byte
// words of the allocation (an element changes whole, and a run names whole
// words): the runs of words whose copy there may be older than the newest,
// in *spans, and where the newest is, in *src (-1: the host's, which the
// device never got or got before the host changed it; k: device k's, which a
// command there wrote, and which neither the host nor this device has had
// since).  The kind (stale before never_sent), what *finding says of the
// first run, and the call that sends what is missing (*fix; empty where no
// single call does: runs apart around the device's own results, or bytes
// another device holds).  0 when there are none.
unsigned suspect_spans(const Allocation& a, const SyncState& s, const SyncDevice& d, unsigned devnum, size_t from,
                       size_t end, std::vector<std::pair<size_t, size_t>>* spans, std::string* finding,
                       std::string* fix, std::vector<int>* src = nullptr)
{
    end = std::min(end, a.size);
    if (from >= end) return 0;
    bool sized = d.given.size() == a.size;
    // Memory the host never changed: nothing on a device can be older.
    if (!sized && hash_bytes(a.lib(), a.size) == s.born) return 0;
    const char* host = a.lib();
    const size_t w0 = from / 4 * 4, nw = (end - w0 + 3) / 4;
    // Per word: -3 right, -2 never given, -1 the host's is newer, k device k's
    // (made at the first word that is not right: most launches find none).
    std::vector<signed char> at;
    auto mark = [&](size_t x, signed char v) {
        if (at.empty()) at.assign(nw, -3);
        at[x] = v;
    };
    // Memory stdcl_mem handed out, no command on it announced: a plain command
    // may have written a word with the value it held, which no look tells
    // from a word never given: those are no suspects (stdcl(7)).
    const bool unseen_writes = a.handed_out.load(std::memory_order_relaxed) && !a.announced.load();
    // Watched memory with every byte given: whole pages whose host bytes the
    // seals say are unchanged since they were last found equal are not read
    // (a fault not yet judged would have opened one: then every page is).
    const bool paged = sized && d.nevers == 0 && !unseen_writes && !s.legit.empty() &&
                       d.match.size() == s.legit.size() && s.sealed.size() == s.legit.size();
    const bool trust_seals = paged && !watch_pending();
    size_t skipped = 0;
    for (size_t x = 0; x < nw; ++x) {
        size_t w = w0 + 4 * x;
        // The common case, a page the seals vouch for, or 64 KiB and then 256
        // bytes at a time (not past the page's end) where the copy is right.
        auto right = [&](size_t n) {
            return std::memcmp(d.ref.data() + w, host + w, n) == 0 &&
                   (d.nevers == 0 || std::memchr(d.given.data() + w, kNever, n) == nullptr);
        };
        for (bool moved = sized; moved && x < nw;) {
            moved = false;
            size_t lim = end;
            if (paged) {
                size_t P = (s.lead + w) / s.ps, po, pl;
                page_span(a, s, P, &po, &pl);
                if (trust_seals && w == po && po + pl <= end && pl % 4 == 0 && pl && host_matches(s, d, P)) {
                    x += pl / 4;
                    w += pl;
                    skipped += pl;
                    moved = true;
                    continue;
                }
                lim = std::min(end, po + pl);
            }
            while (w >= from && w + 65536 <= lim && right(65536)) {
                x += 16384;
                w += 65536;
                moved = true;
            }
            while (w >= from && w + 256 <= lim && right(256)) {
                x += 64;
                w += 256;
                moved = true;
            }
            moved = moved && paged && w == lim && lim < end;
        }
        if (x >= nw) break;
        if (sized && w >= from && w + 4 <= end && std::memcmp(d.ref.data() + w, host + w, 4) == 0 &&
            d.given[w] && d.given[w + 1] && d.given[w + 2] && d.given[w + 3])
            continue;
        for (size_t j = std::max(w, from); j < std::min(w + 4, end); ++j) {
            if (!sized || !d.given[j]) {
                if (!unseen_writes) mark(x, -2);
                break;
            }
            if (d.ref[j] != host[j]) mark(x, -1);
        }
    }
    // The pages wholly in [from, end) where every word is right: ref equals
    // the host's bytes there now (SyncDevice::match).
    if (paged && skipped < end - from) {
        const std::uint64_t now = next_seal();
        size_t P0 = (s.lead + from + s.ps - 1) / s.ps;
        if (from == 0) P0 = s.lead / s.ps;
        for (size_t P = P0; P < s.legit.size(); ++P) {
            size_t po, pl;
            page_span(a, s, P, &po, &pl);
            if (po < from || po + pl > end || pl == 0) {
                if (po >= end) break;
                continue;
            }
            bool ok = true;
            for (size_t q = (po - w0) / 4; ok && !at.empty() && q < (po + pl - w0 + 3) / 4 && q < nw; ++q)
                ok = at[q] == -3;
            if (ok) d.match[P] = now;
        }
    }
    // Words another device wrote that nobody has had since: the host's bytes
    // are as they were then, and this device did not write them itself.
    for (unsigned k = 0; k < s.dev.size() && k < 127; ++k) {
        const SyncDevice& o = s.dev[k];
        if (k == devnum || o.given.size() != a.size) continue;
        if (std::find(o.given.begin(), o.given.end(), char(kWritten)) == o.given.end()) continue;
        for (size_t x = 0; x < nw; ++x) {
            size_t w = w0 + 4 * x;
            // 256 bytes at a time where that device wrote none of them.
            while (w + 256 <= a.size && std::memchr(o.given.data() + w, kWritten, 256) == nullptr) {
                x += 64;
                w += 256;
            }
            if (x >= nw) break;
            // That device's write came after this copy was last given a value:
            // else the host's bytes sent here may be newer, written again with
            // the same value.
            if (sized && o.epoch_wrote[w / 4] <= d.epoch_given[w / 4]) continue;
            bool theirs = true, mine = sized;
            for (size_t j = w; j < std::min(w + 4, a.size); ++j) {
                theirs = theirs && o.given[j] == kWritten && o.ref[j] == host[j];
                mine = mine && d.given[j] == kWritten;
            }
            if (theirs && !mine) mark(x, (signed char)k);
        }
    }
    if (at.empty()) return 0;
    unsigned kind = 0;
    size_t first_gap = SIZE_MAX;
    int src0 = -1;
    for (size_t x = 0; x < nw;) {
        if (at[x] == -3) {
            ++x;
            continue;
        }
        int from_dev = at[x] >= 0 ? at[x] : -1;
        size_t lo = std::max(w0 + 4 * x, from);
        while (x < nw && at[x] != -3 && (at[x] >= 0 ? at[x] : -1) == from_dev) {
            if (at[x] == -2)
                first_gap = std::min(first_gap, std::max(w0 + 4 * x, from));
            else
                kind = stale;
            ++x;
        }
        if (spans->empty()) src0 = from_dev;
        spans->emplace_back(lo, std::min(w0 + 4 * x, end) - lo);
        if (src) src->push_back(from_dev);
    }
    if (spans->empty()) return 0;
    if (!kind) kind = never_sent;
    const auto& r0 = spans->front();
    const auto& rl = spans->back();
    bool elsewhere = false;
    for (size_t x = 0; x < nw; ++x) elsewhere = elsewhere || at[x] >= 0;
    if (src0 >= 0) {
        *finding = strprintf("whose copy on device %u is older than device %d's: a command there wrote bytes %zu to %zu "
                             "of the allocation, and no clmsync(..., CL_MEM_HOST) from device %d brought them back "
                             "to be sent here",
                             devnum, src0, r0.first, r0.first + r0.second - 1, src0);
    } else if (kind == stale) {
        *finding = strprintf("whose copy on device %u is older than the host's: the host changed bytes %zu to %zu of "
                             "the allocation after device %u's copy of them was last given a value",
                             devnum, r0.first, r0.first + r0.second - 1, devnum);
    } else {
        *finding = strprintf("which was never sent to device %u: the host wrote the allocation, but no "
                             "clmsync(..., CL_MEM_DEVICE) to device %u and no kernel there gave bytes %zu to %zu of "
                             "that device's copy a value",
                             devnum, devnum, first_gap, rl.first + rl.second - 1);
    }
    // One call sends exactly what is missing: the run, or all of it.  Runs
    // apart hold the device's own bytes between them, which one transfer of
    // all would overwrite, unless the device was never given any; bytes
    // another device holds come back from it first.
    bool none_given = !sized || std::all_of(d.given.begin(), d.given.end(), [](char g) { return g == kNever; });
    if (elsewhere)
        fix->clear();
    else if (none_given)
        *fix = strprintf("clmsync(cp, %u, ptr, CL_MEM_DEVICE), or clmsyncn(cp, %u, ..., CL_MEM_DEVICE) of the part "
                         "device %u reads,",
                         devnum, devnum, devnum);
    else if (spans->size() == 1 && r0.first == 0 && r0.second == a.size)
        *fix = strprintf("clmsync(cp, %u, ptr, CL_MEM_DEVICE)", devnum);
    else if (spans->size() == 1)
        *fix = strprintf("clmsyncn(cp, %u, (char*)ptr + %zu, %zu, CL_MEM_DEVICE)", devnum, r0.first, r0.second);
    else
        fix->clear();
    return kind;
}

}  // namespace

void sync_check_command_read(CLCONTEXT* cp, unsigned devnum, Allocation& a, size_t from, size_t len,
                             const std::string& who, const std::string& what, const std::string& by,
                             const char* call, void* caller)
{
    judge_pending(call, true);
    SyncState* s = a.sync.get();
    if (!s || !a.host) return;
    sync_refresh_unseen(a, devnum);
    std::string finding, fix;
    std::vector<std::pair<size_t, size_t>> spans;
    std::vector<int> src;
    unsigned kind;
    {
        std::lock_guard<std::mutex> lock(s->mu);
        SyncDevice& d = device_state(*s, devnum);
        kind = s->unattributed ? 0
                               : suspect_spans(a, *s, d, devnum, from, len == SIZE_MAX ? a.size : from + len, &spans,
                                               &finding, &fix, &src);
        if (!kind || ((s->reported & kind) && action() == 0)) return;
    }
    // A command that cannot be run again: a run another device holds newer, or
    // one the host changed, counts only where the device's bytes differ from
    // those; a copy never given a value counts as it is.
    bool differs = kind == never_sent;
    std::vector<char> mine, newest;
    for (size_t k = 0; k < spans.size() && !differs; ++k) {
        size_t lo = spans[k].first, n = spans[k].second;
        if (!read_device(a, devnum, lo, n, &mine)) return;
        if (src[k] < 0)
            differs = kind == stale && std::memcmp(mine.data(), a.lib() + lo, n) != 0;
        else
            differs = read_device(a, unsigned(src[k]), lo, n, &newest) && mine != newest;
    }
    if (!differs) return;
    std::lock_guard<std::mutex> lock(s->mu);
    SyncDevice& d = device_state(*s, devnum);
    s->reported |= kind;
    std::string last = d.last_sync.empty() ? std::string("none") : d.last_sync;
    report(strprintf("sync check: %s on device %u (%s) reads %s %s\n"
                     "  allocation: %p, %zu bytes, made at %s; the command sees it from byte %zu\n"
                     "  %s %s at %s\n"
                     "  last sync with device %u: %s\n"
                     "%s",
                     who.c_str(), devnum, cp->devs[devnum].name.c_str(), what.c_str(), finding.c_str(),
                     (void*)a.host, a.size, s->where.c_str(), from, by.c_str(), call, code_at(caller).c_str(), devnum,
                     last.c_str(),
                     fix.empty() ? "  (no single transfer fixes it: send each run of bytes the device lacks, as clmsyncn, not the "
                                   "whole allocation: the device's own results lie between them)"
                                 : strprintf("  fix: %s after the host's last write to it and before %s", fix.c_str(),
                                             call)
                                       .c_str()),
           call, true);
}

void sync_check_foreign_read(CLCONTEXT* cp, unsigned devnum, Allocation& a, size_t from, size_t len, size_t use,
                             const char* call, void* caller)
{
    sync_check_command_read(cp, devnum, a, from, len, "a foreign command", strprintf("uses[%zu]", use),
                            "announced by", call, caller);
}

void sync_note_foreign_write(CLCONTEXT* cp, unsigned devnum, Allocation& a, size_t from, size_t len,
                             const char* call, void* caller)
{
    if (!a.sync) return;
    sync_note_device_write(a, devnum, from,
                           strprintf("a foreign command (announced by %s at %s)", call, code_at(caller).c_str()), len,
                           true);
    if (a.zero_copy_on(cp->devs[devnum])) {
        std::lock_guard<std::mutex> lock(a.sync->mu);
        a.sync->unattributed = true;
        a.sync->unattributed_other = true;
    }
}

void sync_note_unchecked(Allocation& a, const char* call, void* caller)
{
    SyncState* s = a.sync.get();
    if (!s) return;
    std::lock_guard<std::mutex> lock(s->mu);
    if (s->reported & unchecked) return;
    s->reported |= unchecked;
    std::fprintf(stderr,
                 "stdcl: sync check: note: the allocation at %p (%zu bytes, made at %s) is not checked for lost "
                 "updates (%s at %s): stdcl_mem handed out a device object of it, and no foreign command on it was "
                 "announced; announce them with clforeign_begin and clforeign_end, and it is checked\n",
                 (void*)a.host, a.size, s->where.c_str(), call, code_at(caller).c_str());
    std::fflush(stderr);
}

void sync_check_launch(CLCONTEXT* cp, unsigned devnum, const KernelInfo& ki, const char* call, void* caller,
                       std::vector<SyncSuspect>* suspects)
{
    (void)cp;
    judge_pending(call, true);
    struct Write {
        Allocation* a;
        size_t from;
        unsigned arg;
    };
    std::vector<Write> writes;
    for (cl_uint i = 0; i < ki.nargs; ++i) {
        const KernelArg& arg = ki.args[i];
        if (arg.kind != KernelArg::global || !arg.alloc) continue;
        Allocation& a = *arg.alloc;
        SyncState* s = a.sync.get();
        if (!s || !a.host || a.dead) continue;  // freed: the launch fails below
        sync_refresh_unseen(a, devnum);
        bool may_write = !(a.flags & CL_MEM_RO) && !ki.read_only_arg(i);
        bool may_read = !(a.flags & CL_MEM_WO);
        SyncSuspect sus{i, {}, {}, 0, {}, {}};
        bool learn = false;  // judge nothing, but see which words the kernel writes
        if (may_read) {
            std::lock_guard<std::mutex> lock(s->mu);
            SyncDevice& d = device_state(*s, devnum);
            if (!s->unattributed)
                sus.kind = suspect_spans(a, *s, d, devnum, arg.offset, a.size, &sus.spans, &sus.finding, &sus.fix,
                                         &sus.src);
            else
                learn = may_write;  // host bytes a transfer back may still change: not judged now
        }
        if (may_write && !sus.kind && !learn) {
            // Words this device never had: the kernel's results there are
            // seen by the word (its whole view is no guess of what it writes).
            std::lock_guard<std::mutex> lock(s->mu);
            const SyncDevice& d = device_state(*s, devnum);
            learn = d.given.size() != a.size ||
                    (d.nevers != 0 && std::memchr(d.given.data() + arg.offset, kNever, a.size - arg.offset) != nullptr);
        }
        if ((sus.kind || learn) && suspects) {
            suspects->push_back(std::move(sus));
            if (may_write) continue;  // noted by the probe, which sees the bytes the kernel writes
        }
        if (may_write) writes.push_back(Write{&a, arg.offset, i});
    }
    std::string site = code_at(caller);
    for (const Write& w : writes) {
        std::string type =
            w.arg < ki.type_names.size() && !ki.type_names[w.arg].empty() ? ki.type_names[w.arg] : "__global";
        sync_note_device_write(*w.a, devnum, w.from,
                               strprintf("kernel '%s' (argument %u, %s, launched by %s at %s)", ki.name.c_str(), w.arg,
                                         type.c_str(), call, site.c_str()),
                               SIZE_MAX, true);
    }
}

namespace {

// A view of a kernel argument on the device: its object and the bytes the
// kernel sees, as they were before the probe.
struct ProbeView {
    unsigned arg;
    size_t offset;  // of the view in the allocation
    cl_mem m;
    size_t len;
    bool written;  // the kernel may write it
    std::vector<char> before;
};

bool read_view(cl_command_queue q, const ProbeView& v, char* to)
{
    return clEnqueueReadBuffer(q, v.m, CL_TRUE, 0, v.len, to, 0, nullptr, nullptr) == CL_SUCCESS;
}

bool write_view(cl_command_queue q, const ProbeView& v, const char* from)
{
    return clEnqueueWriteBuffer(q, v.m, CL_TRUE, 0, v.len, from, 0, nullptr, nullptr) == CL_SUCCESS;
}

// Runs the kernel once from the state `before`, with view `patched` (or none:
// -1) holding `bytes` instead, and returns what it left in the written views;
// false when a step failed (then nothing is judged).
bool probe_run(cl_command_queue q, std::vector<ProbeView>& views, const std::function<cl_int()>& run, int patched,
               const std::vector<char>* bytes, std::vector<std::vector<char>>* out)
{
    // The patch last: views of one allocation share its device object.
    for (const ProbeView& v : views)
        if (!write_view(q, v, v.before.data())) return false;
    if (patched >= 0 && !write_view(q, views[size_t(patched)], bytes->data())) return false;
    if (run() != CL_SUCCESS || clFinish(q) != CL_SUCCESS) return false;
    out->clear();
    for (const ProbeView& v : views) {
        out->emplace_back(v.written ? v.len : 0);
        if (v.written && !read_view(q, v, out->back().data())) return false;
    }
    return true;
}

// Runs of bytes where x and y differ, [first, end) pairs; runs closer than
// `join` bytes are one, and at most 64 are kept (the last grows to the end).
std::vector<std::pair<size_t, size_t>> differing(const std::vector<char>& x, const std::vector<char>& y, size_t join)
{
    std::vector<std::pair<size_t, size_t>> runs;
    for (size_t i = 0; i < x.size(); ++i) {
        if (x[i] == y[i]) continue;
        if (!runs.empty() && i <= runs.back().second + join)
            runs.back().second = i + 1;
        else if (runs.size() == 64)
            runs.back().second = i + 1;
        else
            runs.emplace_back(i, i + 1);
    }
    return runs;
}

}  // namespace

void sync_probe_launch(CLCONTEXT* cp, unsigned devnum, const KernelInfo& ki, const std::vector<SyncSuspect>& suspects,
                       const std::function<cl_mem(unsigned)>& mem_of, const std::function<cl_int()>& run,
                       const char* call, void* caller)
{
    Device& dev = cp->devs[devnum];
    cl_command_queue q = dev.queue;
    if (dev.xfer != dev.queue) clFinish(dev.xfer);
    clFinish(q);
    std::vector<ProbeView> views;
    std::vector<int> view_of(ki.nargs, -1);
    for (cl_uint i = 0; i < ki.nargs; ++i) {
        const KernelArg& arg = ki.args[i];
        if (arg.kind != KernelArg::global || !arg.alloc || arg.alloc->dead) continue;
        const Allocation& a = *arg.alloc;
        bool written = !(a.flags & CL_MEM_RO) && !ki.read_only_arg(i);
        bool suspect = false;
        for (const SyncSuspect& u : suspects) suspect = suspect || u.arg == i;
        if (!written && !suspect) continue;
        cl_mem m = mem_of(i);
        if (!m || a.size <= arg.offset) continue;
        views.push_back(ProbeView{i, arg.offset, m, a.size - arg.offset, written, std::vector<char>(a.size - arg.offset)});
        if (!read_view(q, views.back(), views.back().before.data())) return;
        view_of[i] = int(views.size() - 1);
    }
    // Each suspect's view with its suspect bytes replaced by the host's; where
    // that changes nothing (the device holds the host's bytes), no suspect.
    struct Patch {
        const SyncSuspect* s;
        int view;
        std::vector<char> bytes;
        size_t lo, hi;  // the words the patch changes, in the allocation
    };
    std::vector<Patch> patches;
    bool learn = false;  // an argument whose written words are to be seen, not judged
    for (const SyncSuspect& u : suspects) {
        int vi = view_of[u.arg];
        learn = learn || (!u.kind && vi >= 0);
        if (vi < 0 || !u.kind) continue;
        const ProbeView& v = views[size_t(vi)];
        const Allocation& a = *ki.args[u.arg].alloc;
        std::vector<char> bytes = v.before, theirs;
        for (size_t k = 0; k < u.spans.size(); ++k) {
            const auto& sp = u.spans[k];
            size_t lo = std::max(sp.first, v.offset), hi = std::min(sp.first + sp.second, v.offset + v.len);
            if (lo >= hi) continue;
            int from_dev = k < u.src.size() ? u.src[k] : -1;
            if (from_dev < 0) {
                std::memcpy(bytes.data() + (lo - v.offset), a.lib() + lo, hi - lo);
            } else if (read_device(*ki.args[u.arg].alloc, unsigned(from_dev), lo, hi - lo, &theirs)) {
                std::memcpy(bytes.data() + (lo - v.offset), theirs.data(), hi - lo);
            }
        }
        size_t lo = SIZE_MAX, hi = 0;
        for (size_t i = 0; i < bytes.size(); ++i)
            if (bytes[i] != v.before[i]) {
                lo = std::min(lo, i);
                hi = i + 1;
            }
        if (hi) patches.push_back(Patch{&u, vi, std::move(bytes), (v.offset + lo) / 4 * 4,
                                        std::min(a.size, (v.offset + hi + 3) / 4 * 4)});
    }
    // Twice as it is (a kernel whose results vary from run to run cannot be
    // judged), then once per patched argument.  The kernel depends on the
    // suspect bytes when a result differs from the first run's; in the patched
    // view itself, bytes the kernel left alone (still as before in the first
    // run, still the host's in the patched one) are not results.
    std::vector<std::vector<char>> first, again, p;
    std::vector<const Patch*> reads;
    bool ok = true;
    // Only to learn what the kernel writes, the poisoned run below is enough.
    if (!patches.empty())
        ok = probe_run(q, views, run, -1, nullptr, &first) && probe_run(q, views, run, -1, nullptr, &again) &&
             first == again;
    for (size_t k = 0; ok && k < patches.size(); ++k) {
        const Patch& pa = patches[k];
        ok = probe_run(q, views, run, pa.view, &pa.bytes, &p);
        bool differs = false;
        for (size_t vi = 0; ok && !differs && vi < views.size(); ++vi) {
            if (!views[vi].written) continue;
            const std::vector<char>&f = first[vi], &b = p[vi], &before = views[vi].before;
            // The patched allocation, seen through this view or another.
            const ProbeView& pv = views[size_t(pa.view)];
            bool own = ki.args[views[vi].arg].alloc == ki.args[pv.arg].alloc;
            // By the word (an element changes whole: a result whose changed bytes
            // happen to match is still a result), in the allocation's words.
            size_t off = views[vi].offset;
            for (size_t i0 = 0; i0 < f.size() && !differs;) {
                size_t i1 = std::min(f.size(), (off + i0) / 4 * 4 + 4 - off);
                size_t n = i1 - i0;
                if (std::memcmp(b.data() + i0, f.data() + i0, n) != 0) {
                    size_t at = off + i0;  // in the allocation
                    bool alone = own && at >= pv.offset && at + n <= pv.offset + pv.len &&
                                 std::memcmp(f.data() + i0, before.data() + i0, n) == 0 &&
                                 std::memcmp(b.data() + i0, pa.bytes.data() + (at - pv.offset), n) == 0;
                    differs = !alone;  // a word the kernel left alone in both runs is no result
                }
                i0 = i1;
            }
        }
        if (ok && differs) reads.push_back(&pa);
    }
    // What the kernel writes, by the word: once more with every word of a view
    // it may write that this device never had, or whose host bytes changed
    // since this device's copy was given them, set to the fill pattern, so
    // that a result equal to what was there is seen too (a transfer back then
    // brings a result newer than the host's change, not an older copy).
    std::vector<std::vector<char>> poisoned(views.size()), wrote;
    if (ok && (!patches.empty() || learn)) {
        for (size_t vi = 0; vi < views.size(); ++vi) {
            const ProbeView& v = views[vi];
            if (!v.written) continue;
            poisoned[vi] = v.before;
            Allocation& a = *ki.args[v.arg].alloc;
            SyncState* st = a.sync.get();
            if (!st) continue;
            std::lock_guard<std::mutex> lock(st->mu);
            const SyncDevice& d = device_state(*st, devnum);
            const bool sized = d.given.size() == a.size && d.ref.size() == a.size;
            for (size_t i = 0; i + 4 <= v.len; i += 4)
                if (!sized || d.given[v.offset + i] == kNever ||
                    std::memcmp(d.ref.data() + v.offset + i, a.lib() + v.offset + i, 4) != 0)
                    std::memcpy(poisoned[vi].data() + i, &kFillPattern, 4);
        }
        bool done = true;
        for (size_t vi = 0; vi < views.size() && done; ++vi)
            done = write_view(q, views[vi], views[vi].written ? poisoned[vi].data() : views[vi].before.data());
        done = done && run() == CL_SUCCESS && clFinish(q) == CL_SUCCESS;
        for (size_t vi = 0; vi < views.size() && done; ++vi) {
            wrote.emplace_back(views[vi].written ? views[vi].len : 0);
            if (views[vi].written) done = read_view(q, views[vi], wrote.back().data());
        }
        if (!done) wrote.clear();
    }
    for (const ProbeView& v : views) write_view(q, v, v.before.data());
    clFinish(q);
    if (patches.empty() && learn && trace_on(Trace::mem)) {
        std::string which;
        for (const SyncSuspect& u : suspects)
            if (!u.kind) which += strprintf("%s%u", which.empty() ? "" : ", ", u.arg);
        trace(Trace::mem, "STDCL_CHECK=sync: kernel '%s' on device %u run again to see which words it writes of "
              "argument(s) %s, which this device never had whole", ki.name.c_str(), devnum, which.c_str());
    }
    if (!patches.empty())
        trace(Trace::mem,
              "STDCL_CHECK=sync: kernel '%s' on device %u run %s to see whether it reads %zu argument(s) older than "
              "the host's or never sent: %zu do",
              ki.name.c_str(), devnum, ok ? "more times" : "more times (not judged: a step failed, or its results vary)",
              patches.size(), reads.size());
    // The written arguments with suspects (or to learn): noted as the kernel
    // writes them (the words its first run changed, where it ran; all of its
    // view where not).
    std::string site = code_at(caller);
    for (const SyncSuspect& u : suspects) {
        Allocation& a = *ki.args[u.arg].alloc;
        if ((a.flags & CL_MEM_RO) || ki.read_only_arg(u.arg)) continue;
        std::string type =
            u.arg < ki.type_names.size() && !ki.type_names[u.arg].empty() ? ki.type_names[u.arg] : "__global";
        std::string writer = strprintf("kernel '%s' (argument %u, %s, launched by %s at %s)", ki.name.c_str(), u.arg,
                                       type.c_str(), call, site.c_str());
        int vi = view_of[u.arg];
        if (wrote.empty() || vi < 0) {
            sync_note_device_write(a, devnum, ki.args[u.arg].offset, writer, SIZE_MAX, true);
            continue;
        }
        const ProbeView& v = views[size_t(vi)];
        for (const auto& r : differing(wrote[size_t(vi)], poisoned[size_t(vi)], 64)) {
            // Whole words: a result may keep some bytes of what was there.
            size_t lo = (v.offset + r.first) / 4 * 4, hi = std::min((v.offset + r.second + 3) / 4 * 4, a.size);
            lo = std::max(lo, v.offset);
            sync_note_device_write(a, devnum, lo, writer, hi - lo);
        }
    }
    for (const Patch* pa : reads) {
        const SyncSuspect* u = pa->s;
        unsigned i = u->arg;
        // The bytes named: the first run's, narrowed to the words the patch changed.
        std::string finding = u->finding;
        if (!u->spans.empty()) {
            const auto& r0 = u->spans.front();
            std::string was = strprintf("bytes %zu to %zu", r0.first, r0.first + r0.second - 1);
            size_t at = finding.find(was);
            size_t lo = std::max(pa->lo, r0.first), hi = std::min(pa->hi, r0.first + r0.second);
            if (at != std::string::npos && lo < hi)
                finding.replace(at, was.size(), strprintf("bytes %zu to %zu", lo, hi - 1));
        }
        Allocation& a = *ki.args[i].alloc;
        SyncState* s = a.sync.get();
        if (!s) continue;
        std::string last;
        {
            std::lock_guard<std::mutex> lock(s->mu);
            bool seen = s->reported & u->kind;
            s->reported |= u->kind;
            if (seen && action() == 0) continue;  // reported once per allocation and kind
            SyncDevice& d = device_state(*s, devnum);
            last = d.last_sync.empty() ? std::string("none") : d.last_sync;
        }
        std::string type = i < ki.type_names.size() && !ki.type_names[i].empty() ? ki.type_names[i] : "__global";
        report(strprintf("sync check: kernel '%s' on device %u (%s) reads argument %u (%s) %s, and the kernel's "
                         "results depend on it (run again with the host's bytes there, it wrote other results)\n"
                         "  allocation: %p, %zu bytes, made at %s; the kernel sees it from byte %zu\n"
                         "  launched by %s at %s\n"
                         "  last sync with device %u: %s\n"
                         "%s%s",
                         ki.name.c_str(), devnum, dev.name.c_str(), i, type.c_str(), finding.c_str(),
                         (void*)a.host, a.size, s->where.c_str(), ki.args[i].offset, call, code_at(caller).c_str(),
                         devnum, last.c_str(),
                         u->fix.empty() ? "  (no single transfer fixes it: send each run of bytes the device lacks, as clmsyncn, not the "
                                   "whole allocation: the device's own results lie between them)"
                                        : strprintf("  fix: %s after the host's last write to it and before this launch",
                                                    u->fix.c_str())
                                              .c_str(),
                         ki.qual.empty() ? "\n  (no argument information: every __global argument counts as read and "
                                           "written)"
                                         : ""),
               call, true);
    }
}

}  // namespace stdcl
