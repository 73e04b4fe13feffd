// SPDX-License-Identifier: MIT
// launch.cpp: kernel arguments (clarg_set and its forms), clfork and clforka, and the
// registry of kernels that lets a __global argument bind per device at launch.
#include "internal/core.hpp"
#include "internal/diag.hpp"

#include <chrono>
#include <cstring>
#include <optional>
#include <thread>

namespace stdcl {

namespace {

struct KernelTable {
    std::shared_mutex mu;
    std::unordered_map<cl_kernel, std::shared_ptr<KernelInfo>> by_kernel;
    std::atomic<uint64_t> gen{1};  // bumped (under mu) at every change of by_kernel
};
__attribute__((always_inline)) inline KernelTable& kernels()
{
    static KernelTable* t = new KernelTable;  // never destroyed: usable during exit
    return *t;
}

// The kernels last looked up, for clarg_set's fast path (with_kernel): a small
// table, direct-mapped by the kernel handle, of lock slots.  kernel_find writes
// into the record's slot, under the slot's lock, the handle, the kernel table's
// generation and the record, then puts the slot in the table.  A reader locks the
// slot it finds (slots are never freed) and takes the record only when the slot
// names its handle and the generation is unchanged: the kernel table then still
// maps the handle to the record and holds a reference to it.  No thread-local
// storage: the library costs the same loaded with the program or by dlopen().
constexpr unsigned kFastBits = 8;
std::atomic<KernelSlot*> g_fast[1u << kFastBits];  // constant-initialised: usable during exit

__attribute__((always_inline)) inline std::atomic<KernelSlot*>& fast_entry(cl_kernel k)
{
    uint64_t h = (uint64_t(uintptr_t(k)) >> 4) * 0x9e3779b97f4a7c15ull;
    return g_fast[h >> (64 - kFastBits)];
}

// Remembers k -> ki at generation gen (read under the kernel table's lock).
void fast_store(cl_kernel k, uint64_t gen, KernelInfo* ki)
{
    KernelSlot* s = ki->mu.slot();
    s->lock();
    s->k = k;
    s->gen = gen;
    s->ki = ki;
    s->unlock();
    fast_entry(k).store(s, std::memory_order_release);
}

// Kernel lock slots: allocated in blocks that are never freed, reused through a list.
struct SlotPool {
    std::mutex mu;
    KernelSlot* free = nullptr;
};
SlotPool& slot_pool()
{
    static SlotPool* p = new SlotPool;  // never destroyed: usable during exit
    return *p;
}

std::shared_ptr<KernelInfo> describe_external(cl_kernel k)
{
    auto ki = std::make_shared<KernelInfo>();
    ki->external = true;
    cl_context c = nullptr;
    if (clGetKernelInfo(k, CL_KERNEL_CONTEXT, sizeof c, &c, nullptr) != CL_SUCCESS)
        fail(STDCL_EINVAL, "%p is not a valid cl_kernel", (void*)k);
    ki->cp = context_of_cl(c);
    size_t n = 0;
    check_cl(clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, 0, nullptr, &n), "clGetKernelInfo(CL_KERNEL_FUNCTION_NAME)");
    ki->name.resize(n);
    if (n)
        check_cl(clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, n, &ki->name[0], nullptr),
                 "clGetKernelInfo(CL_KERNEL_FUNCTION_NAME)");
    ki->name.resize(strlen(ki->name.c_str()));
    check_cl(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof ki->nargs, &ki->nargs, nullptr),
             "clGetKernelInfo(CL_KERNEL_NUM_ARGS)");
    ki->set_nargs(ki->nargs);
    std::vector<cl_kernel_arg_address_qualifier> q(ki->nargs);
    bool ok = true;
    for (cl_uint i = 0; i < ki->nargs && ok; ++i)
        ok = clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof q[i], &q[i], nullptr) == CL_SUCCESS;
    if (ok) ki->qual = q;
    ki->per_group.push_back(k);
    return ki;
}

// The kernel's record, checked against the caller's context (cp may be NULL).
std::shared_ptr<KernelInfo> kernel_for(CLCONTEXT* cp, cl_kernel k, const char* call)
{
    if (!k) {
        // Most often the NULL of a clsym that failed: its reason, if nobody read it.
        std::string why = unread_error();
        if (!why.empty())
            fail(STDCL_EINVAL, "%s: the kernel is NULL (this thread's last failure, unread: %s)", call, why.c_str());
        fail(STDCL_EINVAL, "%s: the kernel is NULL", call);
    }
    if (cp) context_check(cp);
    auto ki = kernel_find(k);
    if (ki->closed)
        fail(STDCL_ESTATE, "%s: kernel %p ('%s') was released: its program was closed with clclose", call, (void*)k,
             ki->name.c_str());
    if (cp && ki->cp && ki->cp != cp)
        fail(STDCL_EINVAL, "%s: kernel '%s' belongs to %s, not to %s", call, ki->name.c_str(), ki->cp->label.c_str(),
             cp->label.c_str());
    if (!ki->cp) fail(STDCL_EINVAL, "%s: kernel '%s' does not belong to a libstdcl context", call, ki->name.c_str());
    return ki;
}

