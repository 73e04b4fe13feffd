// SPDX-License-Identifier: MIT
// launch.cpp: kernel arguments (clarg_set and its forms), clfork and clforka, and the
// registry of kernels that lets a __global argument bind per device at launch.
#include "events/events.hpp"
#include "helpers/cl_util.hpp"
#include "config/config.hpp"
#include "helpers/diag.hpp"
#include "memory/sync_check.hpp"

#include <chrono>
#include <cstring>
#include <optional>
#include <shared_mutex>
#include <thread>

namespace stdcl {

namespace {

void check_index(const KernelInfo& ki, unsigned i, const char* call)
{
    if (i >= ki.nargs)
        fail(STDCL_EINVAL, "%s: argument %u is out of range: kernel '%s' has %u argument(s)", call, i, ki.name.c_str(),
             ki.nargs);
}

std::string arg_desc(const KernelInfo& ki, unsigned i)
{
    std::string s = strprintf("argument %u of kernel '%s'", i, ki.name.c_str());
    if (i < ki.type_names.size() && !ki.type_names[i].empty()) {
        s += " (" + ki.type_names[i];
        if (i < ki.ptypes.size() && !ki.ptypes[i].resolved.empty()) s += ", a typedef of " + ki.ptypes[i].resolved;
        s += ")";
    }
    return s;
}

// Binds a clmalloc allocation (or NULL) to argument i; set per device at clfork.
// An interior pointer a kernel is given becomes a sub-buffer, whose offset every
// device of the context must accept: refused here, at the call, not at the launch.
[[noreturn]] void fail_misaligned(const KernelInfo& ki, unsigned i, const void* ptr, size_t off, const void* base,
                                  const char* call)
{
    fail(STDCL_EINVAL,
         "%s: %s: the interior pointer %p is %zu bytes into the allocation at %p; a kernel's pointers into an "
         "allocation must be %zu-byte aligned on %s (stdcl_mem_align)",
         call, arg_desc(ki, i).c_str(), ptr, off, base, ki.cp->mem_align, ki.cp->label.c_str());
}

void bind_global(KernelInfo& ki, unsigned i, const void* ptr, const char* call)
{
    KernelArg& a = ki.args[i];
    if (ptr && a.kind == KernelArg::global) {
        // The same allocation again (a repeated or moved interior pointer): no registry
        // lookup.  A freed, detached or moved allocation takes the full path.
        Allocation& al = *a.alloc;
        uintptr_t off = uintptr_t(ptr) - uintptr_t(al.host);
        if (off < al.size && !al.dead.load(std::memory_order_acquire) &&
            al.cp.load(std::memory_order_acquire) == ki.cp) {
            if (off & (ki.cp->mem_align - 1)) fail_misaligned(ki, i, ptr, size_t(off), al.host, call);
            a.offset = size_t(off);
            return;
        }
    }
    if (a.kind == KernelArg::local) ++ki.args_gen;  // (any change below ends it)
    if (!ptr) {
        cl_mem none = nullptr;
        for (cl_kernel k : ki.per_group) check_cl(clSetKernelArg(k, i, sizeof none, &none), call);
        ki.held[i].fill({});
        a = KernelArg{};
        a.kind = KernelArg::value;
        return;
    }
    size_t off = 0;
    auto alloc = registry_find(ptr, &off);
    if (!alloc)
        fail(STDCL_ENOENT, "%s: %s: %p is not memory returned by clmalloc (or it was freed)", call,
             arg_desc(ki, i).c_str(), ptr);
    if (!kernel_usable_in(ki, alloc->cp))
        fail(STDCL_EINVAL, "%s: %s: the allocation at %p is %s", call, arg_desc(ki, i).c_str(), (void*)alloc->host,
             alloc->cp ? "attached to another context" : "detached");
    if (off & (ki.cp->mem_align - 1)) fail_misaligned(ki, i, ptr, off, alloc->host, call);
    a = KernelArg{};
    a.kind = KernelArg::global;
    a.alloc = std::move(alloc);
    a.offset = off;
}

bool is_pointer_arg(const KernelInfo& ki, unsigned i)
{
    return i < ki.qual.size() &&
        (ki.qual[i] == CL_KERNEL_ARG_ADDRESS_GLOBAL || ki.qual[i] == CL_KERNEL_ARG_ADDRESS_CONSTANT);
}

// Argument i gets __local memory by the rule m: a size for the group now, or a
// size per work-item or from a function at each launch (workgroup.cpp).
void set_local(KernelInfo& ki, unsigned i, const stdcl_local_t& m, const char* call)
{
    check_index(ki, i, call);
    if (!ki.qual.empty() && ki.qual[i] != CL_KERNEL_ARG_ADDRESS_LOCAL)
        fail(STDCL_EINVAL, "%s: %s is not a __local pointer: a __local marker (CLLOCAL...) was given", call,
             arg_desc(ki, i).c_str());
    int rules = (m.bytes != 0) + (m.per_item != 0) + (m.fn != nullptr);
    if (rules == 0) fail(STDCL_EINVAL, "%s: %s: 0 bytes of local memory", call, arg_desc(ki, i).c_str());
    if (rules > 1)
        fail(STDCL_EINVAL,
             "%s: %s: the __local marker holds more than one size rule (build it with CLLOCAL, "
             "CLLOCAL_PER_ITEM or CLLOCAL_FN)",
             call, arg_desc(ki, i).c_str());
    if (m.bytes)
        for (cl_kernel k : ki.per_group) {
            cl_int err = clSetKernelArg(k, i, m.bytes, nullptr);
            if (err != CL_SUCCESS)
                fail(STDCL_EINVAL, "%s: %s: %zu bytes of __local memory: %s (%d)", call, arg_desc(ki, i).c_str(),
                     m.bytes, cl_error_name(err), int(err));
        }
    if (m.bytes) ki.held[i].fill({});
    ki.args[i] = KernelArg{};
    ki.args[i].kind = KernelArg::local;
    ki.args[i].lrule = m;
    ++ki.args_gen;
}

bool all_zero(const void* value, size_t size)
{
    const unsigned char* b = static_cast<const unsigned char*>(value);
    for (size_t k = 0; k < size; ++k)
        if (b[k]) return false;
    return true;
}

// Gives argument i the value (size bytes, checked and converted) in every kernel
// object of the record, unless they hold these bytes already (a stream's
// unchanged scalars).
void store_value(KernelInfo& ki, unsigned i, size_t size, const void* value, const char* call)
{
    KernelArg& a = ki.args[i];
    if (a.kind == KernelArg::value && size && a.vsize == size) {
        bool same = size == 4 ? std::memcmp(a.vbytes, value, 4) == 0
            : size == 8       ? std::memcmp(a.vbytes, value, 8) == 0
                              : std::memcmp(a.vbytes, value, size) == 0;
        if (same) return;
    }
    a.vsize = 0;  // until every kernel object holds the new value
    for (cl_kernel k : ki.per_group) {
        cl_int err = clSetKernelArg(k, i, size, value);
        if (err == CL_INVALID_ARG_SIZE)
            fail(STDCL_EINVAL, "%s: %s does not take a %zu-byte value", call, arg_desc(ki, i).c_str(), size);
        if (err != CL_SUCCESS)
            fail(STDCL_EINVAL, "%s: %s: %s (%d)", call, arg_desc(ki, i).c_str(), cl_error_name(err), int(err));
    }
    if (a.kind != KernelArg::value) {
        if (a.kind == KernelArg::local) ++ki.args_gen;
        ki.held[i].fill({});
        a = KernelArg{};
        a.kind = KernelArg::value;
    }
    if (size == 4)
        std::memcpy(a.vbytes, value, 4);
    else if (size == 8)
        std::memcpy(a.vbytes, value, 8);
    else if (size <= sizeof a.vbytes)
        std::memcpy(a.vbytes, value, size);
    if (size <= sizeof a.vbytes) a.vsize = static_cast<unsigned char>(size);
}

// set_value's checks, conversions and bindings (below).
__attribute__((noinline)) void set_value_checked(KernelInfo& ki, unsigned i, size_t size, const void* value,
                                                 const char* call, int cls)
{
    KernelArg& arg = ki.args[i];
    arg.fsize = 0;
    if (!value && size) fail(STDCL_EINVAL, "%s: %s: the value is NULL", call, arg_desc(ki, i).c_str());
    bool known = !ki.qual.empty();
    stdcl_local_t marker;
    if (local_marker(size, value, &marker)) {
        set_local(ki, i, marker, call);
        return;
    }
    if (known && ki.qual[i] == CL_KERNEL_ARG_ADDRESS_LOCAL)
        fail(STDCL_EINVAL,
             "%s: %s is __local: pass CLLOCAL(bytes), CLLOCAL_PER_ITEM(bytes) or CLLOCAL_FN(fn, user), "
             "or use clarg_set_local",
             call, arg_desc(ki, i).c_str());
    if (is_pointer_arg(ki, i) && cls != v_unknown && cls != v_pointer) {
        // A call takes 0 for a pointer (a null pointer constant): an integer zero
        // unbinds the argument; any other value is refused.
        if ((cls == v_sint || cls == v_uint) && all_zero(value, size)) {
            bind_global(ki, i, nullptr, call);
            return;
        }
        fail(STDCL_EINVAL, "%s: %s is a pointer; a %s was given", call, arg_desc(ki, i).c_str(),
             value_type_name(cls, size).c_str());
    }
    unsigned char converted[16];
    bool as_is = false;  // a value of known parameter type, taken unconverted
    if (i < ki.ptypes.size() && !is_pointer_arg(ki, i)) {
        const ParamType& pt = ki.ptypes[i];
        if (cls == v_pointer && pt.cls != ParamType::unknown)
            fail(STDCL_EINVAL, "%s: %s is not a pointer; a pointer was given", call, arg_desc(ki, i).c_str());
        std::string why, note;
        int r = convert_value(pt, cls, size, value, converted, &why, &note);
        if (r < 0) fail(STDCL_EINVAL, "%s: %s: %s", call, arg_desc(ki, i).c_str(), why.c_str());
        as_is = r == 0 && pt.cls != ParamType::unknown && known;
        if (r > 0) {
            trace(Trace::launch, "%s: %s: %s", call, arg_desc(ki, i).c_str(), note.c_str());
            value = converted;
            size = pt.size;
        } else if (pt.cls == ParamType::unknown && trace_on(Trace::launch)) {
            trace(Trace::launch, "%s: %s: a %s, passed as it is: the parameter's type is not known (%s)", call,
                  arg_desc(ki, i).c_str(), value_type_name(cls, size).c_str(),
                  ki.type_names[i].empty() ? "no argument information" : "not a built-in type or typedef found");
        }
    } else if (ki.ptypes.empty() && trace_on(Trace::launch) && !is_pointer_arg(ki, i)) {
        trace(Trace::launch, "%s: %s: a %s, checked by size only: the kernel has no argument information", call,
              arg_desc(ki, i).c_str(), value_type_name(cls, size).c_str());
    }
    if (is_pointer_arg(ki, i) || (!known && size == sizeof(void*))) {
        void* p = nullptr;
        if (size == sizeof(void*)) std::memcpy(&p, value, sizeof p);
        if (is_pointer_arg(ki, i)) {
            if (size != sizeof(void*))
                fail(STDCL_EINVAL, "%s: %s is a __global pointer; a %zu-byte value was given", call,
                     arg_desc(ki, i).c_str(), size);
            bind_global(ki, i, p, call);
            return;
        }
        if (p && registry_find(p, nullptr)) {  // no argument information: a clmalloc pointer binds
            bind_global(ki, i, p, call);
            return;
        }
    }
    store_value(ki, i, size, value, call);
    // The local marker's size is left to this path: its tag is in the bytes.
    if (as_is && size && size != sizeof(stdcl_local_t) && size <= UINT32_MAX) {
        arg.fcls = static_cast<signed char>(cls);
        arg.fsize = std::uint32_t(size);
    }
}

// Argument i by value: size bytes at value, of the C type cls (argtype.hpp's
// ValueClass; v_unknown from the untyped forms, which are checked by size only).
// Two cases of a stream's launches take no checks: a value of the C type and size
// the argument took as it is last time, and a pointer for a __global pointer
// bound before (bind_global's own fast path then finds the same allocation).
inline void set_value(KernelInfo& ki, unsigned i, size_t size, const void* value, const char* call, int cls = v_unknown)
{
    check_index(ki, i, call);
    KernelArg& arg = ki.args[i];
    if (arg.fsize && arg.fsize == size && arg.fcls == cls && value && arg.kind == KernelArg::value) {
        store_value(ki, i, size, value, call);
        return;
    }
    if (arg.kind == KernelArg::global && size == sizeof(void*) && (cls == v_pointer || cls == v_unknown) && value &&
        is_pointer_arg(ki, i)) {
        void* p;
        std::memcpy(&p, value, sizeof p);
        bind_global(ki, i, p, call);
        return;
    }
    set_value_checked(ki, i, size, value, call, cls);
}

// probe: the arguments sync_check_launch found that may hold bytes older than
// the host's or never sent (sync_probe_launch),
// or nullptr; caller: where the program called (for its report).
cl_event launch(CLCONTEXT* cp, unsigned devnum, KernelInfo& ki, clndrange_t* user_ndr, int flags, CommandOrder& order,
                const char* call, const std::vector<SyncSuspect>* probe = nullptr, void* caller = nullptr)
{
    clndrange_t resolved = *user_ndr;  // written back only when the launch is enqueued
    const clndrange_t* ndr = &resolved;
    bool driver = user_ndr->ltsz[0] == STDCL_LOCAL_SIZE_DRIVER;  // ltsz stays as it is
    Device& d = cp->devs[devnum];
    size_t g = ki.external ? 0 : size_t(d.group);
    if (g >= ki.per_group.size())
        fail(STDCL_EINVAL, "%s: kernel '%s' has no build for device %u", call, ki.name.c_str(), devnum);
    cl_kernel k = ki.per_group[g];
    for (cl_uint i = 0; i < ki.nargs; ++i) {
        KernelArg& a = ki.args[i];
        if (a.kind != KernelArg::global) continue;
        if (a.alloc->guard) {
            std::lock_guard<std::mutex> lock(a.alloc->mu);
            a.alloc->last_kernel = ki.name;
        }
        KernelInfo::Held& h = ki.held[i][g];
        // The kernel object holds this device's object for the allocation and
        // offset already: an allocation's objects stay until kernel_unbind
        // clears h, before they are released.
        if (h.alloc == a.alloc.get() && h.serial && h.devnum == devnum && h.offset == a.offset) continue;
        // Set again unless this very object is bound: compared by serial, since a
        // released object's handle can come back for a new one.
        std::uint64_t serial = 0;
        cl_mem m = a.alloc->device_mem(devnum, a.offset, &serial);
        if (serial == 0 || h.serial != serial) {
            a.alloc->in_kernel.store(true, std::memory_order_relaxed);  // before the kernel holds m
            check_cl(clSetKernelArg(k, i, sizeof m, &m), call);
        }
        h = {a.alloc.get(), serial, devnum, a.offset};
    }
    fit_local_size(cp, devnum, ki, k, &resolved, call);
    // The driver's choice: NULL, unless the kernel requires a size (fit_local_size set it).
    const size_t* local = resolved.ltsz[0] == STDCL_LOCAL_SIZE_DRIVER ? nullptr : resolved.ltsz;
    if (!driver) set_sized_locals(ki, k, resolved, call);
    cl_event ev = nullptr;
    bool noevent = flags & CL_EVENT_NOEVENT;
    // No offset: NULL, as a program written against OpenCL passes it.
    bool offset = false;
    for (size_t i = 0; i < ndr->dim; ++i) offset = offset || ndr->gtoff[i] != 0;
    if (probe) {
        if (order.count()) wait_events(d, order.count(), order.list());
        sync_probe_launch(
            cp, devnum, ki, *probe,
            [&](unsigned i) { return ki.args[i].alloc->device_mem(devnum, ki.args[i].offset); },
            [&] {
                return clEnqueueNDRangeKernel(d.queue, k, cl_uint(ndr->dim), offset ? ndr->gtoff : nullptr, ndr->gtsz,
                                              local, 0, nullptr, nullptr);
            },
            call, caller);
    }
    cl_int err = clEnqueueNDRangeKernel(d.queue, k, cl_uint(ndr->dim), offset ? ndr->gtoff : nullptr, ndr->gtsz, local,
                                        order.count(), order.list(), noevent ? nullptr : &ev);
    if (err == CL_INVALID_KERNEL_ARGS) {
        std::string unset;
        for (cl_uint i = 0; i < ki.nargs; ++i)
            if (ki.args[i].kind == KernelArg::unset) unset += (unset.empty() ? "" : ", ") + std::to_string(i);
        fail(STDCL_EINVAL, "%s: kernel '%s' has arguments that are not set%s%s", call, ki.name.c_str(),
             unset.empty() ? "" : ": ", unset.c_str());
    }
    if (err == CL_INVALID_WORK_GROUP_SIZE) {
        std::string why = local ? local_size_reason(cp, devnum, ki, k, resolved) : std::string("chosen by the driver");
        fail(STDCL_EINVAL, "%s: kernel '%s': the local size is not valid for device %u (%s): %s", call, ki.name.c_str(),
             devnum, d.name.c_str(), why.c_str());
    }
    if (err != CL_SUCCESS)
        fail_cl(err, "%s: clEnqueueNDRangeKernel of kernel '%s' on device %u", call, ki.name.c_str(), devnum);
    if (!driver) *user_ndr = resolved;
    if (noevent)
        order.enqueued_noevent(noevent_launched(d));
    else
        order.enqueued(ev, flags);
    if (trace_on(Trace::launch)) {
        std::string ls = local ? strprintf("%zu x %zu x %zu", ndr->ltsz[0], ndr->dim > 1 ? ndr->ltsz[1] : 1,
                                           ndr->dim > 2 ? ndr->ltsz[2] : 1)
                               : std::string("chosen by the driver");
        trace(Trace::launch, "%s '%s' on device %u: global %zu x %zu x %zu, local %s%s", call, ki.name.c_str(), devnum,
              ndr->gtsz[0], ndr->dim > 1 ? ndr->gtsz[1] : 1, ndr->dim > 2 ? ndr->gtsz[2] : 1, ls.c_str(),
              noevent && (flags & CL_EVENT_NOWAIT) ? " (nowait, no event)"
                  : noevent                        ? " (waited for, no event)"
                  : flags & CL_EVENT_NOWAIT        ? " (nowait)"
                                                   : "");
    }
    return ev;
}

// caller: where the program called (for the sync check's reports).
cl_event fork_with(CLCONTEXT* cp, unsigned devnum, cl_kernel krn, clndrange_t* ndr, int flags, int nargs,
                   const size_t* sizes, const void* const* values, const int* types, void* caller)
{
    const char* call = nargs >= 0 ? "clforka" : "clfork";
    context_device(cp, devnum, call);
    if (flags & ~kForkFlags) fail(STDCL_EINVAL, "%s: unknown flags 0x%x", call, unsigned(flags & ~kForkFlags));
    event_flags_check(flags);
    const bool sync = sync_check_on();
    // STDCL_LAUNCH_EVENTS=0: the event a NOWAIT launch would return belongs to
    // the library, and the program does not use it.
    if ((flags & CL_EVENT_NOWAIT) && !(flags & CL_EVENT_NORELEASE) && !settings().launch_events)
        flags |= CL_EVENT_NOEVENT;
    bool noevent = flags & CL_EVENT_NOEVENT;
    if (noevent && !(flags & CL_EVENT_NOWAIT))
        fail(STDCL_EINVAL, "%s: CL_EVENT_NOEVENT needs CL_EVENT_NOWAIT (a launch waited for has an event)", call);
    if (noevent && (flags & CL_EVENT_NORELEASE))
        fail(STDCL_EINVAL, "%s: CL_EVENT_NOEVENT with CL_EVENT_NORELEASE: there is no event to hand over", call);
    // The profile times each kernel by its event, and the sync check follows it:
    // with either on, the launch keeps an event of its own (the caller still gets
    // STDCL_LAUNCHED).
    if (noevent && (cp->prof || sync)) flags &= ~CL_EVENT_NOEVENT;
    Device& d = cp->devs[devnum];
    // A launch waited for whose event the program does not keep: the kernel queue
    // is in order, so clFinish waits for it as its event would, and the driver
    // makes no event (what enqueue + clFinish costs in a raw program).  The
    // profile and the sync check follow each launch by its event, and a polled
    // wait (STDCL_WAIT) looks at it.
    const bool finish =
        !(flags & (CL_EVENT_NOWAIT | CL_EVENT_NORELEASE)) && !cp->prof && !sync && !wait_polls(d);
    if (finish) flags |= CL_EVENT_NOEVENT;
    // Claims on the memory the kernel uses, held until the launch is waited for
    // (CL_EVENT_WAIT) or tracked (CL_EVENT_NOWAIT): clfree waits for them.
    SmallVec<AllocUse, 8> uses;
    // The kernel waits for the last command on each allocation it uses; the order
    // is held until the launch is noted or waited for.
    std::optional<CommandOrder> order;
    std::string prof_name;  // the kernel's name for the profile (only when it is on)
    // The kernel's lock is held from the arguments to the enqueue: the record (and
    // its kernel objects) cannot go meanwhile; once enqueued, OpenCL keeps what the
    // command needs even if another thread clcloses the program.
    cl_event ev = with_kernel(cp, krn, call, [&](KernelInfo& ki) {
        check_ndrange(ndr, call, &ki, devnum);  // with ki: names a local size an earlier launch chose
        if (nargs >= 0) {  // clforka: every argument, each launch (none kept from an earlier one)
            if (cl_uint(nargs) != ki.nargs)
                fail(STDCL_EINVAL, "clforka: %d argument(s) given; kernel '%s' takes %u", nargs, ki.name.c_str(),
                     ki.nargs);
            for (int i = 0; i < nargs; ++i)
                set_value(ki, unsigned(i), sizes[i], values[i], "clforka", types ? types[i] : v_unknown);
        }
        std::vector<SyncSuspect> unsent;
        if (sync) sync_check_launch(cp, devnum, ki, call, caller, &unsent);
        for (cl_uint i = 0; i < ki.nargs; ++i) {
            const KernelArg& a = ki.args[i];
            if (a.kind != KernelArg::global) continue;
            // A cl_kernel libstdcl did not create may run in either of two contexts
            // that share its cl_context: its memory must be the launching context's.
            if (ki.external && a.alloc->cp.load(std::memory_order_acquire) != cp)
                fail(STDCL_EINVAL, "%s: %s: the allocation at %p is not attached to %s", call, arg_desc(ki, i).c_str(),
                     (void*)a.alloc->host, cp->label.c_str());
            try {
                uses.emplace_back(a.alloc);
            } catch (const Error& e) {
                fail(e.code, "%s: %s: %s", call, arg_desc(ki, i).c_str(), e.msg.c_str());
            }
            if (!(a.alloc->flags & CL_MEM_RO) && !ki.read_only_arg(i)) a.alloc->note_device_write(devnum);
        }
        order.emplace(d, devnum, uses.data(), uses.size(), d.queue);
        if (cp->prof) prof_name = ki.name;
        cl_event e = launch(cp, devnum, ki, ndr, flags, *order, call, unsent.empty() ? nullptr : &unsent, caller);
        if ((flags & CL_EVENT_NOWAIT) && sync) sync_note_pending_launch(cp, devnum, ki, e, call, caller);
        return e;
    });
    if (finish) noevent_finish(cp, devnum, call);
    if (flags & CL_EVENT_NOEVENT) return STDCL_LAUNCHED;
    size_t items = 0;  // the timeline's work-items (ndr is the range launched)
    if (cp->prof) {
        items = 1;
        for (size_t i = 0; i < ndr->dim && i < 3; ++i) items *= ndr->gtsz[i];
    }
    cl_event done =
        event_finish(cp, devnum, ev, flags, CommandTag{CommandTag::kernel, &prof_name, 0, true, false, items});
    if (!(flags & CL_EVENT_NOWAIT) && sync) sync_settle(call, int(devnum));
    // Waited for, and released: the value only says that the launch succeeded.
    if (!(flags & (CL_EVENT_NOWAIT | CL_EVENT_NORELEASE))) return STDCL_LAUNCHED;
    return noevent ? STDCL_LAUNCHED : done;
}

}  // namespace

}  // namespace stdcl

