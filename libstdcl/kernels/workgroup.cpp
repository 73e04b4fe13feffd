// SPDX-License-Identifier: MIT
// workgroup.cpp: local sizes chosen for the user (a local size of 0 at clfork,
// clforka and clndrange_fit) and __local arguments sized at launch (CLLOCAL,
// CLLOCAL_PER_ITEM, CLLOCAL_FN).
//
// The rule (documented at clndrange_t in stdcl.h) is a pure function of the
// global size, the sizes given and four limits, so that a program gets the same
// groups on every run: dimension 0 takes the largest divisor of its global size
// under the limits that is a multiple of the kernel's preferred multiple (else
// the largest divisor), each further dimension the largest divisor that fits
// what is left; when the __local memory sized per work-item does not fit, the
// search is repeated under half the group size.  The limits of each (kernel,
// device) are queried on first use and kept in the KernelInfo, with the last
// answer, so a launch in a loop neither queries the driver nor searches again.
// STDCL_LOCAL_SIZE_DRIVER in ltsz[0] leaves the local size to the driver: the
// launch passes NULL (or the kernel's reqd_work_group_size), after refusing the
// __local arguments that need a known group.
#include "kernels/kernel.hpp"
#include "helpers/diag.hpp"

#include <algorithm>
#include <cstring>

namespace stdcl {

namespace {

const WorkGroupLimits& limits_of(CLCONTEXT* cp, unsigned devnum, KernelInfo& ki, cl_kernel k)
{
    if (ki.limits.size() < cp->devs.size()) ki.limits.resize(cp->devs.size());
    WorkGroupLimits& l = ki.limits[devnum];
    if (l.known) return l;
    cl_device_id dev = cp->devs[devnum].id;
    WorkGroupLimits n;
    size_t dmax = 1;
    check_cl(clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof dmax, &dmax, nullptr),
             "clGetDeviceInfo(CL_DEVICE_MAX_WORK_GROUP_SIZE)");
    cl_uint ndims = 3;
    check_cl(clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, sizeof ndims, &ndims, nullptr),
             "clGetDeviceInfo(CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS)");
    std::vector<size_t> items(std::max<cl_uint>(ndims, 3), 1);
    check_cl(clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_ITEM_SIZES, ndims * sizeof(size_t), items.data(), nullptr),
             "clGetDeviceInfo(CL_DEVICE_MAX_WORK_ITEM_SIZES)");
    for (int i = 0; i < 3; ++i) n.item_max[i] = std::max<size_t>(items[size_t(i)], 1);
    check_cl(clGetDeviceInfo(dev, CL_DEVICE_LOCAL_MEM_SIZE, sizeof n.local_mem, &n.local_mem, nullptr),
             "clGetDeviceInfo(CL_DEVICE_LOCAL_MEM_SIZE)");
    size_t kmax = dmax;
    check_cl(clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof kmax, &kmax, nullptr),
             "clGetKernelWorkGroupInfo(CL_KERNEL_WORK_GROUP_SIZE)");
    n.group_max = std::max<size_t>(std::min(kmax, dmax), 1);
    size_t mult = 1;
    if (clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, sizeof mult, &mult, nullptr) !=
        CL_SUCCESS)
        mult = 1;  // an OpenCL 1.0 driver: no preference
    n.multiple = std::max<size_t>(mult, 1);
    if (clGetKernelWorkGroupInfo(k, dev, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof n.required, n.required, nullptr) !=
        CL_SUCCESS)
        n.required[0] = n.required[1] = n.required[2] = 0;
    n.known = true;
    trace(Trace::launch,
          "kernel '%s' on device %u: work-group limit %zu, items %zu x %zu x %zu, multiple %zu, "
          "local memory %llu bytes",
          ki.name.c_str(), devnum, n.group_max, n.item_max[0], n.item_max[1], n.item_max[2], n.multiple,
          (unsigned long long)n.local_mem);
    l = n;
    return l;
}

// The largest divisor of g that is at most cap, a multiple of mult if one is.
size_t best_divisor(size_t g, size_t cap, size_t mult)
{
    size_t top = std::min(g, std::max<size_t>(cap, 1));
    size_t any = 1;
    for (size_t l = top; l >= 1; --l) {
        if (g % l) continue;
        if (l % mult == 0) return l;
        if (any == 1) any = l;
    }
    return any;
}