// Runs f on k's record with the record's lock held.  The fast path, for a kernel in
// the fast table: no table lock and no reference count.  It locks the slot (never
// freed), then checks that it names k at the table's current generation: the table
// then still holds the record, and ~KernelInfo waits for the lock, so the record
// outlives f.
// Records of kernels libstdcl did not create take the full path (their context may
// have gone), as do tombstones, a NULL kernel and a kernel of another context.
template <class F>
auto with_kernel(CLCONTEXT* cp, cl_kernel k, const char* call, F&& f) -> decltype(f(std::declval<KernelInfo&>()))
{
    auto& t = kernels();
    KernelSlot* slot = k ? fast_entry(k).load(std::memory_order_acquire) : nullptr;
    if (slot) {
        slot->lock();
        KernelInfo* ki = slot->ki;
        if (slot->k == k && slot->gen == t.gen.load(std::memory_order_acquire) && !ki->external && !ki->closed &&
            ki->cp && (!cp || cp == ki->cp)) {
            std::lock_guard<KernelSlot> held(*slot, std::adopt_lock);
            return f(*ki);
        }
        slot->unlock();
    }
    auto ki = kernel_for(cp, k, call);
    std::lock_guard<KernelLock> lock(ki->mu);
    return f(*ki);
}

void check_index(const KernelInfo& ki, unsigned i, const char* call)
{
    if (i >= ki.nargs)
        fail(STDCL_EINVAL, "%s: argument %u is out of range: kernel '%s' has %u argument(s)", call, i, ki.name.c_str(),
             ki.nargs);
}

std::string arg_desc(const KernelInfo& ki, unsigned i)
{
    std::string s = strprintf("argument %u of kernel '%s'", i, ki.name.c_str());
    if (i < ki.type_names.size() && !ki.type_names[i].empty()) s += " (" + ki.type_names[i] + ")";
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
        if (off < al.size && !al.dead.load(std::memory_order_acquire) && al.cp.load(std::memory_order_acquire) == ki.cp) {
            if (off & (ki.cp->mem_align - 1)) fail_misaligned(ki, i, ptr, size_t(off), al.host, call);
            a.offset = size_t(off);
            return;
        }
    }
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
    if (alloc->cp != ki.cp)
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
        fail(STDCL_EINVAL, "%s: %s: the __local marker holds more than one size rule (build it with CLLOCAL, "
             "CLLOCAL_PER_ITEM or CLLOCAL_FN)", call, arg_desc(ki, i).c_str());
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

void set_value(KernelInfo& ki, unsigned i, size_t size, const void* value, const char* call)
{
    check_index(ki, i, call);
    if (!value && size) fail(STDCL_EINVAL, "%s: %s: the value is NULL", call, arg_desc(ki, i).c_str());
    bool known = !ki.qual.empty();
    stdcl_local_t marker;
    if (local_marker(size, value, &marker)) {
        set_local(ki, i, marker, call);
        return;
    }
    if (known && ki.qual[i] == CL_KERNEL_ARG_ADDRESS_LOCAL)
        fail(STDCL_EINVAL, "%s: %s is __local: pass CLLOCAL(bytes), CLLOCAL_PER_ITEM(bytes) or CLLOCAL_FN(fn, user), "
             "or use clarg_set_local", call, arg_desc(ki, i).c_str());
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
    for (cl_kernel k : ki.per_group) {
        cl_int err = clSetKernelArg(k, i, size, value);
        if (err == CL_INVALID_ARG_SIZE)
            fail(STDCL_EINVAL, "%s: %s does not take a %zu-byte value", call, arg_desc(ki, i).c_str(), size);
        if (err != CL_SUCCESS)
            fail(STDCL_EINVAL, "%s: %s: %s (%d)", call, arg_desc(ki, i).c_str(), cl_error_name(err), int(err));
    }
    ki.held[i].fill({});
    ki.args[i] = KernelArg{};
    ki.args[i].kind = KernelArg::value;
}

