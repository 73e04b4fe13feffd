// SPDX-License-Identifier: MIT
// kernels.cpp: the kernel record's whole life: made (kernel_create, or a kernel
// the program made itself, described on first use), tabled by its cl_kernel
// handles, locked (KernelLock, the fast path's table), and destroyed.
#include "kernels/kernel.hpp"
#include "helpers/cl_util.hpp"
#include "helpers/diag.hpp"

#include <chrono>
#include <cstring>
#include <deque>
#include <shared_mutex>
#include <thread>
#include <unordered_map>

namespace stdcl {

// The fast path's table and the kernel table's generation (kernel.hpp).
std::atomic<KernelSlot*> g_fast_kernels[1u << kFastKernelBits];  // constant-initialised: usable during exit
std::atomic<uint64_t> g_kernel_gen{1};

namespace {

// The number of k's arguments and, where the build kept argument information,
// their address qualifiers and type names.  A failing query throws when strict,
// else leaves the arguments undescribed (a kernel the program made itself).
void describe_args(KernelInfo& ki, cl_kernel k, bool strict, const TypedefTable* typedefs)
{
    check_cl(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof ki.nargs, &ki.nargs, nullptr),
             "clGetKernelInfo(CL_KERNEL_NUM_ARGS)");
    ki.set_nargs(ki.nargs);
    std::vector<cl_kernel_arg_address_qualifier> q(ki.nargs);
    std::vector<std::string> names(ki.nargs);
    for (cl_uint i = 0; i < ki.nargs; ++i) {
        cl_int err = clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof q[i], &q[i], nullptr);
        if (err == CL_KERNEL_ARG_INFO_NOT_AVAILABLE || (err != CL_SUCCESS && !strict))
            return;  // arguments are classified by value
        check_cl(err, "clGetKernelArgInfo(CL_KERNEL_ARG_ADDRESS_QUALIFIER)");
        err = cl_string(
            [&](size_t n, void* v, size_t* r) { return clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_NAME, n, v, r); },
            &names[i]);
        if (err == CL_KERNEL_ARG_INFO_NOT_AVAILABLE || (err != CL_SUCCESS && !strict)) continue;  // only for messages
        check_cl(err, "clGetKernelArgInfo(CL_KERNEL_ARG_TYPE_NAME)");
    }
    // size_t and its kin are as wide as the device's addresses.
    size_t addr_bytes = sizeof(void*);
    cl_program prog = nullptr;
    cl_device_id dev = nullptr;
    cl_uint bits = 0;
    if (clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof prog, &prog, nullptr) == CL_SUCCESS &&
        clGetProgramInfo(prog, CL_PROGRAM_DEVICES, sizeof dev, &dev, nullptr) == CL_SUCCESS &&
        clGetDeviceInfo(dev, CL_DEVICE_ADDRESS_BITS, sizeof bits, &bits, nullptr) == CL_SUCCESS && bits)
        addr_bytes = bits / 8;
    std::vector<cl_kernel_arg_type_qualifier> tq(ki.nargs, 0);
    for (cl_uint i = 0; i < ki.nargs; ++i)
        if (clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof tq[i], &tq[i], nullptr) != CL_SUCCESS)
            tq[i] = 0;  // only the sync check uses it: a query that fails means "may write"
    std::vector<ParamType> types(ki.nargs);
    for (cl_uint i = 0; i < ki.nargs; ++i) {
        if (q[i] != CL_KERNEL_ARG_ADDRESS_PRIVATE) {
            types[i].cls = ParamType::pointer;
            types[i].size = addr_bytes;
        } else if (!names[i].empty()) {
            types[i] = param_type(names[i], typedefs, addr_bytes);
        }
    }
    ki.qual = std::move(q);
    ki.type_names = std::move(names);
    ki.ptypes = std::move(types);
    ki.tqual = std::move(tq);
}

// Closed records kept: a handle used after its kernel was released gets a clear
// error while its record is among the last kClosedKept closed.  Each holds its
// kernel objects (and so their program) until it is let go.
constexpr size_t kClosedKept = 32;

