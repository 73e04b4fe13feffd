// SPDX-License-Identifier: MIT
// reduce.cpp: clreduce, the sum, minimum or maximum of an array of float, double,
// int, long, uint or ulong over one device or all devices of a context.
//
// Two layouts, chosen by device type, because each is several times slower on the
// other kind of device (PoCL on two cores: 2.1 GB/s strided, 25 GB/s chunked):
// - chunked (CPUs): each work-item reduces one contiguous chunk with 8-wide vector
//   loads, one work-item per group; a core streams through its own memory.
// - strided (GPUs): work-item i reads 16-byte vectors i, i + G, i + 2G ... (G the
//   global size) so that consecutive work-items read consecutive addresses
//   (coalesced), two loads in flight each, then a tree in __local memory gives one
//   value per group.  8 groups per compute unit.  On an H200 (bench/reduce_costs,
//   BENCHMARKS Table 15.4) this reads 2^26 floats 3% faster than scalar loads
//   four in flight, and more groups or loads in flight gain nothing.
// Either way each group publishes its value, and the group that finishes last
// folds them all into one on the device (cl/reduce.cl), which the host reads back
// (Reduction::read), one value a device.
// STDCL_REDUCE_LAYOUT=chunked|strided forces one (for tests and measurements).
//
// The kernels of an element type and operation are built once per context, at the
// first call with them (through prim_program and so the program cache) and kept
// with their state in the primitives' state of the context (prims.hpp); calls on
// one context are serialized by its mutex.
#include "events/events.hpp"
#include "events/wait.hpp"
#include "primitives/prims.hpp"
#include "kernels/kernel.hpp"
#include "config/config.hpp"
#include "helpers/diag.hpp"
#include "programs/program.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>