// The __local bytes that the group of ndr's local size needs; throws on a bad rule.
unsigned long long local_bytes(const KernelInfo& ki, const clndrange_t& ndr, const char* call)
{
    size_t group = 1;
    for (size_t d = 0; d < ndr.dim; ++d) group *= ndr.ltsz[d];
    unsigned long long total = 0;
    for (cl_uint i = 0; i < ki.nargs; ++i) {
        const KernelArg& a = ki.args[i];
        if (a.kind != KernelArg::local) continue;
        unsigned long long b = a.lrule.bytes;
        if (a.lrule.per_item) b = (unsigned long long)a.lrule.per_item * group;
        if (a.lrule.fn) {
            b = a.lrule.fn(ndr.ltsz, ndr.dim, a.lrule.user);
            if (b == 0)
                fail(STDCL_EINVAL,
                     "%s: argument %u of kernel '%s': its CLLOCAL_FN gave 0 bytes for local size %zu x %zu x %zu", call,
                     i, ki.name.c_str(), ndr.ltsz[0], ndr.dim > 1 ? ndr.ltsz[1] : 1, ndr.dim > 2 ? ndr.ltsz[2] : 1);
        }
        total += b;
    }
    return total;
}

// 0: no __local argument, 1: some, 2: one sized by a function (fit_local_size
// keeps no memo for those); memoised per args_gen.
int local_kinds(KernelInfo& ki)
{
    if (ki.kinds_gen == ki.args_gen + 1) return ki.kinds;
    int r = 0;
    for (const KernelArg& a : ki.args)
        if (a.kind == KernelArg::local) r = std::max(r, a.lrule.fn ? 2 : 1);
    ki.kinds = r;
    ki.kinds_gen = ki.args_gen + 1;
    return r;
}

// The launch with the driver's local size (ltsz[0] is STDCL_LOCAL_SIZE_DRIVER):
// __local arguments sized by the group are refused, fixed ones must fit the
// device; a kernel with reqd_work_group_size gets it in ndr (OpenCL refuses a
// NULL local size for such a kernel).
void fit_driver_local_size(CLCONTEXT* cp, unsigned devnum, KernelInfo& ki, cl_kernel k, clndrange_t* ndr,
                           const char* call)
{
    unsigned long long fixed = 0;
    for (cl_uint i = 0; i < ki.nargs; ++i) {
        const KernelArg& a = ki.args[i];
        if (a.kind != KernelArg::local) continue;
        if (a.lrule.per_item || a.lrule.fn)
            fail(STDCL_EINVAL,
                 "%s: argument %u of kernel '%s' is a __local argument sized %s, which needs a known group size; "
                 "STDCL_LOCAL_SIZE_DRIVER leaves the group to the driver (give a local size, or 0 for libstdcl's "
                 "choice)",
                 call, i, ki.name.c_str(), a.lrule.per_item ? "per work-item (CLLOCAL_PER_ITEM)" : "by CLLOCAL_FN");
        fixed += a.lrule.bytes;
    }
    const WorkGroupLimits& lim = limits_of(cp, devnum, ki, k);
    if (fixed > lim.local_mem && lim.local_mem != 0)
        fail(STDCL_EINVAL, "%s: kernel '%s': its __local arguments need %llu bytes; device %u has %llu", call,
             ki.name.c_str(), fixed, devnum, (unsigned long long)lim.local_mem);
    if (lim.required[0])
        for (size_t d = 0; d < ndr->dim; ++d) ndr->ltsz[d] = lim.required[d];
}

}  // namespace