struct KernelTable {
    std::shared_mutex mu;
    std::unordered_map<cl_kernel, std::shared_ptr<KernelInfo>> by_kernel;
    // Tombstones, oldest first.  A tombstone holds a reference to each of its
    // kernel objects, so no new kernel can be given the same handle while its
    // entry stands: a handle found on a tombstone is always the released kernel.
    std::deque<std::shared_ptr<KernelInfo>> closed;
    std::atomic<uint64_t>& gen = g_kernel_gen;  // bumped (under mu) at every change of by_kernel
};
__attribute__((always_inline)) inline KernelTable& kernels()
{
    static KernelTable* t = new KernelTable;  // never destroyed: usable during exit
    return *t;
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
    cl_int err = clGetKernelInfo(k, CL_KERNEL_CONTEXT, sizeof c, &c, nullptr);
    if (err == CL_INVALID_KERNEL) fail(STDCL_EINVAL, "%p is not a valid cl_kernel", (void*)k);
    check_cl(err, "clGetKernelInfo(CL_KERNEL_CONTEXT)");
    ki->ctx = c;
    ki->cp = context_of_cl(c);
    check_cl(
        cl_string([&](size_t n, void* v, size_t* r) { return clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, n, v, r); },
                  &ki->name),
        "clGetKernelInfo(CL_KERNEL_FUNCTION_NAME)");
    if (!ki->cp) return ki;  // refused by kernel_for; never tabled
    describe_args(*ki, k, false, nullptr);
    // The record holds a reference: while it is tabled the driver cannot give
    // its handle to another kernel (kernel_find learns from the reference count
    // when the program has released its own).
    ki->per_group.reserve(1);
    check_cl(clRetainKernel(k), "clRetainKernel");
    ki->per_group.push_back(k);  // reserved: no allocation
    return ki;
}

// Whether the program has released external kernel k: libstdcl's reference is
// the last.
bool released_by_program(cl_kernel k)
{
    cl_uint refs = 0;
    return clGetKernelInfo(k, CL_KERNEL_REFERENCE_COUNT, sizeof refs, &refs, nullptr) == CL_SUCCESS && refs <= 1;
}

// Takes rec's kernels out of the table (the entries that still name rec).
void untable(KernelTable& t, const KernelInfo& rec)
{
    for (cl_kernel k : rec.per_group) {
        auto it = t.by_kernel.find(k);
        if (it != t.by_kernel.end() && it->second.get() == &rec) t.by_kernel.erase(it);
    }
}

// Sets to NULL the arguments of kernel object k (device group g of ki) that hold
// a memory object of allocation only (nullptr: of any allocation).  ki's lock held.
void unbind_held(KernelInfo& ki, size_t g, cl_kernel k, const Allocation* only) noexcept
{
    if (g >= 8) return;  // held tracks the first 8 groups
    for (cl_uint i = 0; i < cl_uint(ki.held.size()); ++i) {
        KernelInfo::Held& h = ki.held[i][g];
        if (!h.alloc || (only && h.alloc != only)) continue;
        cl_mem none = nullptr;
        cl_int err = clSetKernelArg(k, i, sizeof none, &none);
        if (err != CL_SUCCESS)
            trace(Trace::mem, "kernel '%s' argument %u: clSetKernelArg(NULL) before a release failed (%s)",
                  ki.name.c_str(), i, cl_error_name(err));
        h = {};
    }
}