namespace stdcl {

namespace {

constexpr size_t kMaxParts = 4096;  // groups per device at most
constexpr size_t kStridedVecs = 4;  // the strided layout's 16-byte loads a work-item, at least
// The bytes of a device's part from which its value comes back into pinned
// memory with a polled wait (Reduction::read): in raw OpenCL on an H200 that
// was 2-4 us faster than a blocking read from 2^18 floats on, and 3-4 us
// slower from 2^12 to 2^16 (BENCHMARKS Table 15.18).
constexpr size_t kPolledReadMin = size_t(1) << 20;

// The layout for device d: true for strided.
bool strided_for(const Device& d) { return prim_layout_choice(d, "STDCL_REDUCE_LAYOUT", "strided", "chunked"); }

// The devices' values folded into *result with the operation, on the host as on
// the devices.
void fold(int type, int op, const std::vector<std::vector<char>>& values, void* result)
{
    const size_t es = elem_type(type)->size;
    unsigned char acc[8];
    prim_identity(type, op, acc);
    for (const auto& v : values) prim_fold(type, op, acc, v.data(), v.size() / es);
    std::memcpy(result, acc, es);
}

// The array a clreduce call reduces, checked: its allocation, and the offset of
// ptr in it (*off).
std::shared_ptr<Allocation> checked_array(CLCONTEXT* cp, unsigned devnum, const void* ptr, size_t n, int type, int op,
                                          const void* result, size_t* off)
{
    context_check(cp, "clreduce");
    if (devnum != CL_ALL_DEVICES) context_device(cp, devnum, "clreduce");
    if (type < CL_REDUCE_FLOAT || type > CL_REDUCE_ULONG)
        fail(STDCL_EINVAL, "clreduce: unknown element type %d (CL_REDUCE_FLOAT, _DOUBLE, _INT, _LONG, _UINT or _ULONG)",
             type);
    if (op < CL_REDUCE_SUM || op > CL_REDUCE_MAX)
        fail(STDCL_EINVAL, "clreduce: unknown operation %d (CL_REDUCE_SUM, _MIN or _MAX)", op);
    if (!result) fail(STDCL_EINVAL, "clreduce: the result pointer is NULL");
    if (!ptr) fail(STDCL_EINVAL, "clreduce: the array pointer is NULL");
    if (n == 0) fail(STDCL_EINVAL, "clreduce: 0 elements: nothing to reduce");
    const size_t es = elem_type(type)->size;
    auto alloc = registry_find(ptr, off);
    if (!alloc) fail(STDCL_ENOENT, "clreduce: %p is not memory returned by clmalloc (or it was freed)", ptr);
    if (alloc->cp != cp)
        fail(STDCL_EINVAL, "clreduce: the allocation at %p is %s", (void*)alloc->host,
             alloc->cp ? "attached to another context" : "detached (clmattach it first)");
    if (*off % es)
        fail(STDCL_EINVAL, "clreduce: %p is not aligned to its %zu-byte %s elements", ptr, es, elem_type(type)->name);
    size_t room = (alloc->size - *off) / es;
    if (n > room)
        fail(STDCL_EINVAL, "clreduce: %zu %s elements from %p pass the end of the allocation (%zu fit)", n,
             elem_type(type)->name, ptr, room);
    if (alloc->is_image) fail(STDCL_EINVAL, "clreduce: the allocation at %p is an image", (void*)alloc->host);
    if (alloc->flags & CL_MEM_WO)
        fail(STDCL_EINVAL, "clreduce: the allocation at %p is CL_MEM_WO (kernels only write it), and clreduce reads it",
             (void*)alloc->host);
    return alloc;
}

// One clreduce call: the kernel it enqueues per device, and the partial values
// each brings back.
struct Reduction {
    CLCONTEXT* cp;
    int type, op;
    size_t n, off;
    std::shared_ptr<Allocation> alloc;
    PrimState* st;
    void* handle;
    std::vector<unsigned> devs;
    std::vector<std::vector<char>> values;  // per device: its value (empty: no elements)
    std::vector<cl_mem> value_mems;  // per device: the buffer its value is in
    std::vector<size_t> part_bytes;  // per device: the bytes of the array it reduces
    std::vector<unsigned> enqueued;  // the devices with a kernel enqueued
    // Enqueues the kernel of device devs[k] after the pending commands on the
    // array; its partial values stay on the device until read().
    void enqueue_part(size_t k, AllocUse& use)
    {
        const size_t es = elem_type(type)->size;
        unsigned dn = devs[k];
        Device& d = cp->devs[dn];
        size_t first = n / devs.size() * k + std::min(k, n % devs.size());
        size_t count = n / devs.size() + (k < n % devs.size() ? 1 : 0);
        if (count == 0) return;
        bool strided = strided_for(d);
        const char* kname = strided ? "stdcl_reduce_strided" : "stdcl_reduce_chunked";
        auto ki = prim_kernel(*st, handle, kname, "clreduce");
        size_t g = size_t(d.group) < ki->per_group.size() ? size_t(d.group) : 0;
        cl_kernel kern = ki->per_group[g];
        cl_mem result = prim_scratch(*st, dn, "reduce result", es, "clreduce");
        const cl_uint units = prim_units(*st, dn, "clreduce");
        size_t local = 1, groups = 0;
        cl_ulong arg3 = 0;  // strided: the elements before the first 16-byte boundary; chunked: the chunk
        if (strided) {
            // 16-byte loads from the first 16-byte boundary of the array (allocations
            // are aligned to 128 bytes at least); the elements before it and after
            // the last whole vector are read one by one.
            const size_t vw = 16 / es;
            arg3 = std::min<cl_ulong>(count, ((16 - ((off + first * es) % 16)) % 16) / es);
            size_t kmax = 256;
            check_cl(clGetKernelWorkGroupInfo(kern, d.id, CL_KERNEL_WORK_GROUP_SIZE, sizeof kmax, &kmax, nullptr),
                     "clreduce: clGetKernelWorkGroupInfo");
            local = 1;
            while (local * 2 <= std::min<size_t>(kmax, 256)) local *= 2;
            // At least kStridedVecs vectors a work-item: fewer groups at small sizes,
            // each with more to read, and fewer to publish and fold at the end.
            groups = std::min<size_t>(
                {size_t(units) * 8, kMaxParts, (count / vw + local * kStridedVecs - 1) / (local * kStridedVecs)});
        } else {
            size_t want = std::min<size_t>(size_t(units) * 8, kMaxParts);
            size_t chunk = (count + want - 1) / want;
            chunk = (chunk + 15) / 16 * 16;  // whole vector steps
            groups = (count + chunk - 1) / chunk;
            arg3 = chunk;
        }
        groups = std::max<size_t>(groups, 1);
        cl_mem in = alloc->device_mem(dn, 0);
        const cl_ulong a_off = (off / es) + first, a_n = count;
        const size_t global = groups * local;
        // No event: the read that follows on the same queue (read()) comes
        // after the kernel (the profile times it: prim_enqueue).  After the
        // pending commands on the array (a NOWAIT clmsync or kernel on the other
        // queue).
        enqueued.reserve(enqueued.size() + 1);
        {
            CommandOrder order(d, dn, {&*use}, d.queue);
            cl_uint epoch = 0;
            cl_mem state = prim_lookback_state(*st, dn, "reduce state", 8 + groups * 8 * (es / 4), 1, &epoch, &order,
                                               "clreduce");
            try {
                prim_enqueue(*st, dn, handle, kname, global, local,
                             {parg(in), parg(a_off), parg(a_n), parg(arg3), parg(state), parg(epoch), parg(result),
                              plocal(local * es)},
                             &order, false, "clreduce");
            } catch (...) {
                st->scratch[dn]["reduce state"].epoch = 0;  // cleared before the next call
                throw;
            }
        }
        enqueued.push_back(dn);
        values[k].assign(es, 0);
        value_mems[k] = result;
        part_bytes[k] = count * es;
        if (devs.size() > 1) clFlush(d.queue);  // the devices work at once
        trace(Trace::launch, "clreduce %s %s on device %u: %zu elements from %zu, %s, %zu group(s) of %zu%s",
              elem_type(type)->name, kPrimOpNames[op], dn, count, first, strided ? "strided" : "chunked", groups, local,
              strided ? "" : strprintf(", chunks of %zu", size_t(arg3)).c_str());
    }