void check_ndrange(const clndrange_t* ndr, const char* call, const KernelInfo* ki, unsigned devnum)
{
    if (!ndr) fail(STDCL_EINVAL, "%s: the index space (clndrange_t*) is NULL", call);
    if (ndr->dim < 1 || ndr->dim > 3)
        fail(STDCL_EINVAL, "%s: the index space has %zu dimensions (1 to 3)", call, ndr->dim);
    bool driver = ndr->ltsz[0] == STDCL_LOCAL_SIZE_DRIVER;
    for (size_t i = 0; i < ndr->dim; ++i) {
        if (ndr->gtsz[i] == 0) fail(STDCL_EINVAL, "%s: the global size in dimension %zu is 0", call, i);
        if (i > 0 && ndr->ltsz[i] == STDCL_LOCAL_SIZE_DRIVER && !driver)
            fail(STDCL_EINVAL,
                 "%s: the local size of dimension %zu is STDCL_LOCAL_SIZE_DRIVER; it goes in dimension 0 (ltsz[0]) "
                 "and lets the driver choose every dimension",
                 call, i);
        if (driver) {
            if (i > 0 && ndr->ltsz[i] != 0 && ndr->ltsz[i] != STDCL_LOCAL_SIZE_DRIVER)
                fail(STDCL_EINVAL,
                     "%s: the local size of dimension 0 is STDCL_LOCAL_SIZE_DRIVER (the driver chooses every "
                     "dimension), but dimension %zu gives %zu (give 0 or STDCL_LOCAL_SIZE_DRIVER)",
                     call, i, ndr->ltsz[i]);
            continue;
        }
        if (ndr->ltsz[i] && ndr->gtsz[i] % ndr->ltsz[i]) {
            // A size the program did not give: a launch's choice, written back.
            std::string hint;
            if (ki && devnum < ki->limits.size()) {
                const WorkGroupLimits& m = ki->limits[devnum];
                if (m.last_gen && i < m.last_in.dim && m.last_in.ltsz[i] == 0 && m.last_out.ltsz[i] == ndr->ltsz[i] &&
                    m.last_in.gtsz[i] != ndr->gtsz[i])
                    hint = strprintf(
                        " (chosen for global size %zu by an earlier launch of kernel '%s' on device %u and written "
                        "back into the clndrange_t: set ltsz[%zu] back to 0 to choose again)",
                        m.last_in.gtsz[i], ki->name.c_str(), devnum, i);
            }
            fail(STDCL_EINVAL, "%s: the global size %zu in dimension %zu is not a multiple of the local size %zu%s",
                 call, ndr->gtsz[i], i, ndr->ltsz[i], hint.c_str());
        }
    }
}

std::string local_size_reason(CLCONTEXT* cp, unsigned devnum, KernelInfo& ki, cl_kernel k, const clndrange_t& ndr)
{
    const WorkGroupLimits& lim = limits_of(cp, devnum, ki, k);
    size_t items = 1;
    for (size_t d = 0; d < ndr.dim; ++d) {
        if (ndr.ltsz[d] > lim.item_max[d])
            return strprintf("local size %zu in dimension %zu is over the device's limit of %zu "
                             "(CL_DEVICE_MAX_WORK_ITEM_SIZES)",
                             ndr.ltsz[d], d, lim.item_max[d]);
        items *= ndr.ltsz[d];
    }
    if (items > lim.group_max)
        return strprintf("groups of %zu work-items; the kernel takes at most %zu on this device "
                         "(CL_KERNEL_WORK_GROUP_SIZE, with its registers and private memory)",
                         items, lim.group_max);
    if (lim.required[0])
        for (size_t d = 0; d < ndr.dim; ++d)
            if (ndr.ltsz[d] != lim.required[d])
                return strprintf("the kernel is declared reqd_work_group_size(%zu, %zu, %zu)", lim.required[0],
                                 lim.required[1], lim.required[2]);
    return strprintf("local size %zu x %zu x %zu for global size %zu x %zu x %zu: the driver gave no reason within "
                     "the kernel's limits (%zu work-items, %zu x %zu x %zu)",
                     ndr.ltsz[0], ndr.dim > 1 ? ndr.ltsz[1] : 1, ndr.dim > 2 ? ndr.ltsz[2] : 1, ndr.gtsz[0],
                     ndr.dim > 1 ? ndr.gtsz[1] : 1, ndr.dim > 2 ? ndr.gtsz[2] : 1, lim.group_max, lim.item_max[0],
                     lim.item_max[1], lim.item_max[2]);
}

bool local_marker(size_t size, const void* value, stdcl_local_t* out)
{
    if (size != sizeof(stdcl_local_t) || !value) return false;
    stdcl_local_t m;
    std::memcpy(&m, value, sizeof m);
    if (m.tag != STDCL_LOCAL_TAG) return false;
    *out = m;
    return true;
}