// Replaces ki's entries with a tombstone that holds its kernel objects, and lets
// the oldest tombstone go past kClosedKept (into *gone, released by the caller
// after the table's lock).  The table's unique lock held; the generation raised.
// Out of memory: ki's entries go without a tombstone.  The kernels the tombstone
// keeps hold no memory object: kernel_unbind does not look at tombstones, and
// their arguments are never set again.
void entomb(KernelTable& t, KernelInfo& ki, std::vector<std::shared_ptr<KernelInfo>>* gone) noexcept
{
    std::shared_ptr<KernelInfo> tomb;
    try {
        tomb = std::make_shared<KernelInfo>();
        tomb->closed = true;
        tomb->external = ki.external;
        tomb->cp = ki.cp;
        tomb->ctx = ki.ctx;
        tomb->name = ki.name;
        tomb->per_group.reserve(ki.per_group.size());
        gone->reserve(gone->size() + 1);
        t.closed.push_back(tomb);
    } catch (...) {
        if (tomb && !t.closed.empty() && t.closed.back() == tomb) t.closed.pop_back();
        untable(t, ki);
        return;
    }
    ki.mu.lock();  // after the table's lock, as kernel_find and kernel_unbind take them
    for (size_t g = 0; g < ki.per_group.size(); ++g) unbind_held(ki, g, ki.per_group[g], nullptr);
    ki.mu.unlock();
    for (cl_kernel k : ki.per_group) {
        auto it = t.by_kernel.find(k);
        if (it == t.by_kernel.end() || it->second.get() != &ki) continue;
        if (clRetainKernel(k) != CL_SUCCESS) {
            t.by_kernel.erase(it);
            continue;
        }
        tomb->per_group.push_back(k);  // reserved: no allocation
        it->second = tomb;  // no allocation: the entry exists
    }
    if (t.closed.size() > kClosedKept) {
        untable(t, *t.closed.front());
        gone->push_back(std::move(t.closed.front()));  // reserved: no allocation
        t.closed.pop_front();
    }
}

// Entombs the external records whose kernels the program has released (the table's
// unique lock held; the generation raised).
void sweep_released(KernelTable& t, std::vector<std::shared_ptr<KernelInfo>>* gone) noexcept
{
    std::vector<std::shared_ptr<KernelInfo>> dead;
    try {
        for (auto& e : t.by_kernel)
            if (e.second->external && !e.second->closed && released_by_program(e.first)) dead.push_back(e.second);
    } catch (...) {
        return;  // out of memory: swept another time
    }
    for (auto& rec : dead) entomb(t, *rec, gone);
    for (auto& rec : dead) {
        try {
            gone->push_back(std::move(rec));  // released after the lock
        } catch (...) {
        }
    }
}

}  // namespace

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
    if (cp) context_check(cp, call);
    auto ki = kernel_find(k);
    if (ki->closed && ki->external)
        fail(STDCL_ESTATE, "%s: kernel %p ('%s') was released: the program released it (clReleaseKernel)", call,
             (void*)k, ki->name.c_str());
    if (ki->closed)
        fail(STDCL_ESTATE, "%s: kernel %p ('%s') was released: its program was closed with clclose", call, (void*)k,
             ki->name.c_str());
    if (cp && ki->cp && !kernel_usable_in(*ki, cp))
        fail(STDCL_EINVAL, "%s: kernel '%s' belongs to %s, not to %s", call, ki->name.c_str(), ki->cp->label.c_str(),
             cp->label.c_str());
    if (!ki->cp) fail(STDCL_EINVAL, "%s: kernel '%s' does not belong to a libstdcl context", call, ki->name.c_str());
    return ki;
}

std::shared_ptr<KernelInfo> kernel_create(CLCONTEXT* cp, const std::string& name, const std::vector<cl_program>& progs,
                                          const TypedefTable* typedefs)
{
    auto ki = std::make_shared<KernelInfo>();  // releases what it holds if we throw
    ki->cp = cp;
    ki->name = name;
    ki->per_group.reserve(progs.size());
    for (cl_program prog : progs) {
        cl_int err = CL_SUCCESS;
        cl_kernel k = clCreateKernel(prog, name.c_str(), &err);
        check_cl(err, "clCreateKernel");
        ki->per_group.push_back(k);
    }
    describe_args(*ki, ki->per_group[0], true, typedefs);
    kernel_register(ki);
    return ki;
}