void check_ndrange(const clndrange_t* ndr)
{
    if (!ndr) fail(STDCL_EINVAL, "clfork: the index space (clndrange_t*) is NULL");
    if (ndr->dim < 1 || ndr->dim > 3) fail(STDCL_EINVAL, "clfork: the index space has %zu dimensions (1 to 3)", ndr->dim);
    for (size_t i = 0; i < ndr->dim; ++i) {
        if (ndr->gtsz[i] == 0) fail(STDCL_EINVAL, "clfork: the global size in dimension %zu is 0", i);
        if (ndr->ltsz[i] && ndr->gtsz[i] % ndr->ltsz[i])
            fail(STDCL_EINVAL, "clfork: the global size %zu in dimension %zu is not a multiple of the local size %zu",
                 ndr->gtsz[i], i, ndr->ltsz[i]);
    }
}

cl_event launch(CLCONTEXT* cp, unsigned devnum, KernelInfo& ki, clndrange_t* user_ndr, int flags,
                CommandOrder& order, const char* call)
{
    clndrange_t resolved = *user_ndr;  // written back only when the launch is enqueued
    const clndrange_t* ndr = &resolved;
    Device& d = cp->devs[devnum];
    size_t g = ki.external ? 0 : size_t(d.group);
    if (g >= ki.per_group.size()) fail(STDCL_EINVAL, "clfork: kernel '%s' has no build for device %u", ki.name.c_str(), devnum);
    cl_kernel k = ki.per_group[g];
    for (cl_uint i = 0; i < ki.nargs; ++i) {
        KernelArg& a = ki.args[i];
        if (a.kind != KernelArg::global) continue;
        if (a.alloc->guard) {
            std::lock_guard<std::mutex> lock(a.alloc->mu);
            a.alloc->last_kernel = ki.name;
        }
        // Set again unless this very object is bound: compared by serial, since a
        // released object's handle can come back for a new one.
        std::uint64_t serial = 0;
        cl_mem m = a.alloc->device_mem(devnum, a.offset, &serial);
        KernelInfo::Held& h = ki.held[i][g];
        if (serial == 0 || h.serial != serial) {
            a.alloc->in_kernel.store(true, std::memory_order_relaxed);  // before the kernel holds m
            check_cl(clSetKernelArg(k, i, sizeof m, &m), "clfork: clSetKernelArg of a __global argument");
            h = {a.alloc.get(), serial};
        }
    }
    fit_local_size(cp, devnum, ki, k, &resolved, call);
    set_sized_locals(ki, k, resolved, call);
    cl_event ev = nullptr;
    cl_int err = clEnqueueNDRangeKernel(d.queue, k, cl_uint(ndr->dim), ndr->gtoff, ndr->gtsz, ndr->ltsz, order.count(),
                                        order.list(), &ev);
    if (err == CL_INVALID_KERNEL_ARGS) {
        std::string unset;
        for (cl_uint i = 0; i < ki.nargs; ++i)
            if (ki.args[i].kind == KernelArg::unset) unset += (unset.empty() ? "" : ", ") + std::to_string(i);
        fail(STDCL_EINVAL, "clfork: kernel '%s' has arguments that are not set%s%s", ki.name.c_str(),
             unset.empty() ? "" : ": ", unset.c_str());
    }
    if (err == CL_INVALID_WORK_GROUP_SIZE)
        fail(STDCL_EINVAL, "clfork: kernel '%s': the local size is not valid for device %u (%s)", ki.name.c_str(),
             devnum, d.name.c_str());
    if (err != CL_SUCCESS)
        fail_cl(err, "clfork: clEnqueueNDRangeKernel of kernel '%s' on device %u", ki.name.c_str(), devnum);
    *user_ndr = resolved;
    order.enqueued(ev, flags);
    if (trace_on(Trace::launch))
        trace(Trace::launch, "clfork '%s' on device %u: global %zu x %zu x %zu, local %zu x %zu x %zu%s", ki.name.c_str(),
              devnum, ndr->gtsz[0], ndr->dim > 1 ? ndr->gtsz[1] : 1, ndr->dim > 2 ? ndr->gtsz[2] : 1, ndr->ltsz[0],
              ndr->dim > 1 ? ndr->ltsz[1] : 1, ndr->dim > 2 ? ndr->ltsz[2] : 1,
              flags & CL_EVENT_NOWAIT ? " (nowait)" : "");
    return ev;
}