    // Brings every device's value back.  Where the device's waits are the
    // driver's (STDCL_WAIT=driver; PoCL's default), or its part is below
    // kPolledReadMin, a blocking read.  Elsewhere (NVIDIA's GPUs by default) a
    // read into pinned memory, not blocking, whose status is then polled: on
    // an H200 a float sum's partial values of 2^18 to 2^24 floats came back
    // 2-4 us sooner than by a blocking read (bench/reduce_costs), and
    // clreduce's calls of 2^20 to 2^26 floats take 0-5 us less (BENCHMARKS
    // Table 15.18).  A read into pageable memory must block there: waited for
    // with its event, it costs 27 us more.  A failed kernel fails its read.
    void read()
    {
        struct Pending {
            cl_event ev = nullptr;
            void* pin = nullptr;
        };
        std::vector<Pending> pend(devs.size());
        struct Release {
            std::vector<Pending>& p;
            ~Release()
            {
                for (auto& x : p)
                    if (x.ev) clReleaseEvent(x.ev);
            }
        } release{pend};
        for (size_t k = 0; k < devs.size(); ++k) {
            if (values[k].empty()) continue;
            unsigned dn = devs[k];
            Device& d = cp->devs[dn];
            void* pin = d.wait == WaitPolicy::driver || part_bytes[k] < kPolledReadMin
                            ? nullptr
                            : prim_pinned(*st, dn, values[k].size());
            // A blocking read where the waits poll (adaptive after a long wait):
            // the queue polled first (a long NOWAIT command ahead of the kernel
            // would keep the driver's wait spinning), the read after it short.
            if (!pin && wait_polls(d)) finish_queue(d, d.queue);
            cl_int err = clEnqueueReadBuffer(d.queue, value_mems[k], pin ? CL_FALSE : CL_TRUE, 0, values[k].size(),
                                             pin ? pin : values[k].data(), 0, nullptr, pin ? &pend[k].ev : nullptr);
            if (err != CL_SUCCESS) fail_cl(err, "clreduce: the reduction on device %u failed", dn);
            pend[k].pin = pin;
            // Several devices: each read starts now (poll_events flushes the
            // one it waits for; a failed flush shows in the wait).
            if (pin && devs.size() > 1) clFlush(d.queue);
        }
        for (size_t k = 0; k < devs.size(); ++k) {
            if (!pend[k].ev) continue;
            cl_int err = poll_events(cp->devs[devs[k]], 1, &pend[k].ev);
            if (err != CL_SUCCESS) fail_cl(err, "clreduce: the reduction on device %u failed", devs[k]);
            std::memcpy(values[k].data(), pend[k].pin, values[k].size());
        }
    }

    // After a failure: the kernels enqueued finish before the call returns (the
    // array may be freed then).
    void drain() noexcept
    {
        for (unsigned dn : enqueued) clFinish(cp->devs[dn].queue);
    }
};

int reduce(CLCONTEXT* cp, unsigned devnum, const void* ptr, size_t n, int type, int op, void* result)
{
    size_t off = 0;
    auto alloc = checked_array(cp, devnum, ptr, n, type, op, result, &off);
    std::vector<unsigned> devs;
    if (devnum == CL_ALL_DEVICES)
        for (unsigned i = 0; i < cp->devs.size(); ++i) devs.push_back(i);
    else
        devs.push_back(devnum);
    bool dbl = type == CL_REDUCE_DOUBLE;
    if (dbl)
        for (unsigned dn : devs) prim_check_double(cp, dn, "clreduce");

    auto st = prim_state(cp);
    std::lock_guard<std::mutex> lock(st->mu);
    void* handle = prim_program(*st, strprintf("stdcl_reduce_%s_%s.cl", elem_type(type)->name, kPrimOpNames[op]),
                                kReduceCl, strprintf("-D PRIM_TYPE=%d -D PRIM_OP=%d", type, op), "clreduce");
    AllocUse use(alloc);  // clfree waits for this call
    Reduction r{cp, type, op, n, off, alloc, st.get(), handle, devs, {}, {}, {}, {}};
    r.values.resize(devs.size());
    r.value_mems.resize(devs.size());
    r.part_bytes.resize(devs.size());
    try {
        for (size_t k = 0; k < devs.size(); ++k) r.enqueue_part(k, use);
        r.read();
    } catch (...) {
        r.drain();
        throw;
    }
    fold(type, op, r.values, result);
    return 0;
}

}  // namespace

}  // namespace stdcl

using namespace stdcl;

extern "C" {

STDCL_API int clreduce(CLCONTEXT* cp, unsigned int devnum, const void* ptr, size_t n, int type, int op, void* result)
{
    return guarded_int([&] { return reduce(cp, devnum, ptr, n, type, op, result); });
}

}  // extern "C"
