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

// A command on device devnum reads a (s, d: its state, locked) from byte from
// on (len bytes, when given): never_sent or stale, with *finding saying why; 0
// when the copy is right.
unsigned read_finding(const Allocation& a, const SyncState& s, const SyncDevice& d, unsigned devnum, size_t from,
                      std::string* finding, size_t len = SIZE_MAX, std::string* fix = nullptr)
{
    if (d.known.empty() && !d.written) {
        if (hash_bytes(a.lib(), a.size) == s.born) return 0;
        *finding = strprintf("which was never sent to device %u: the host wrote the allocation, but no "
                             "clmsync(..., CL_MEM_DEVICE) to device %u and no kernel there gave that "
                             "device's copy a value",
                             devnum, devnum);
        // The device's copy holds nothing the program gave it: the whole
        // allocation may go (or the part the command reads).
        if (fix)
            *fix = strprintf("clmsync(cp, %u, ptr, CL_MEM_DEVICE), or clmsyncn(cp, %u, ..., CL_MEM_DEVICE) of the "
                             "part device %u reads,",
                             devnum, devnum, devnum);
        return never_sent;
    }
    for (const SyncRange& r : d.known) {
        if (r.off + r.len <= from || (r.off >= from && r.off - from >= len)) continue;  // outside its view
        if (hash_bytes(a.lib() + r.off, r.len) == r.hash) continue;
        *finding = strprintf("whose copy on device %u is older than the host's: the host changed bytes "
                             "%zu to %zu of the allocation after they were last synced with device %u",
                             devnum, r.off, r.off + r.len - 1, devnum);
        // Exactly those bytes: the device's copy elsewhere may hold results.
        if (fix)
            *fix = r.off == 0 && r.len == a.size
                       ? strprintf("clmsync(cp, %u, ptr, CL_MEM_DEVICE)", devnum)
                       : strprintf("clmsyncn(cp, %u, (char*)ptr + %zu, %zu, CL_MEM_DEVICE)", devnum, r.off, r.len);
        return stale;
    }
    return 0;
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
    std::lock_guard<std::mutex> lock(s->mu);
    SyncDevice& d = device_state(*s, devnum);
    std::string finding, fix;
    unsigned kind = s->unattributed ? 0 : read_finding(a, *s, d, devnum, from, &finding, len, &fix);
    if (!kind || ((s->reported & kind) && action() == 0)) return;
    s->reported |= kind;
    std::string last = d.last_sync.empty() ? std::string("none") : d.last_sync;
    report(strprintf("sync check: %s on device %u (%s) reads %s %s\n"
                     "  allocation: %p, %zu bytes, made at %s; the command sees it from byte %zu\n"
                     "  %s %s at %s\n"
                     "  last sync with device %u: %s\n"
                     "  fix: %s after the host's last write to it and before %s",
                     who.c_str(), devnum, cp->devs[devnum].name.c_str(), what.c_str(), finding.c_str(),
                     (void*)a.host, a.size, s->where.c_str(), from, by.c_str(), call, code_at(caller).c_str(), devnum,
                     last.c_str(), fix.c_str(), call),
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
                           strprintf("a foreign command (announced by %s at %s)", call, code_at(caller).c_str()), len);
    if (a.zero_copy_on(cp->devs[devnum])) {
        std::lock_guard<std::mutex> lock(a.sync->mu);
        a.sync->unattributed = true;
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

namespace {

// How many launches may be run again for one allocation on one device: a
// kernel that writes part of a never-sent argument and reads none of it is
// looked at again at its next launch (which may read it), this many times.
constexpr unsigned kMaxProbes = 8;

}  // namespace

void sync_check_launch(CLCONTEXT* cp, unsigned devnum, const KernelInfo& ki, const char* call, void* caller,
                       std::vector<unsigned>* unsent)
{
    judge_pending(call, true);
    const bool described = !ki.qual.empty();
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
        bool is_const = ki.read_only_arg(i);
        bool may_write = !(a.flags & CL_MEM_RO) && !is_const;
        bool may_read = !(a.flags & CL_MEM_WO);
        if (may_write) writes.push_back(Write{&a, arg.offset, i});
        if (!may_read) continue;
        std::string finding;
        unsigned kind = 0;
        size_t from = arg.offset;
        {
            std::lock_guard<std::mutex> lock(s->mu);
            SyncDevice& d = device_state(*s, devnum);
            if (s->unattributed) continue;
            // Kernels often only write an argument they may write: whether they read
            // it is not known.  A copy never sent is reported only for one they
            // cannot write (const, __constant, CL_MEM_RO); a stale copy of one they
            // may write, unless its host bytes hold at most two values (an output
            // the host initialised again).
            if (!is_const && d.known.empty()) {
                // Never sent, and the kernel may write it: whether it reads it
                // is for the probe to find out (sync_probe_launch), once.
                if (unsent && !d.written && !(s->reported & never_sent) && d.probes < kMaxProbes && a.size > from &&
                    hash_bytes(a.lib(), a.size) != s->born)
                    unsent->push_back(i);
                continue;
            }
            if (!is_const && output_like(a.lib() + from, a.size - from)) continue;
            std::string fix;
            kind = read_finding(a, *s, d, devnum, from, &finding, SIZE_MAX, &fix);
            if (!kind) continue;
            std::string last = d.last_sync.empty() ? std::string("none") : d.last_sync;
            bool first = !(s->reported & kind);
            s->reported |= kind;
            if (!first && action() == 0) continue;  // reported once per allocation and kind
            std::string type = i < ki.type_names.size() && !ki.type_names[i].empty() ? ki.type_names[i] : "__global";
            std::string text = strprintf(
                "sync check: kernel '%s' on device %u (%s) reads argument %u (%s) %s\n"
                "  allocation: %p, %zu bytes, made at %s; the kernel sees it from byte %zu\n"
                "  launched by %s at %s\n"
                "  last sync with device %u: %s\n"
                "  fix: %s after the host's last write to it and before this launch"
                "%s%s",
                ki.name.c_str(), devnum, cp->devs[devnum].name.c_str(), i, type.c_str(), finding.c_str(), (void*)a.host,
                a.size, s->where.c_str(), from, call, code_at(caller).c_str(), devnum, last.c_str(), fix.c_str(), "",
                described ? "" : "\n  (no argument information: every __global argument counts as read and written)");
            report(text, call, true);
        }
    }
    std::string site = code_at(caller);
    for (const Write& w : writes) {
        std::string type =
            w.arg < ki.type_names.size() && !ki.type_names[w.arg].empty() ? ki.type_names[w.arg] : "__global";
        sync_note_device_write(*w.a, devnum, w.from,
                               strprintf("kernel '%s' (argument %u, %s, launched by %s at %s)", ki.name.c_str(), w.arg,
                                         type.c_str(), call, site.c_str()));
        if (w.a->zero_copy_on(cp->devs[devnum])) {
            std::lock_guard<std::mutex> lock(w.a->sync->mu);
            w.a->sync->unattributed = true;
        }
    }
}

namespace {

// A view of a kernel argument on the device: its object and the bytes the
// kernel sees, as they were before the probe.
struct ProbeView {
    unsigned arg;
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

// Runs the kernel once from the state `before` (restored first), the view of
// argument `poison` overwritten with bytes `junk`, and returns what it wrote;
// false when a step failed (then nothing is judged).
bool probe_run(cl_command_queue q, std::vector<ProbeView>& views, const std::function<cl_int()>& run, int poison,
               char junk, std::vector<std::vector<char>>* out)
{
    for (const ProbeView& v : views)
        if (!write_view(q, v, v.before.data())) return false;
    for (const ProbeView& v : views)
        if (int(v.arg) == poison) {
            std::vector<char> bytes(v.len, junk);
            if (!write_view(q, v, bytes.data())) return false;
        }
    if (run() != CL_SUCCESS || clFinish(q) != CL_SUCCESS) return false;
    out->clear();
    for (const ProbeView& v : views) {
        out->emplace_back(v.written ? v.len : 0);
        if (v.written && !read_view(q, v, out->back().data())) return false;
    }
    return true;
}

}  // namespace

void sync_probe_launch(CLCONTEXT* cp, unsigned devnum, const KernelInfo& ki, const std::vector<unsigned>& unsent,
                       const std::function<cl_mem(unsigned)>& mem_of, const std::function<cl_int()>& run,
                       const char* call, void* caller)
{
    Device& dev = cp->devs[devnum];
    cl_command_queue q = dev.queue;
    if (dev.xfer != dev.queue) clFinish(dev.xfer);
    clFinish(q);
    std::vector<ProbeView> views;
    for (cl_uint i = 0; i < ki.nargs; ++i) {
        const KernelArg& arg = ki.args[i];
        if (arg.kind != KernelArg::global || !arg.alloc || arg.alloc->dead) continue;
        const Allocation& a = *arg.alloc;
        bool written = !(a.flags & CL_MEM_RO) && !ki.read_only_arg(i);
        bool suspect = std::find(unsent.begin(), unsent.end(), i) != unsent.end();
        if (!written && !suspect) continue;
        cl_mem m = mem_of(i);
        if (!m || a.size <= arg.offset) continue;
        views.push_back(ProbeView{i, m, a.size - arg.offset, written, std::vector<char>(a.size - arg.offset)});
        if (!read_view(q, views.back(), views.back().before.data())) return;
    }
    // Twice as it is (a kernel whose results vary from run to run cannot be
    // judged), then twice per suspect argument with its bytes overwritten by
    // two different patterns.  The kernel reads the argument when a result
    // differs from the first run's; in the argument's own view, bytes that
    // still hold each run's pattern are ones the kernel left alone (an output
    // it writes in part), not results.  The views are put back as they were
    // before the launch proper runs.
    // Ordinary numbers as floats, doubles and integers alike (0.747f, 12.08f):
    // neither a NaN, which a result would carry unchanged, nor one so large that
    // adding the data leaves it as it was.
    const char junk1 = char(0x3f), junk2 = char(0x41);
    std::vector<std::vector<char>> first, again, p1, p2;
    std::vector<unsigned> reads, partly;
    bool ok = probe_run(q, views, run, -1, 0, &first) && probe_run(q, views, run, -1, 0, &again) && first == again;
    for (size_t k = 0; ok && k < unsent.size(); ++k) {
        ok = probe_run(q, views, run, int(unsent[k]), junk1, &p1) && probe_run(q, views, run, int(unsent[k]), junk2, &p2);
        bool differs = false, whole = true;
        for (size_t vi = 0; ok && !differs && vi < views.size(); ++vi) {
            if (!views[vi].written) continue;
            const std::vector<char>&f = first[vi], &a = p1[vi], &b = p2[vi];
            bool own = views[vi].arg == unsent[k];
            for (size_t i = 0; i < f.size() && !differs; ++i) {
                if (own && a[i] == junk1 && b[i] == junk2) {
                    whole = false;  // left alone
                    continue;
                }
                differs = a[i] != f[i] || b[i] != f[i];
            }
        }
        if (ok && differs) reads.push_back(unsent[k]);
        if (ok && !differs && !whole) partly.push_back(unsent[k]);
    }
    for (const ProbeView& v : views) write_view(q, v, v.before.data());
    clFinish(q);
    trace(Trace::mem, "STDCL_CHECK=sync: kernel '%s' on device %u run %s to see whether it reads %zu argument(s) "
          "never sent: %zu do",
          ki.name.c_str(), devnum, ok ? "more times" : "more times (not judged: a step failed, or its results vary)",
          unsent.size(), reads.size());
    // Read by none of this launch, and not written whole by it: the device's
    // copy still holds bytes never given a value, for a later launch to read.
    for (unsigned i : partly) {
        SyncState* s = ki.args[i].alloc->sync.get();
        if (!s) continue;
        std::lock_guard<std::mutex> lock(s->mu);
        SyncDevice& d = device_state(*s, devnum);
        d.written = false;
        ++d.probes;
    }
    for (unsigned i : reads) {
        Allocation& a = *ki.args[i].alloc;
        SyncState* s = a.sync.get();
        if (!s) continue;
        std::string last;
        {
            std::lock_guard<std::mutex> lock(s->mu);
            if (s->reported & never_sent) continue;
            s->reported |= never_sent;
            SyncDevice& d = device_state(*s, devnum);
            last = d.last_sync.empty() ? std::string("none") : d.last_sync;
        }
        std::string type = i < ki.type_names.size() && !ki.type_names[i].empty() ? ki.type_names[i] : "__global";
        report(strprintf("sync check: kernel '%s' on device %u (%s) reads argument %u (%s) which was never sent to "
                         "device %u: the host wrote the allocation, but no clmsync(..., CL_MEM_DEVICE) to device %u "
                         "gave that device's copy a value, and the kernel's results depend on it (run again with that "
                         "copy overwritten, it wrote other results)\n"
                         "  allocation: %p, %zu bytes, made at %s; the kernel sees it from byte %zu\n"
                         "  launched by %s at %s\n"
                         "  last sync with device %u: %s\n"
                         "  fix: clmsync(cp, %u, ptr, CL_MEM_DEVICE), or clmsyncn(cp, %u, ..., CL_MEM_DEVICE) of "
                         "the part device %u reads, after the host's last write to it and before this launch",
                         ki.name.c_str(), devnum, dev.name.c_str(), i, type.c_str(), devnum, devnum, (void*)a.host,
                         a.size, s->where.c_str(), ki.args[i].offset, call, code_at(caller).c_str(), devnum,
                         last.c_str(), devnum, devnum, devnum),
               call, true);
    }
}

}  // namespace stdcl