cl_event fork_with(CLCONTEXT* cp, unsigned devnum, cl_kernel krn, clndrange_t* ndr, int flags, int nargs,
                   const size_t* sizes, const void* const* values)
{
    constexpr int known = CL_EVENT_WAIT | CL_EVENT_NOWAIT | CL_EVENT_RELEASE | CL_EVENT_NORELEASE;
    context_device(cp, devnum);
    if (flags & ~known) fail(STDCL_EINVAL, "clfork: unknown flags 0x%x", unsigned(flags & ~known));
    event_flags_check(flags);
    check_ndrange(ndr);
    const char* call = nargs >= 0 ? "clforka" : "clfork";
    // Claims on the memory the kernel uses, held until the launch is waited for
    // (CL_EVENT_WAIT) or tracked (CL_EVENT_NOWAIT): clfree waits for them.
    std::vector<AllocUse> uses;
    // The kernel waits for the last command on each allocation it uses; the order
    // is held until the launch is noted or waited for.
    Device& d = cp->devs[devnum];
    std::optional<CommandOrder> order;
    std::string prof_name;  // the kernel's name for the profile (only when it is on)
    // The kernel's lock is held from the arguments to the enqueue: the record (and
    // its kernel objects) cannot go meanwhile; once enqueued, OpenCL keeps what the
    // command needs even if another thread clcloses the program.
    cl_event ev = with_kernel(cp, krn, call, [&](KernelInfo& ki) {
        if (nargs >= 0) {  // clforka: every argument, each launch (none kept from an earlier one)
            if (cl_uint(nargs) != ki.nargs)
                fail(STDCL_EINVAL, "clforka: %d argument(s) given; kernel '%s' takes %u", nargs, ki.name.c_str(),
                     ki.nargs);
            for (int i = 0; i < nargs; ++i) set_value(ki, unsigned(i), sizes[i], values[i], "clforka");
        }
        uses.reserve(ki.nargs);
        for (cl_uint i = 0; i < ki.nargs; ++i) {
            const KernelArg& a = ki.args[i];
            if (a.kind != KernelArg::global) continue;
            try {
                uses.emplace_back(a.alloc);
            } catch (const Error& e) {
                fail(e.code, "clfork: %s: %s", arg_desc(ki, i).c_str(), e.msg.c_str());
            }
        }
        std::vector<Allocation*> allocs;
        allocs.reserve(uses.size());
        for (const AllocUse& u : uses) allocs.push_back(&*u);
        order.emplace(d, devnum, std::move(allocs));
        if (cp->prof) prof_name = ki.name;
        return launch(cp, devnum, ki, ndr, flags, *order, call);
    });
    return event_finish(cp, devnum, ev, flags, CommandTag{CommandTag::kernel, &prof_name, 0, true});
}

}  // namespace

std::shared_ptr<KernelInfo> kernel_find(cl_kernel k)
{
    auto& t = kernels();
    {
        std::shared_lock<std::shared_mutex> lock(t.mu);
        auto it = t.by_kernel.find(k);
        if (it != t.by_kernel.end()) {
            // The generation changes only under the unique lock.
            fast_store(k, t.gen.load(std::memory_order_relaxed), it->second.get());
            return it->second;
        }
    }
    auto ki = describe_external(k);
    std::unique_lock<std::shared_mutex> lock(t.mu);
    auto res = t.by_kernel.emplace(k, ki);
    if (res.second) t.gen.fetch_add(1, std::memory_order_release);
    return res.first->second;
}

void kernel_register(const std::shared_ptr<KernelInfo>& ki)
{
    auto& t = kernels();
    std::unique_lock<std::shared_mutex> lock(t.mu);
    t.gen.fetch_add(1, std::memory_order_release);  // first: a throw below leaves no cache trusted
    for (cl_kernel k : ki->per_group) t.by_kernel[k] = ki;
}

void kernel_unregister(const KernelInfo& ki) noexcept
{
    // A tombstone per kernel: a cl_kernel used after clclose gets a clear error
    // instead of a driver call on a released object.  A tombstone is replaced when
    // the driver hands out the same address for a new kernel.
    std::shared_ptr<KernelInfo> tomb;
    try {
        tomb = std::make_shared<KernelInfo>();
        tomb->closed = true;
        tomb->external = true;  // owns nothing
        tomb->name = ki.name;
    } catch (...) {
        tomb.reset();  // out of memory: forget the kernels without a tombstone
    }
    auto& t = kernels();
    std::unique_lock<std::shared_mutex> lock(t.mu);
    // First: a record must be out of the fast table before its last reference
    // can go (with_kernel checks the generation under the record's lock, and
    // ~KernelInfo takes that lock).
    t.gen.fetch_add(1, std::memory_order_release);
    for (cl_kernel k : ki.per_group) {
        auto it = t.by_kernel.find(k);
        if (it == t.by_kernel.end()) continue;
        if (tomb) it->second = tomb;  // no allocation: the entry exists
        else t.by_kernel.erase(it);
    }
}

