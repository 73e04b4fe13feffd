// SPDX-License-Identifier: MIT
// sync_check.cpp: which copy of an allocation is current, per device, and the
// sync-check mode's findings at each launch (sync_check.hpp).
#include "internal/sync_check.hpp"

#include "internal/cl_util.hpp"
#include "internal/config.hpp"
#include "internal/core.hpp"
#include "internal/diag.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace stdcl {

// Bytes [off, off + len) of the host copy as they were sent to a device (or
// brought back from it): what the device's copy holds there.
struct SyncRange {
    size_t off, len;
    std::uint64_t hash;
};

struct SyncDevice {
    std::vector<SyncRange> known;  // what the device's copy holds, where known
    bool written = false;  // a kernel or copy there may have changed it outside `known`
    std::string last_sync;  // "clmsync to the device at main+0x2b (./prog)"
};

struct SyncState {
    std::mutex mu;
    std::string where;  // where the allocation was made
    // Hash of the host bytes when the host program last had not written them: at
    // clmalloc, then after each waited transfer back from a device.
    std::uint64_t born = 0;
    // The host bytes may have been changed by a device since: a kernel that may
    // write them on a device that works on host memory, or a transfer back not
    // yet waited for.  Host writes and device writes cannot be told apart then:
    // no finding until a waited transfer back, or a whole transfer to a device.
    bool unattributed = false;
    std::vector<SyncDevice> dev;
    unsigned reported = 0;  // the kinds reported (once per allocation and kind)
};

namespace {

enum Kind : unsigned { stale = 1, never_sent = 2 };

// 8 bytes at a time, multiplied and mixed: several GB/s, enough to tell a change.
std::uint64_t hash_bytes(const char* p, size_t n)
{
    std::uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        std::uint64_t w;
        std::memcpy(&w, p + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    std::uint64_t t = 0;
    if (i < n) std::memcpy(&t, p + i, n - i);
    h = (h ^ t) * 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 29);
}

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

int action() { return settings().check_action; }

// Whether the n bytes at p hold at most two distinct 4-byte values: an output the
// host initialised (-1 or 0, and memory beyond what it used), not data.
bool output_like(const char* p, size_t n)
{
    std::uint32_t v[2];
    int seen = 0;
    for (size_t i = 0; i + 4 <= n; i += 4) {
        std::uint32_t w;
        std::memcpy(&w, p + i, 4);
        if ((seen > 0 && w == v[0]) || (seen > 1 && w == v[1])) continue;
        if (seen == 2) return false;
        v[seen++] = w;
    }
    return true;
}

}  // namespace

bool sync_check_on() { return settings().check_sync; }

void sync_note_alloc(Allocation& a, void* caller)
{
    if (a.backing == Backing::devonly) return;  // no host copy to fall behind
    auto s = std::make_shared<SyncState>();
    s->where = code_at(caller);
    if (a.host) s->born = hash_bytes(a.host, a.size);
    a.sync = std::move(s);
}

void sync_note_transfer(Allocation& a, unsigned devnum, size_t off, size_t len, bool to_device, bool waited,
                        const char* call, void* caller)
{
    SyncState* s = a.sync.get();
    if (!s || !a.host) return;
    std::lock_guard<std::mutex> lock(s->mu);
    SyncDevice& d = device_state(*s, devnum);
    forget(d, off, len);
    bool whole = off == 0 && len == a.size;
    if (to_device && whole) d.written = false;  // the whole copy is the host's now
    if ((!to_device && waited) || (to_device && whole && s->unattributed)) {
        s->born = hash_bytes(a.host, a.size);
        s->unattributed = false;
    }
    if (!to_device && !waited) s->unattributed = true;
    // Sent: the host bytes now are what the device gets.  Brought back and
    // complete: the host bytes are the device's.  A NOWAIT transfer back is not
    // complete yet: its bytes stay unknown.
    if (to_device || waited) d.known.push_back(SyncRange{off, len, hash_bytes(a.host + off, len)});
    d.last_sync = strprintf("%s %s device %u at %s", call, to_device ? "to" : "from", devnum, code_at(caller).c_str());
}

void sync_note_device_write(Allocation& a, unsigned devnum)
{
    SyncState* s = a.sync.get();
    if (!s) return;
    std::lock_guard<std::mutex> lock(s->mu);
    SyncDevice& d = device_state(*s, devnum);
    d.known.clear();
    d.written = true;
}

void sync_check_launch(CLCONTEXT* cp, unsigned devnum, const KernelInfo& ki, const char* call, void* caller)
{
    const bool described = !ki.qual.empty();
    std::vector<Allocation*> writes;
    for (cl_uint i = 0; i < ki.nargs; ++i) {
        const KernelArg& arg = ki.args[i];
        if (arg.kind != KernelArg::global || !arg.alloc) continue;
        Allocation& a = *arg.alloc;
        SyncState* s = a.sync.get();
        if (!s || !a.host) continue;
        bool is_const = described &&
            (ki.qual[i] == CL_KERNEL_ARG_ADDRESS_CONSTANT ||
             (i < ki.tqual.size() && (ki.tqual[i] & CL_KERNEL_ARG_TYPE_CONST)));
        bool may_write = !(a.flags & CL_MEM_RO) && !is_const;
        bool may_read = !(a.flags & CL_MEM_WO);
        if (may_write) writes.push_back(&a);
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
            if (!is_const && (d.known.empty() || output_like(a.host + from, a.size - from))) continue;
            if (d.known.empty() && !d.written) {
                if (hash_bytes(a.host, a.size) != s->born) {
                    kind = never_sent;
                    finding = strprintf("which was never sent to device %u: the host wrote the allocation, but no "
                                        "clmsync(..., CL_MEM_DEVICE) to device %u and no kernel there gave that "
                                        "device's copy a value",
                                        devnum, devnum);
                }
            } else {
                for (const SyncRange& r : d.known) {
                    if (r.off + r.len <= from) continue;  // before the kernel's view
                    if (hash_bytes(a.host + r.off, r.len) == r.hash) continue;
                    kind = stale;
                    finding = strprintf("whose copy on device %u is older than the host's: the host changed bytes "
                                        "%zu to %zu of the allocation after they were last synced with device %u",
                                        devnum, r.off, r.off + r.len - 1, devnum);
                    break;
                }
            }
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
                "  fix: clmsync(cp, %u, ptr, CL_MEM_DEVICE) after the host's last write to it and before this launch"
                "%s%s",
                ki.name.c_str(), devnum, cp->devs[devnum].name.c_str(), i, type.c_str(), finding.c_str(), (void*)a.host,
                a.size, s->where.c_str(), from, call, code_at(caller).c_str(), devnum, last.c_str(), devnum, "",
                described ? "" : "\n  (no argument information: every __global argument counts as read and written)");
            if (action() == 1) fail(STDCL_ESYNC, "%s: %s", call, text.c_str());
            std::fprintf(stderr, "stdcl: %s\n", text.c_str());
            std::fflush(stderr);
            if (action() == 2) std::abort();
        }
    }
    for (Allocation* a : writes) {
        sync_note_device_write(*a, devnum);
        if (a->zero_copy_on(cp->devs[devnum])) {
            std::lock_guard<std::mutex> lock(a->sync->mu);
            a->sync->unattributed = true;
        }
    }
}

}  // namespace stdcl