void fit_local_size(CLCONTEXT* cp, unsigned devnum, KernelInfo& ki, cl_kernel k, clndrange_t* ndr, const char* call)
{
    if (ndr->ltsz[0] == STDCL_LOCAL_SIZE_DRIVER) {
        fit_driver_local_size(cp, devnum, ki, k, ndr, call);
        return;
    }
    bool any_zero = false;
    for (size_t d = 0; d < ndr->dim; ++d) any_zero = any_zero || ndr->ltsz[d] == 0;
    int locals = local_kinds(ki);
    if (!any_zero && !locals) return;  // the driver checks given sizes itself
    const WorkGroupLimits& lim = limits_of(cp, devnum, ki, k);
    WorkGroupLimits& memo = ki.limits[devnum];
    if (locals < 2 && memo.last_gen == ki.args_gen + 1 && std::memcmp(&memo.last_in, ndr, sizeof *ndr) == 0) {
        *ndr = memo.last_out;
        return;
    }
    clndrange_t in = *ndr;
    if (lim.required[0])  // reqd_work_group_size(x, y, z): the only valid size
        for (size_t d = 0; d < ndr->dim; ++d)
            if (!ndr->ltsz[d]) ndr->ltsz[d] = lim.required[d];
    size_t fixed = 1;
    for (size_t d = 0; d < ndr->dim; ++d) {
        if (!ndr->ltsz[d]) continue;
        if (ndr->ltsz[d] > lim.item_max[d])
            fail(STDCL_EINVAL, "%s: kernel '%s': local size %zu in dimension %zu is over device %u's limit of %zu",
                 call, ki.name.c_str(), ndr->ltsz[d], d, devnum, lim.item_max[d]);
        fixed *= ndr->ltsz[d];
    }
    if (fixed > lim.group_max)
        fail(STDCL_EINVAL,
             "%s: kernel '%s': the given local sizes make groups of %zu work-items; at most %zu on device %u", call,
             ki.name.c_str(), fixed, lim.group_max, devnum);
    size_t cap = lim.group_max;
    for (;;) {
        clndrange_t t = *ndr;
        size_t used = fixed;
        for (size_t d = 0; d < t.dim; ++d) {
            if (t.ltsz[d]) continue;
            size_t room = std::min(lim.item_max[d], cap / used);
            t.ltsz[d] = best_divisor(t.gtsz[d], room, d == 0 ? lim.multiple : 1);
            used *= t.ltsz[d];
        }
        unsigned long long need = local_bytes(ki, t, call);
        if (need <= lim.local_mem || lim.local_mem == 0) {
            *ndr = t;
            break;
        }
        if (used == 1 || !any_zero)
            fail(STDCL_EINVAL,
                 "%s: kernel '%s': its __local arguments need %llu bytes for local size %zu x %zu x %zu; "
                 "device %u has %llu",
                 call, ki.name.c_str(), need, t.ltsz[0], t.dim > 1 ? t.ltsz[1] : 1, t.dim > 2 ? t.ltsz[2] : 1, devnum,
                 (unsigned long long)lim.local_mem);
        cap = used / 2;
    }
    if (any_zero)
        trace(Trace::launch, "%s '%s' on device %u: local size %zu x %zu x %zu chosen for global %zu x %zu x %zu", call,
              ki.name.c_str(), devnum, ndr->ltsz[0], ndr->dim > 1 ? ndr->ltsz[1] : 1, ndr->dim > 2 ? ndr->ltsz[2] : 1,
              ndr->gtsz[0], ndr->dim > 1 ? ndr->gtsz[1] : 1, ndr->dim > 2 ? ndr->gtsz[2] : 1);
    memo.last_in = in;
    memo.last_out = *ndr;
    memo.last_gen = ki.args_gen + 1;
}

void set_sized_locals(KernelInfo& ki, cl_kernel k, const clndrange_t& ndr, const char* call)
{
    if (local_kinds(ki) == 0) return;
    size_t group = 1;
    for (size_t d = 0; d < ndr.dim; ++d) group *= ndr.ltsz[d];
    for (cl_uint i = 0; i < ki.nargs; ++i) {
        const KernelArg& a = ki.args[i];
        if (a.kind != KernelArg::local || (!a.lrule.per_item && !a.lrule.fn)) continue;
        size_t b = a.lrule.per_item ? a.lrule.per_item * group : a.lrule.fn(ndr.ltsz, ndr.dim, a.lrule.user);
        if (b == 0)
            fail(STDCL_EINVAL, "%s: argument %u of kernel '%s': its CLLOCAL_FN gave 0 bytes", call, i, ki.name.c_str());
        cl_int err = clSetKernelArg(k, i, b, nullptr);
        if (err != CL_SUCCESS)
            fail(STDCL_EINVAL, "%s: argument %u of kernel '%s': %zu bytes of __local memory: %s (%d)", call, i,
                 ki.name.c_str(), b, cl_error_name(err), int(err));
    }
}

}  // namespace stdcl