void kernel_unbind(const Allocation& a) noexcept
{
    if (!a.in_kernel.load(std::memory_order_relaxed)) return;
    // Under the table's shared lock, each record's lock in turn (the order
    // kernel_find takes them in): no copy of the table, so nothing to allocate.
    auto& t = kernels();
    std::shared_lock<std::shared_mutex> lock(t.mu);
    for (auto& entry : t.by_kernel) {
        KernelInfo& ki = *entry.second;
        // One group per entry: the group whose kernel object is the entry's key.
        size_t g = 0;
        while (g < ki.per_group.size() && ki.per_group[g] != entry.first) ++g;
        if (g >= ki.per_group.size() || g >= 8) continue;
        ki.mu.lock();
        for (cl_uint i = 0; i < cl_uint(ki.held.size()); ++i) {
            KernelInfo::Held& h = ki.held[i][g];
            if (h.alloc != &a) continue;
            cl_mem none = nullptr;
            cl_int err = clSetKernelArg(entry.first, i, sizeof none, &none);
            if (err != CL_SUCCESS)
                trace(Trace::mem, "kernel '%s' argument %u: clSetKernelArg(NULL) before a release failed (%s)",
                      ki.name.c_str(), i, cl_error_name(err));
            h = {};
        }
        ki.mu.unlock();
    }
}

void KernelInfo::set_nargs(cl_uint n)
{
    nargs = n;
    args.assign(n, KernelArg{});
    held.assign(n, {});
}

KernelLock::KernelLock()
{
    SlotPool& p = slot_pool();
    std::lock_guard<std::mutex> lock(p.mu);
    if (!p.free) {
        constexpr size_t n = 64;
        KernelSlot* block = new KernelSlot[n];  // never freed: a stale fast path may lock it
        for (size_t i = 0; i < n; ++i) block[i].next_free = i + 1 < n ? &block[i + 1] : nullptr;
        p.free = block;
    }
    slot_ = p.free;
    p.free = slot_->next_free;
    slot_->next_free = nullptr;
}

KernelLock::~KernelLock()
{
    SlotPool& p = slot_pool();
    std::lock_guard<std::mutex> lock(p.mu);
    slot_->next_free = p.free;
    p.free = slot_;
}

void KernelSlot::lock_slow()
{
    for (unsigned n = 0;; ++n) {
        if (word.load(std::memory_order_relaxed) == 0 && word.exchange(1, std::memory_order_acquire) == 0)
            return;
        if (n < 64) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        } else if (n < 256) {
            std::this_thread::yield();
        } else {
            std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
    }
}

KernelInfo::~KernelInfo()
{
    // A with_kernel fast path that checked this record before it left the table may
    // still hold its lock: wait for it.  Any later one finds the generation changed.
    mu.lock();
    mu.unlock();
    if (external) return;
    for (cl_kernel k : per_group)
        if (k) clReleaseKernel(k);
}

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
    return guarded<cl_event>(nullptr, [&] { return fork_with(cp, devnum, krn, ndr, flags, -1, nullptr, nullptr); });
}

STDCL_API cl_event stdcl_forkv(CLCONTEXT* cp, unsigned int devnum, cl_kernel krn, clndrange_t* ndr, int flags, int nargs,
                               const size_t* sizes, const void* const* values)
{
    return guarded<cl_event>(nullptr, [&]() -> cl_event {
        if (nargs < 0 || (nargs > 0 && (!sizes || !values))) fail(STDCL_EINVAL, "clforka: bad argument list");
        return fork_with(cp, devnum, krn, ndr, flags, nargs, sizes, values);
    });
}

STDCL_API cl_event stdcl_forka(CLCONTEXT* cp, unsigned int devnum, cl_kernel krn, clndrange_t* ndr, int flags,
                               int nargs, ...)
{
    if (nargs < 0 || nargs > 64) {
        return guarded<cl_event>(nullptr, [&]() -> cl_event { fail(STDCL_EINVAL, "clforka: %d arguments", nargs); });
    }
    size_t sizes[65];
    const void* values[65];
    va_list ap;
    va_start(ap, nargs);
    for (int i = 0; i < nargs; ++i) {
        sizes[i] = va_arg(ap, size_t);
        values[i] = va_arg(ap, const void*);
    }
    va_end(ap);
    return stdcl_forkv(cp, devnum, krn, ndr, flags, nargs, sizes, values);
}

}  // extern "C"