using namespace stdcl;

extern "C" {

STDCL_API void stdcl_ndrange_set(clndrange_t* ndr, size_t dim, size_t o0, size_t g0, size_t l0, size_t o1, size_t g1,
                                 size_t l1, size_t o2, size_t g2, size_t l2)
{
    if (!ndr) return;
    *ndr = clndrange_t{dim, {o0, o1, o2, 0}, {g0, g1, g2, 1}, {l0, l1, l2, 1}};
}

STDCL_API int stdcl_arg_set(CLCONTEXT* cp, cl_kernel krn, unsigned int argnum, size_t size, const void* value)
{
    return guarded_int([&] {
        return with_kernel(cp, krn, "clarg_set", [&](KernelInfo& ki) {
            set_value(ki, argnum, size, value, "clarg_set");
            return 0;
        });
    });
}

STDCL_API int stdcl_arg_sett(CLCONTEXT* cp, cl_kernel krn, unsigned int argnum, size_t size, int type,
                             const void* value)
{
    return guarded_int([&] {
        if (type < STDCL_TYPE_UNKNOWN || type > STDCL_TYPE_OTHER)
            fail(STDCL_EINVAL, "clarg_set: argument %u: unknown value type %d", argnum, type);
        return with_kernel(cp, krn, "clarg_set", [&](KernelInfo& ki) {
            set_value(ki, argnum, size, value, "clarg_set", type);
            return 0;
        });
    });
}

STDCL_API int stdcl_arg_set_local(CLCONTEXT* cp, cl_kernel krn, unsigned int argnum, size_t size)
{
    return guarded_int([&] {
        return with_kernel(cp, krn, "clarg_set_local", [&](KernelInfo& ki) {
            check_index(ki, argnum, "clarg_set_local");
            if (!ki.qual.empty() && ki.qual[argnum] != CL_KERNEL_ARG_ADDRESS_LOCAL)
                fail(STDCL_EINVAL, "clarg_set_local: %s is not a __local pointer", arg_desc(ki, argnum).c_str());
            if (size == 0)
                fail(STDCL_EINVAL, "clarg_set_local: %s: 0 bytes of local memory", arg_desc(ki, argnum).c_str());
            set_local(ki, argnum, stdcl_local_make(size, 0, nullptr, nullptr), "clarg_set_local");
            return 0;
        });
    });
}

STDCL_API int stdcl_arg_set_global(CLCONTEXT* cp, cl_kernel krn, unsigned int argnum, const void* ptr)
{
    return guarded_int([&] {
        return with_kernel(cp, krn, "clarg_set_global", [&](KernelInfo& ki) {
            check_index(ki, argnum, "clarg_set_global");
            if (!ki.qual.empty() && !is_pointer_arg(ki, argnum))
                fail(STDCL_EINVAL, "clarg_set_global: %s is not a __global or __constant pointer",
                     arg_desc(ki, argnum).c_str());
            bind_global(ki, argnum, ptr, "clarg_set_global");
            return 0;
        });
    });
}

STDCL_API cl_event clfork(CLCONTEXT* cp, unsigned int devnum, cl_kernel krn, clndrange_t* ndr, int flags)
{
    void* caller = __builtin_return_address(0);
    return guarded<cl_event>(
        nullptr, [&] { return fork_with(cp, devnum, krn, ndr, flags, -1, nullptr, nullptr, nullptr, caller); });
}

namespace {

cl_event forkv(CLCONTEXT* cp, unsigned int devnum, cl_kernel krn, clndrange_t* ndr, int flags, int nargs,
               const size_t* sizes, const int* types, const void* const* values, void* caller)
{
    return guarded<cl_event>(nullptr, [&]() -> cl_event {
        if (nargs < 0 || (nargs > 0 && (!sizes || !values))) fail(STDCL_EINVAL, "clforka: bad argument list");
        return fork_with(cp, devnum, krn, ndr, flags, nargs, sizes, values, types, caller);
    });
}

cl_event forktv(CLCONTEXT* cp, unsigned int devnum, cl_kernel krn, clndrange_t* ndr, int flags, int nargs,
                const size_t* sizes, const int* types, const void* const* values, void* caller)
{
    return guarded<cl_event>(nullptr, [&]() -> cl_event {
        if (nargs < 0 || (nargs > 0 && (!sizes || !types || !values))) fail(STDCL_EINVAL, "clforka: bad argument list");
        for (int i = 0; i < nargs; ++i)
            if (types[i] < STDCL_TYPE_UNKNOWN || types[i] > STDCL_TYPE_OTHER)
                fail(STDCL_EINVAL, "clforka: argument %d: unknown value type %d", i, types[i]);
        return fork_with(cp, devnum, krn, ndr, flags, nargs, sizes, values, types, caller);
    });
}

// stdcl_forkt's triples (size, type, value) or stdcl_forka's pairs (size, value).
cl_event fork_va(CLCONTEXT* cp, unsigned int devnum, cl_kernel krn, clndrange_t* ndr, int flags, int nargs, va_list ap,
                 bool typed, void* caller)
{
    if (nargs < 0 || nargs > 64)
        return guarded<cl_event>(nullptr, [&]() -> cl_event { fail(STDCL_EINVAL, "clforka: %d arguments", nargs); });
    size_t sizes[65];
    int types[65];
    const void* values[65];
    for (int i = 0; i < nargs; ++i) {
        sizes[i] = va_arg(ap, size_t);
        if (typed) types[i] = va_arg(ap, int);
        values[i] = va_arg(ap, const void*);
    }
    return typed ? forktv(cp, devnum, krn, ndr, flags, nargs, sizes, types, values, caller)
                 : forkv(cp, devnum, krn, ndr, flags, nargs, sizes, nullptr, values, caller);
}

}  // namespace

STDCL_API cl_event stdcl_forkv(CLCONTEXT* cp, unsigned int devnum, cl_kernel krn, clndrange_t* ndr, int flags,
                               int nargs, const size_t* sizes, const void* const* values)
{
    return forkv(cp, devnum, krn, ndr, flags, nargs, sizes, nullptr, values, __builtin_return_address(0));
}

STDCL_API cl_event stdcl_forktv(CLCONTEXT* cp, unsigned int devnum, cl_kernel krn, clndrange_t* ndr, int flags,
                                int nargs, const size_t* sizes, const int* types, const void* const* values)
{
    return forktv(cp, devnum, krn, ndr, flags, nargs, sizes, types, values, __builtin_return_address(0));
}

STDCL_API cl_event stdcl_forkt(CLCONTEXT* cp, unsigned int devnum, cl_kernel krn, clndrange_t* ndr, int flags,
                               int nargs, ...)
{
    va_list ap;
    va_start(ap, nargs);
    cl_event ev = fork_va(cp, devnum, krn, ndr, flags, nargs, ap, true, __builtin_return_address(0));
    va_end(ap);
    return ev;
}

STDCL_API cl_event stdcl_forka(CLCONTEXT* cp, unsigned int devnum, cl_kernel krn, clndrange_t* ndr, int flags,
                               int nargs, ...)
{
    va_list ap;
    va_start(ap, nargs);
    cl_event ev = fork_va(cp, devnum, krn, ndr, flags, nargs, ap, false, __builtin_return_address(0));
    va_end(ap);
    return ev;
}

}  // extern "C"