std::shared_ptr<KernelInfo> kernel_find(cl_kernel k)
{
    auto& t = kernels();
    std::shared_ptr<KernelInfo> found;
    {
        std::shared_lock<std::shared_mutex> lock(t.mu);
        auto it = t.by_kernel.find(k);
        if (it != t.by_kernel.end()) {
            // The generation changes only under the unique lock.
            fast_store(k, t.gen.load(std::memory_order_relaxed), it->second.get());
            found = it->second;
        }
    }
    std::vector<std::shared_ptr<KernelInfo>> gone;  // released after the lock
    if (found) {
        // A kernel the program made: the record's reference keeps the handle its
        // own, and the program's release shows in the count.
        if (!found->external || found->closed || !released_by_program(k)) return found;
        std::unique_lock<std::shared_mutex> lock(t.mu);
        auto it = t.by_kernel.find(k);
        if (it != t.by_kernel.end() && it->second == found) {
            t.gen.fetch_add(1, std::memory_order_release);
            entomb(t, *found, &gone);
        }
        it = t.by_kernel.find(k);
        if (it != t.by_kernel.end()) return it->second;
        auto tomb = std::make_shared<KernelInfo>();  // out of memory in entomb: untabled
        tomb->closed = tomb->external = true;
        tomb->name = found->name;
        return tomb;
    }
    auto ki = describe_external(k);
    if (!ki->cp) return ki;  // not a libstdcl context's: refused, not tabled
    std::unique_lock<std::shared_mutex> lock(t.mu);
    auto res = t.by_kernel.emplace(k, ki);
    if (res.second) {
        t.gen.fetch_add(1, std::memory_order_release);
        // A new kernel: the records of those the program has released go (a
        // program that makes and releases kernels keeps none of them alive).
        sweep_released(t, &gone);
    }
    return res.first->second;
}

void kernel_register(const std::shared_ptr<KernelInfo>& ki)
{
    auto& t = kernels();
    std::unique_lock<std::shared_mutex> lock(t.mu);
    t.gen.fetch_add(1, std::memory_order_release);  // first: a throw below leaves no cache trusted
    for (cl_kernel k : ki->per_group) t.by_kernel[k] = ki;
}

void kernel_unregister(KernelInfo& ki) noexcept
{
    // A tombstone: a cl_kernel used after clclose gets a clear error instead of a
    // driver call on a released object.
    std::vector<std::shared_ptr<KernelInfo>> gone;  // released after the lock
    auto& t = kernels();
    std::unique_lock<std::shared_mutex> lock(t.mu);
    // First: a record must be out of the fast table before its last reference
    // can go (with_kernel checks the generation under the record's lock, and
    // ~KernelInfo takes that lock).
    t.gen.fetch_add(1, std::memory_order_release);
    entomb(t, ki, &gone);
}

namespace {

// Drops the records (tombstones included) that drop(record) selects.
template <class Pred> void forget_records(Pred drop) noexcept
{
    std::vector<std::shared_ptr<KernelInfo>> gone;  // released after the lock
    auto& t = kernels();
    std::unique_lock<std::shared_mutex> lock(t.mu);
    t.gen.fetch_add(1, std::memory_order_release);
    for (auto it = t.by_kernel.begin(); it != t.by_kernel.end();) {
        if (!drop(*it->second)) {
            ++it;
            continue;
        }
        try {
            gone.push_back(it->second);
        } catch (...) {
        }
        it = t.by_kernel.erase(it);
    }
    for (auto it = t.closed.begin(); it != t.closed.end();) {
        if (drop(**it)) {
            try {
                gone.push_back(std::move(*it));
            } catch (...) {
            }
            it = t.closed.erase(it);
        } else {
            ++it;
        }
    }
}

}  // namespace

void kernel_forget_context(CLCONTEXT* cp) noexcept
{
    forget_records([&](const KernelInfo& rec) { return !rec.external && rec.cp == cp; });
}

void kernel_forget_cl_context(CLCONTEXT* cp) noexcept
{
    // Where another live context works in the same cl_context, only the records
    // that name cp: a later launch describes the kernel again, in that context.
    const bool shared = context_of_cl(cp->ctx) != nullptr;
    forget_records(
        [&](const KernelInfo& rec) { return rec.external && rec.ctx == cp->ctx && (!shared || rec.cp == cp); });
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
        unbind_held(ki, g, entry.first, &a);
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
        if (word.load(std::memory_order_relaxed) == 0 && word.exchange(1, std::memory_order_acquire) == 0) return;
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
    // Those libstdcl made, and its reference to each one the program made.
    for (cl_kernel k : per_group)
        if (k) clReleaseKernel(k);
}

}  // namespace stdcl