using namespace stdcl;

extern "C" {

STDCL_API int clndrange_fit(CLCONTEXT* cp, unsigned int devnum, cl_kernel krn, clndrange_t* ndr)
{
    return guarded_int([&] {
        Device& d = context_device(cp, devnum, "clndrange_fit");
        if (!krn) fail(STDCL_EINVAL, "clndrange_fit: the kernel is NULL");
        check_ndrange(ndr, "clndrange_fit");
        auto ki = kernel_find(krn);
        if (ki->closed)
            fail(STDCL_ESTATE, "clndrange_fit: kernel %p ('%s') was released", (void*)krn, ki->name.c_str());
        if (!kernel_usable_in(*ki, cp))
            fail(STDCL_EINVAL, "clndrange_fit: kernel '%s' does not belong to %s", ki->name.c_str(), cp->label.c_str());
        size_t g = ki->external ? 0 : size_t(d.group);
        if (g >= ki->per_group.size())
            fail(STDCL_EINVAL, "clndrange_fit: kernel '%s' has no build for device %u", ki->name.c_str(), devnum);
        std::lock_guard<KernelLock> lock(ki->mu);
        clndrange_t t = *ndr;
        fit_local_size(cp, devnum, *ki, ki->per_group[g], &t, "clndrange_fit");
        if (ndr->ltsz[0] != STDCL_LOCAL_SIZE_DRIVER) *ndr = t;
        return 0;
    });
}

STDCL_API int stdcl_kernel_limits(CLCONTEXT* cp, unsigned int devnum, cl_kernel krn, struct stdcl_kernel_limits* out)
{
    return guarded_int([&] {
        Device& d = context_device(cp, devnum, "stdcl_kernel_limits");
        if (!out) fail(STDCL_EINVAL, "stdcl_kernel_limits: out (struct stdcl_kernel_limits*) is NULL");
        auto ki = kernel_for(cp, krn, "stdcl_kernel_limits");
        if (ki->external)
            fail(STDCL_EINVAL,
                 "stdcl_kernel_limits: kernel '%s' (%p) was not made by libstdcl: give a kernel clsym returned for "
                 "a program open in %s",
                 ki->name.c_str(), (void*)krn, cp->label.c_str());
        size_t g = size_t(d.group);
        if (g >= ki->per_group.size())
            fail(STDCL_EINVAL, "stdcl_kernel_limits: kernel '%s' has no build for device %u", ki->name.c_str(), devnum);
        std::lock_guard<KernelLock> lock(ki->mu);
        cl_kernel k = ki->per_group[g];
        const WorkGroupLimits& lim = limits_of(cp, devnum, *ki, k);
        struct stdcl_kernel_limits r = {};
        r.work_group_size = lim.group_max;
        r.group_size_multiple = lim.multiple;
        for (int i = 0; i < 3; ++i) {
            r.reqd_work_group_size[i] = lim.required[i];
            r.max_work_item_sizes[i] = lim.item_max[i];
        }
        r.device_local_mem_size = lim.local_mem;
        // These two change with the __local arguments set (local) or are not
        // needed by launches (private): asked each time, not kept.
        check_cl(clGetKernelWorkGroupInfo(k, d.id, CL_KERNEL_LOCAL_MEM_SIZE, sizeof r.local_mem_size, &r.local_mem_size,
                                          nullptr),
                 "stdcl_kernel_limits: clGetKernelWorkGroupInfo(CL_KERNEL_LOCAL_MEM_SIZE)");
        check_cl(clGetKernelWorkGroupInfo(k, d.id, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof r.private_mem_size,
                                          &r.private_mem_size, nullptr),
                 "stdcl_kernel_limits: clGetKernelWorkGroupInfo(CL_KERNEL_PRIVATE_MEM_SIZE)");
        *out = r;
        return 0;
    });
}

}  // extern "C"
