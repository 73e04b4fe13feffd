// SPDX-License-Identifier: MIT
// scan.cpp: clscan, the inclusive or exclusive prefix sum, minimum or maximum of
// a device's copy of clmalloc memory (kernels: cl/scan.cl).  Two ways:
// - one pass (GPU layout; not float or double sums, see lookback_for): each
//   work-group takes the next tile, publishes its fold, folds the prefix of the
//   tiles before it from what they published (decoupled look-back), publishes
//   its own inclusive prefix and writes its tile: the data is read once and
//   written once.
// - reduce-then-scan (CPU layout, and float and double sums): each tile's fold,
//   a scan of the folds (from a carry), then each tile scanned from its fold's
//   prefix: the data is read twice.
// Over several devices each scans an equal slice of its own copy by
// reduce-then-scan, each slice's carry (the fold of the slices before it)
// passed from device to device by a copy (scan(), below): the call waits on
// the host only for what its flags ask.
#include "primitives/prims.hpp"

#include "config/config.hpp"
#include "helpers/diag.hpp"

#include <cmath>
#include <cstring>
#include <limits>

namespace stdcl {

namespace {

constexpr int kScanFlags = CL_SCAN_EXCLUSIVE | CL_EVENT_WAIT | CL_EVENT_NOWAIT;
constexpr size_t kWg = PRIM_WG;

// Elements a work-item scans on a GPU (cl/protocol.h): a tile of 32 KB, 8192
// 4-byte or 4096 8-byte elements.  Against 16 KB tiles that halves the
// look-backs: a raw-OpenCL copy of the one-pass kernel scanned 2^26 uints 12%
// faster on an H200.
size_t gpu_items(size_t es) { return es == 4 ? SCAN_ITEMS_4 : SCAN_ITEMS_8; }

// The build options of the scan program of one element type, operation and
// layout (cl/scan.cl).
std::string scan_options(int type, int op, bool gpu)
{
    return strprintf("-D PRIM_TYPE=%d -D PRIM_OP=%d -D STDCL_LAYOUT_GPU=%d", type, op, gpu ? 1 : 0);
}

// Whether a GPU-layout scan of type and op takes the one-pass kernel.  Float and
// double sums do not: the look-back folds a tile's prefix from whichever tiles
// are ready, so the rounding would differ from run to run; reduce-then-scan adds
// in the same order every time.  STDCL_SCAN_LOOKBACK=0 turns it off (for
// measurements).
bool lookback_for(int type, int op)
{
    if (op == CL_REDUCE_SUM && (type == CL_REDUCE_FLOAT || type == CL_REDUCE_DOUBLE)) return false;
    const char* v = env_value("STDCL_SCAN_LOOKBACK");
    return !(v && std::strcmp(v, "0") == 0);
}

struct ScanCall {
    CLCONTEXT* cp;
    int type, op, flags;
    const ElemType* et;
    PrimArray in, out;
    size_t n;
    void* caller;
};

// One device's slice [first, first + count): its tiles.
struct Slice {
    unsigned dn;
    size_t first, count;
    bool gpu;
    bool onepass;  // the GPU layout's one-pass scan (decoupled look-back)
    void* prog;  // its layout's program
    size_t chunk, nparts;
};

// A cl_mem or cl_event released when the call ends (OpenCL keeps it while
// commands enqueued use it).
struct CallObjects {
    std::vector<cl_mem> mems;
    std::vector<cl_event> events;
    CallObjects() = default;
    CallObjects(const CallObjects&) = delete;
    CallObjects& operator=(const CallObjects&) = delete;
    ~CallObjects()
    {
        for (cl_mem m : mems) clReleaseMemObject(m);
        for (cl_event e : events) clReleaseEvent(e);
    }
};

int scan(const ScanCall& c, const std::vector<unsigned>& devs)
{
    const char* call = "clscan";
    CLCONTEXT* cp = c.cp;
    const size_t es = c.et->size;
    auto st = prim_state(cp);
    std::lock_guard<std::mutex> lock(st->mu);

    std::vector<Slice> slices;
    for (size_t k = 0; k < devs.size(); ++k) {
        Slice s;
        s.dn = devs[k];
        s.first = c.n / devs.size() * k + std::min(k, c.n % devs.size());
        s.count = c.n / devs.size() + (k < c.n % devs.size() ? 1 : 0);
        if (s.count == 0) continue;
        Device& d = cp->devs[s.dn];
        s.gpu = prim_gpu_layout(d);
        // Over several devices each slice's scan starts from the folds of the
        // slices before it, which reduce-then-scan has at its middle step.
        s.onepass = s.gpu && devs.size() == 1 && lookback_for(c.type, c.op);
        s.prog = prim_program(*st, strprintf("stdcl_scan_%s_%s_%s.cl", c.et->name, kPrimOpNames[c.op], s.gpu ? "gpu" : "cpu"),
                              kScanCl, scan_options(c.type, c.op, s.gpu), call);
        if (s.gpu) {
            s.chunk = kWg * gpu_items(es);
        } else {
            cl_uint units = prim_units(*st, s.dn, call);
            size_t want = std::max<size_t>(1, std::min<size_t>(size_t(units) * 4, 256));
            s.chunk = std::max<size_t>((s.count + want - 1) / want, 4096);
        }
        s.nparts = (s.count + s.chunk - 1) / s.chunk;
        if (s.nparts >= (size_t(1) << 31)) fail(STDCL_EINVAL, "%s: %zu elements: too many for one call", call, c.n);
        slices.push_back(s);
    }
    for (Slice& s : slices)
        prim_check_read(cp, s.dn, *c.in.alloc, c.in.off + s.first * es, s.count * es, "its input", call, c.caller);
    const cl_ulong ioff = c.in.off / es, ooff = c.out.off / es;
    const cl_uint excl = (c.flags & CL_SCAN_EXCLUSIVE) ? 1u : 0u;

    // Over several devices, slice k's carry (the fold of the slices before it)
    // goes from device k - 1 to device k on the devices: the end of device k -
    // 1's scan of its tiles' folds, which started from its own carry, is copied
    // into a buffer of this call (one writer, one reader, ordered by the copy's
    // event), which device k's scan of its folds waits for.  Only those small
    // steps go one device after another; nothing waits on the host.
    CallObjects held;
    held.mems.reserve(slices.size());  // push_back after a create cannot fail
    held.events.reserve(slices.size());
    cl_mem carry_in = nullptr;  // slice k's carry (nullptr for the first slice)
    cl_event carry_ready = nullptr;  // the copy that wrote it

    // Slice k's commands: the first after the pending commands on the arrays
    // (CommandOrder), the others in the queue's order; the last one's event
    // finished as f says.
    auto run_slice = [&](size_t k, int f) -> cl_event {
        Slice& s = slices[k];
        Device& d = cp->devs[s.dn];
        SmallVec<AllocUse, 2> uses;
        uses.emplace_back(c.in.alloc);
        if (c.out.alloc != c.in.alloc) uses.emplace_back(c.out.alloc);
        CommandOrder o(d, s.dn, uses.data(), uses.size(), d.queue);
        const cl_ulong io = ioff + s.first, oo = ooff + s.first, cnt = s.count, ch = s.chunk;
        const cl_uint np = cl_uint(s.nparts);
        cl_mem in = c.in.alloc->device_mem(s.dn, 0), out = c.out.alloc->device_mem(s.dn, 0);
        const cl_uint ncarries = carry_in ? 1u : 0u;
        cl_event ev = nullptr;
        std::string what = strprintf("clscan of %zu %s elements (%s)", s.count, c.et->name, kPrimOpNames[c.op]);
        if (s.onepass) {
            cl_uint epoch = 0;
            cl_mem state =
                prim_lookback_state(*st, s.dn, "scan state", 8 + s.nparts * 8 * (es / 4), 1, &epoch, &o, call);
            cl_mem none = state;  // no carries: any buffer
            try {
                ev = prim_enqueue(*st, s.dn, s.prog, "stdcl_scan_onepass", s.nparts * kWg, kWg,
                                  {parg(in), parg(io), parg(out), parg(oo), parg(cnt), parg(state), parg(np),
                                   parg(epoch), parg(none), parg(ncarries), parg(excl)},
                                  &o, true, call);
            } catch (...) {
                // A failed one-pass scan may leave tickets taken and tiles published
                // this epoch: the state is cleared before the next.
                st->scratch[s.dn]["scan state"].epoch = 0;
                throw;
            }
        } else {
            cl_mem part = prim_scratch(*st, s.dn, "scan parts", (s.nparts + 1) * es, call);
            cl_mem partx = prim_scratch(*st, s.dn, "scan partx", (s.nparts + 1) * es, call);
            cl_mem carries = carry_in ? carry_in : part;  // no carries: any buffer
            const size_t g1 = s.gpu ? kWg : 1;
            prim_enqueue(*st, s.dn, s.prog, "stdcl_scan_reduce", s.nparts * g1, g1,
                         {parg(in), parg(io), parg(cnt), parg(ch), parg(part)}, &o, false, call);
            prim_enqueue(*st, s.dn, s.prog, "stdcl_scan_parts", g1, g1,
                         {parg(part), parg(partx), parg(np), parg(carries), parg(ncarries)}, nullptr, false, call,
                         carry_ready);
            if (k + 1 < slices.size()) {
                // The next slice's carry: the fold of this slice's tiles from its own.
                cl_int err = CL_SUCCESS;
                cl_mem next = clCreateBuffer(cp->ctx, CL_MEM_READ_WRITE, es, nullptr, &err);
                if (err != CL_SUCCESS || !next) fail_cl(err, "%s: clCreateBuffer of a slice's carry", call);
                held.mems.push_back(next);
                cl_event copied = nullptr;
                check_cl(clEnqueueCopyBuffer(d.queue, partx, next, s.nparts * es, 0, es, 0, nullptr, &copied),
                         "clscan: clEnqueueCopyBuffer of a slice's carry");
                held.events.push_back(copied);
                carry_in = next;
                carry_ready = copied;
            }
            ev = prim_enqueue(*st, s.dn, s.prog, "stdcl_scan_tiles", s.nparts * g1, g1,
                              {parg(in), parg(io), parg(out), parg(oo), parg(cnt), parg(ch), parg(partx), parg(excl)},
                              nullptr, true, call);
            if (slices.size() > 1) clFlush(d.queue);  // the next device's carry is on its way
        }
        prim_note_write(cp, s.dn, *c.out.alloc, c.out.off + s.first * es, s.count * es, what);
        trace(Trace::launch, "clscan %s %s%s on device %u: %zu elements from %zu, %s layout%s, %zu tile(s) of %zu",
              c.et->name, kPrimOpNames[c.op], excl ? " (exclusive)" : "", s.dn, s.count, s.first, s.gpu ? "GPU" : "CPU",
              s.onepass ? " (one pass)" : "", s.nparts, s.chunk);
        return prim_finish(cp, s.dn, o, ev, f, what);
    };
    const int f = c.flags & (CL_EVENT_WAIT | CL_EVENT_NOWAIT);
    if (slices.size() == 1) {
        run_slice(0, f);
        return 0;
    }
    // Every device's commands enqueued before any is waited for.
    on_every_device(cp, f, call, [&](unsigned dn, int df) -> cl_event {
        for (size_t k = 0; k < slices.size(); ++k)
            if (slices[k].dn == dn) return run_slice(k, df);
        return nullptr;  // no elements for it
    });
    return 0;
}

int scan_entry(CLCONTEXT* cp, unsigned devnum, const void* in, void* out, size_t n, int type, int op, int flags,
               void* caller)
{
    const char* call = "clscan";
    context_check(cp, call);
    std::vector<unsigned> devs;
    if (devnum == CL_ALL_DEVICES)
        for (unsigned i = 0; i < cp->devs.size(); ++i) devs.push_back(i);
    else
        devs.push_back((context_device(cp, devnum, call), devnum));
    const ElemType* et = elem_type(type);
    if (!et)
        fail(STDCL_EINVAL, "%s: unknown element type %d (CL_REDUCE_INT, _UINT, _LONG, _ULONG, _FLOAT or _DOUBLE)", call,
             type);
    if (op < CL_REDUCE_SUM || op > CL_REDUCE_MAX)
        fail(STDCL_EINVAL, "%s: unknown operation %d (CL_REDUCE_SUM, _MIN or _MAX)", call, op);
    if (flags & ~kScanFlags) fail(STDCL_EINVAL, "%s: unknown flags 0x%x", call, unsigned(flags & ~kScanFlags));
    if ((flags & CL_EVENT_WAIT) && (flags & CL_EVENT_NOWAIT))
        fail(STDCL_EINVAL, "%s: CL_EVENT_WAIT and CL_EVENT_NOWAIT together", call);
    ScanCall c{cp, type, op, flags, et, {}, {}, n, caller};
    c.in = prim_array(call, "in", cp, in, n, et->size, et->name, prim_read);
    c.out = prim_array(call, "out", cp, out, n, et->size, et->name, in == out ? prim_read | prim_write : prim_write);
    if (in != out && prim_overlap(c.in, n * et->size, c.out, n * et->size))
        fail(STDCL_EINVAL, "%s: in (%p) and out (%p) overlap without being the same array", call, in, out);
    if (type == CL_REDUCE_DOUBLE)
        for (unsigned dn : devs) prim_check_double(cp, dn, call);
    if (n == 0) return 0;
    return scan(c, devs);
}

}  // namespace

}  // namespace stdcl

using namespace stdcl;

extern "C" {

STDCL_API int clscan(CLCONTEXT* cp, unsigned int devnum, const void* in, void* out, size_t n, int type, int op,
                     int flags)
{
    void* caller = __builtin_return_address(0);
    return guarded_int([&] { return scan_entry(cp, devnum, in, out, n, type, op, flags, caller); });
}

}  // extern "C"
