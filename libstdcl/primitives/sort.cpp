// SPDX-License-Identifier: MIT
// sort.cpp: clsort and clsort_by_key, an LSD radix sort of a device's copy of
// clmalloc memory (the kernels and their layouts: cl/sort.cl).
//
// One pass a digit (8 bits of the key, from the lowest), each stable.  On a GPU
// one kernel counts the digits of every pass at once, and each pass is then one
// kernel that reads and writes the keys once (Onesweep: the tiles find their
// output positions by a look-back, cl/sort_pass.h).  On a CPU a pass counts each
// chunk's digits, scans the counts (digit-major, so the scan gives each (digit,
// chunk) its first output position), and moves each chunk's keys there in
// order.  The keys go from the program's array to a scratch copy and back, so
// after an even number of passes (4 for 32-bit keys, 8 for 64-bit) they end
// where they started, sorted.
#include "primitives/prims.hpp"

#include "config/config.hpp"
#include "helpers/diag.hpp"
#include "memory/sync_check.hpp"

#include <cstring>

namespace stdcl {

namespace {

constexpr int kSortFlags = CL_SORT_DESCENDING | CL_EVENT_WAIT | CL_EVENT_NOWAIT;
constexpr size_t kWg = PRIM_WG;

// The sort program of one key width (32 or 64 bits) and layout (cl/sort.cl),
// with NVIDIA's warp instructions or without, and with the wide pass for
// 4-byte values or not: its name and build options.
std::string sort_name(unsigned bits, bool gpu, bool nv_warp, bool wide)
{
    return strprintf("stdcl_sort_%u_%s%s%s.cl", bits, gpu ? "gpu" : "cpu", nv_warp ? "_nv" : "", wide ? "_wide" : "");
}
std::string sort_options(unsigned bits, bool gpu, bool nv_warp, bool wide)
{
    return strprintf("-D SORT_KEY_BITS=%u -D STDCL_LAYOUT_GPU=%d%s%s", bits, gpu ? 1 : 0,
                     nv_warp ? " -D STDCL_WANT_NV_WARP=1" : "", wide ? " -D SORT_PAIR4_WIDE=1" : "");
}

// Whether device d runs the wide pass for 4-byte values (cl/protocol.h): an
// NVIDIA GPU of compute capability 9 (cl_nv_device_attribute_query), whose
// compute units hold two of its groups (228 KB of local memory), where it was
// measured.  Others keep the pass of 256 work-items: GPUs with 100 KB a
// compute unit (compute capability 8.6, 8.9, 12) would run one wide group at
// a time, and one group a compute unit ran 25-30% slower on the H200.  Asked
// once per device and state (st.mu held).
bool pair4_wide(PrimState& st, unsigned dn)
{
    if (st.sort_wide.size() != st.cp->devs.size()) st.sort_wide.assign(st.cp->devs.size(), -1);
    if (st.sort_wide[dn] < 0) {
        constexpr cl_device_info kComputeCapabilityMajorNV = 0x4000;
        cl_uint major = 0;
        st.sort_wide[dn] = clGetDeviceInfo(st.cp->devs[dn].id, kComputeCapabilityMajorNV, sizeof major, &major,
                                           nullptr) == CL_SUCCESS &&
                           major == 9;
    }
    return st.sort_wide[dn] == 1;
}

struct SortCall {
    const char* call;
    CLCONTEXT* cp;
    unsigned dn;
    const ElemType* et;
    PrimArray keys, values;
    size_t n, vsize;
    int flags;
    void* caller;
};

// Where one pass reads and writes: the keys go from the program's array to the
// scratch copy and back.
struct SortPass {
    cl_mem src, dst, vsrc, vdst;
    cl_ulong soff, doff, vsoff, vdoff;  // keys in keys, values in bytes
    cl_uint shift, mode;
};

// The program (STDCL_PRIMS_WARP=nv or, on NVIDIA's GPUs by default, the one
// with NVIDIA's warp instructions, where it builds; else the portable one).
// *wide: whether its pass for 4-byte values is the wide one.
void* sort_program(PrimState& st, unsigned dn, unsigned bits, bool gpu, const char* call, bool* wide)
{
    const Device& d = st.cp->devs[dn];
    *wide = false;
    const char* warp = env_value("STDCL_PRIMS_WARP");
    if (warp && *warp && std::strcmp(warp, "nv") != 0 && std::strcmp(warp, "portable") != 0)
        warn_once("STDCL_PRIMS_WARP", "STDCL_PRIMS_WARP='%s' is not nv or portable; ignored", warp);
    bool nv = false;
    if (gpu) {
        if (warp && std::strcmp(warp, "nv") == 0)
            nv = true;
        else if (!(warp && std::strcmp(warp, "portable") == 0))
            nv = d.vendor_macro == "__NVIDIA__";
    }
    if (nv) {
        const bool w = pair4_wide(st, dn);
        try {
            void* h = prim_program(st, sort_name(bits, true, true, w), kSortCl, sort_options(bits, true, true, w), call);
            *wide = w;
            return h;
        } catch (const Error& e) {
            warn_once("STDCL_PRIMS_WARP=nv",
                      "%s: the kernels with NVIDIA's warp instructions did not build; the "
                      "portable ones sort instead: %s",
                      call, e.msg.c_str());
        }
    }
    return prim_program(st, sort_name(bits, gpu, false, false), kSortCl, sort_options(bits, gpu, false, false), call);
}

int sort(const SortCall& c)
{
    CLCONTEXT* cp = c.cp;
    const unsigned dn = c.dn;
    Device& d = cp->devs[dn];
    const bool gpu = prim_gpu_layout(d);
    const size_t ks = c.et->size;

    auto st = prim_state(cp);
    std::lock_guard<std::mutex> lock(st->mu);
    bool wide = false;
    void* h = sort_program(*st, dn, unsigned(ks * 8), gpu, c.call, &wide);

    const cl_uint units = prim_units(*st, dn, c.call);
    // Values: moved natively when their size is a power of two up to 16 and the
    // array is aligned to it, else byte by byte.
    cl_uint vmode = 0;
    if (c.vsize) {
        bool pow2 = (c.vsize & (c.vsize - 1)) == 0;
        vmode = pow2 && c.values.off % c.vsize == 0 ? cl_uint(c.vsize) : SORT_VALUES_ANY;
    }
    // A GPU pass's kernel, its group and the 32-bit keys a work-item takes in
    // it (64-bit: half as many): the keys alone, with 4-byte values (in the
    // wide pass or not), or with others.
    const bool pairs4 = vmode == 4;
    const char* pass_kernel = !c.vsize ? "stdcl_sort_onesweep"
                              : pairs4 ? "stdcl_sort_onesweep_pairs4"
                                       : "stdcl_sort_onesweep_pairs";
    const size_t pass_items32 = !c.vsize ? SORT_ITEMS
                                : pairs4 ? (wide ? SORT_PAIR4_WIDE_ITEMS : SORT_PAIR4_ITEMS)
                                         : SORT_PAIR_ITEMS;
    const size_t pass_wg = pairs4 && wide ? SORT_PAIR4_WIDE_WG : kWg;
    // Tiles: on a GPU as the pass's (pass_wg work-items, pass_items32 keys each,
    // half as many 64-bit ones); on a CPU one chunk per work-item, a few per core.
    size_t chunk = 0;
    if (gpu) {
        chunk = pass_wg * (pass_items32 / (ks / 4));
    } else {
        size_t want = std::max<size_t>(1, std::min<size_t>(size_t(units) * 4, 256));
        chunk = std::max<size_t>((c.n + want - 1) / want, 1024);
    }
    const size_t ntiles = (c.n + chunk - 1) / chunk;
    if (ntiles * 256 >= (size_t(1) << 32) || c.n >= (size_t(1) << 32))
        fail(STDCL_EINVAL, "%s: %zu keys: at most 2^32 - 1 in one call", c.call, c.n);

    cl_mem tmpk = prim_scratch(*st, dn, "sort keys", c.n * ks, c.call);
    cl_mem tmpv = c.vsize ? prim_scratch(*st, dn, "sort values", c.n * c.vsize, c.call) : nullptr;

    SmallVec<AllocUse, 2> uses;
    uses.emplace_back(c.keys.alloc);
    if (c.vsize) uses.emplace_back(c.values.alloc);
    std::string what = strprintf("%s of %zu %s keys", c.call, c.n, c.et->name);
    prim_check_read(cp, dn, *c.keys.alloc, c.keys.off, c.n * ks, "its keys", c.call, c.caller);
    if (c.vsize) prim_check_read(cp, dn, *c.values.alloc, c.values.off, c.n * c.vsize, "its values", c.call, c.caller);
    CommandOrder order(d, dn, uses.data(), uses.size(), d.queue);

    cl_mem ukeys = c.keys.alloc->device_mem(dn, 0);
    cl_mem uvals = c.vsize ? c.values.alloc->device_mem(dn, 0) : nullptr;
    const cl_ulong ukoff = c.keys.off / ks;
    const cl_uint vsz = cl_uint(c.vsize);
    const cl_uint passes = cl_uint(ks);  // 8-bit digits
    const cl_uint kind = c.et->kind, desc = (c.flags & CL_SORT_DESCENDING) ? 1u : 0u;
    const cl_uint map = (kind << SORT_KIND_SHIFT) | (desc ? SORT_DESC : 0u);  // mode's key map bits
    const cl_ulong n = c.n;
    const cl_uint nt = cl_uint(ntiles);
    auto pass_of = [&](cl_uint p) {
        const bool from_user = p % 2 == 0;
        SortPass q;
        q.src = from_user ? ukeys : tmpk;
        q.dst = from_user ? tmpk : ukeys;
        q.soff = from_user ? ukoff : 0;
        q.doff = from_user ? 0 : ukoff;
        q.vsrc = c.vsize ? (from_user ? uvals : tmpv) : tmpk;  // unused without values: any buffer
        q.vdst = c.vsize ? (from_user ? tmpv : uvals) : tmpk;
        q.vsoff = c.vsize && from_user ? c.values.off : 0;
        q.vdoff = c.vsize && !from_user ? c.values.off : 0;
        q.shift = p * 8;
        q.mode = (p == 0 ? SORT_MAP_IN : 0u) | (p + 1 == passes ? SORT_MAP_OUT : 0u) | map;
        return q;
    };
    cl_event last = nullptr;
    if (gpu) {
        // The digits of every pass in one read of the keys, then one sweep a pass
        // (cl/sort_pass.h).
        // The digit counts: two halves (SORT_COUNT_ROWS), one zero between
        // calls (Scratch::zero_half 1 the first, 2 the second; 0: cleared first,
        // when new or after a failed call).  The histogram adds to it and zeroes
        // the other for the next call: a clearing (clEnqueueFillBuffer) took
        // 46-63 us of the host's time on NVIDIA's OpenCL, more than a launch.
        cl_mem ghist = prim_scratch(*st, dn, "sort digits", 2 * SORT_COUNT_ROWS * 256 * 4, c.call);
        Scratch& gs = st->scratch[dn]["sort digits"];
        cl_uint epoch = 0;
        cl_mem state =
            prim_lookback_state(*st, dn, "sort state", 8 + ntiles * 256 * 8, passes, &epoch, &order, c.call);
        try {
            // Like every command of the call, after the pending ones on its memory
            // (the queue keeps the call's own commands in order).
            if (gs.zero_half != 1 && gs.zero_half != 2) {
                const cl_uint zero = 0;
                check_cl(clEnqueueFillBuffer(d.queue, ghist, &zero, sizeof zero, 0, gs.bytes, order.count(),
                                             order.list(), nullptr),
                         "clsort: clEnqueueFillBuffer of the digit counts");
                gs.zero_half = 1;
            }
            const cl_uint side = gs.zero_half - 1;
            gs.zero_half = 0;  // until the passes are enqueued
            const size_t hgroups = std::min<size_t>(size_t(units) * 4, (c.n + 4095) / 4096);
            const cl_ulong per = (c.n + hgroups - 1) / hgroups;
            prim_enqueue(*st, dn, h, "stdcl_sort_hist", hgroups * kWg, kWg,
                         {parg(ukeys), parg(ukoff), parg(n), parg(per), parg(map), parg(ghist), parg(side)}, &order,
                         false, c.call);
            for (cl_uint p = 0; p < passes; ++p) {
                SortPass q = pass_of(p);
                const cl_uint ep = epoch + p, row = side * SORT_COUNT_ROWS + p;
                last = prim_enqueue(*st, dn, h, pass_kernel, ntiles * pass_wg, pass_wg,
                                    {parg(q.src), parg(q.soff), parg(q.dst), parg(q.doff), parg(q.vsrc), parg(q.vsoff),
                                     parg(q.vdst), parg(q.vdoff), parg(vmode), parg(vsz), parg(n), parg(q.shift),
                                     parg(q.mode), parg(ghist), parg(row), parg(state), parg(nt), parg(ep)},
                                    nullptr, p + 1 == passes, c.call);
            }
            gs.zero_half = 2 - side;  // the other half, zeroed by the histogram
        } catch (...) {
            // Tickets taken or tiles published under these epochs, counts added
            // to: cleared next time.
            st->scratch[dn]["sort state"].epoch = 0;
            gs.zero_half = 0;
            throw;
        }
    } else {
        // Per pass: count each chunk's digits, scan the counts (digit-major, so
        // the scan gives each (digit, chunk) its first output position), and
        // move each chunk's keys there in order.
        const size_t ncount = 256 * ntiles;
        const size_t cchunk = std::max<size_t>((ncount + 15) / 16, 256);
        const size_t cparts = (ncount + cchunk - 1) / cchunk;
        cl_mem counts = prim_scratch(*st, dn, "sort counts", ncount * 4, c.call);
        cl_mem offs = prim_scratch(*st, dn, "sort offsets", ncount * 4, c.call);
        cl_mem part = prim_scratch(*st, dn, "sort parts", (cparts + 1) * 4, c.call);
        cl_mem partx = prim_scratch(*st, dn, "sort partx", (cparts + 1) * 4, c.call);
        const cl_ulong ch = chunk, cch = cchunk, zero = 0, ncnt = ncount;
        const cl_uint ncp = cl_uint(cparts), excl = 1, nocarry = 0;
        CommandOrder* first = &order;  // the first kernel waits for the pending commands
        for (cl_uint p = 0; p < passes; ++p) {
            SortPass q = pass_of(p);
            prim_enqueue(
                *st, dn, h, "stdcl_sort_count", ntiles, 1,
                {parg(q.src), parg(q.soff), parg(n), parg(ch), parg(q.shift), parg(q.mode), parg(counts), parg(nt)},
                first, false, c.call);
            first = nullptr;
            prim_enqueue(*st, dn, h, "stdcl_scan_reduce", cparts, 1,
                         {parg(counts), parg(zero), parg(ncnt), parg(cch), parg(part)}, nullptr, false, c.call);
            prim_enqueue(*st, dn, h, "stdcl_scan_parts", 1, 1,
                         {parg(part), parg(partx), parg(ncp), parg(part), parg(nocarry)}, nullptr, false, c.call);
            prim_enqueue(
                *st, dn, h, "stdcl_scan_tiles", cparts, 1,
                {parg(counts), parg(zero), parg(offs), parg(zero), parg(ncnt), parg(cch), parg(partx), parg(excl)},
                nullptr, false, c.call);
            last = prim_enqueue(*st, dn, h, "stdcl_sort_scatter", ntiles, 1,
                                {parg(q.src), parg(q.soff), parg(q.dst), parg(q.doff), parg(q.vsrc), parg(q.vsoff),
                                 parg(q.vdst), parg(q.vdoff), parg(vmode), parg(vsz), parg(n), parg(ch), parg(q.shift),
                                 parg(q.mode), parg(offs), parg(nt)},
                                nullptr, p + 1 == passes, c.call);
        }
    }
    prim_note_write(cp, dn, *c.keys.alloc, c.keys.off, c.n * ks, what);
    if (c.vsize) prim_note_write(cp, dn, *c.values.alloc, c.values.off, c.n * c.vsize, what);
    trace(Trace::launch, "%s on device %u: %zu %s keys%s, %s layout, %zu tile(s) of %zu, %u passes", c.call, dn, c.n,
          c.et->name, c.vsize ? strprintf(" with %zu-byte values", c.vsize).c_str() : "", gpu ? "GPU" : "CPU", ntiles,
          chunk, passes);
    prim_finish(cp, dn, order, last, c.flags & (CL_EVENT_WAIT | CL_EVENT_NOWAIT), what);
    return 0;
}

int sort_entry(const char* call, CLCONTEXT* cp, unsigned devnum, void* keys, void* values, size_t n, int type,
               size_t vsize, int flags, bool by_key, void* caller)
{
    context_check(cp, call);
    if (devnum == CL_ALL_DEVICES)
        fail(STDCL_EINVAL,
             "%s: CL_ALL_DEVICES: a sort runs on one device (clmsync the keys to it; clsort of one device's part "
             "sorts that part only)",
             call);
    context_device(cp, devnum, call);
    const ElemType* et = elem_type(type);
    if (!et)
        fail(STDCL_EINVAL, "%s: unknown key type %d (CL_REDUCE_INT, _UINT, _LONG, _ULONG, _FLOAT or _DOUBLE)", call,
             type);
    if (flags & ~kSortFlags) fail(STDCL_EINVAL, "%s: unknown flags 0x%x", call, unsigned(flags & ~kSortFlags));
    if ((flags & CL_EVENT_WAIT) && (flags & CL_EVENT_NOWAIT))
        fail(STDCL_EINVAL, "%s: CL_EVENT_WAIT and CL_EVENT_NOWAIT together", call);
    if (by_key && (vsize == 0 || vsize > 16))
        fail(STDCL_EINVAL, "%s: value_size %zu: values of 1 to 16 bytes", call, vsize);
    if (by_key && keys && keys == values) fail(STDCL_EINVAL, "%s: keys and values are the same array (%p)", call, keys);
    SortCall c{call, cp, devnum, et, {}, {}, n, by_key ? vsize : 0, flags, caller};
    c.keys = prim_array(call, "keys", cp, keys, n, et->size, et->name, prim_read | prim_write);
    if (by_key) {
        c.values = prim_array(call, "values", cp, values, n, vsize, "value", prim_read | prim_write);
        if (prim_overlap(c.keys, n * et->size, c.values, n * vsize))
            fail(STDCL_EINVAL, "%s: the keys (%p, %zu bytes) and the values (%p, %zu bytes) overlap", call, keys,
                 n * et->size, values, n * vsize);
    }
    if (n <= 1) return 0;  // sorted
    return sort(c);
}

}  // namespace

}  // namespace stdcl

using namespace stdcl;

extern "C" {

STDCL_API int clsort(CLCONTEXT* cp, unsigned int devnum, void* keys, size_t n, int type, int flags)
{
    void* caller = __builtin_return_address(0);
    return guarded_int(
        [&] { return sort_entry("clsort", cp, devnum, keys, nullptr, n, type, 0, flags, false, caller); });
}

STDCL_API int clsort_by_key(CLCONTEXT* cp, unsigned int devnum, void* keys, void* values, size_t n, int type,
                            size_t value_size, int flags)
{
    void* caller = __builtin_return_address(0);
    return guarded_int([&] {
        return sort_entry("clsort_by_key", cp, devnum, keys, values, n, type, value_size, flags, true, caller);
    });
}

}  // extern "C"
