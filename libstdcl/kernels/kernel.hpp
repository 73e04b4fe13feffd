// SPDX-License-Identifier: MIT
// kernel.hpp: kernel records, their arguments, locks and work-group limits (launch.cpp,
// workgroup.cpp).
#pragma once

#include "kernels/argtype.hpp"
#include "memory/memory.hpp"

#include <array>
#include <utility>

namespace stdcl {

// Per-kernel argument state, kept so global arguments bind per device at clfork.
// What a launch reads of an argument lies in its first 64 bytes: one cache line.
struct alignas(64) KernelArg {
    enum Kind : unsigned char { unset, value, local, global } kind = unset;
    // For value: the bytes every kernel object of the record holds (vsize 0: not
    // kept, or too large to keep), so that setting the same value again makes no
    // driver call.
    unsigned char vsize = 0;
    // For value: the C type (ValueClass) and size of a value that was taken as it
    // is, with nothing to check but those (a by-value parameter of known type, no
    // conversion, no trace): a stream's next value of that type and size goes
    // straight to the kernel objects (fsize 0: none).
    signed char fcls = 0;
    std::uint32_t fsize = 0;
    std::shared_ptr<Allocation> alloc;  // for global
    size_t offset = 0;  // for global (interior pointer)
    unsigned char vbytes[32];
    stdcl_local_t lrule{};  // for local: its size rule (workgroup.cpp)
};

// A kernel's work-group limits on one device, queried once (workgroup.cpp), and
// the last local size chosen for it (a launch in a loop does not search again).
struct WorkGroupLimits {
    bool known = false;
    size_t group_max = 1;  // CL_KERNEL_WORK_GROUP_SIZE
    size_t multiple = 1;  // CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE
    size_t item_max[3] = {1, 1, 1};  // CL_DEVICE_MAX_WORK_ITEM_SIZES
    cl_ulong local_mem = 0;  // CL_DEVICE_LOCAL_MEM_SIZE
    size_t required[3] = {0, 0, 0};  // CL_KERNEL_COMPILE_WORK_GROUP_SIZE (0: none)
    clndrange_t last_in{}, last_out{};  // memo: last request and its answer
    unsigned long long last_gen = 0;  // args_gen of the memo
};

// A kernel's lock.  Its word lives in a slot that is never freed (slots are reused),
// so a thread may lock the slot of a KernelInfo it holds no reference to, then check
// that the record is still registered: the fast path of clarg_set and clfork
// (with_kernel, launch.cpp) costs one atomic exchange and one store, where a
// std::mutex and a shared_ptr copy cost four atomic operations.  Waiters spin, then yield, then sleep: holders are short (an
// argument set, or a launch's enqueue).
struct KernelInfo;
struct KernelSlot {
    std::atomic<unsigned> word{0};
    KernelSlot* next_free = nullptr;  // in the free list (launch.cpp)
    // The fast path's record of its owner (launch.cpp), under the lock: the kernel
    // handle last looked up, the kernel table's generation then, the record.
    cl_kernel k = nullptr;
    uint64_t gen = 0;
    KernelInfo* ki = nullptr;
    void lock()
    {
        if (word.exchange(1, std::memory_order_acquire) != 0) lock_slow();
    }
    void unlock() { word.store(0, std::memory_order_release); }
    void lock_slow();
};
class KernelLock {
public:
    KernelLock();  // takes a slot (throws std::bad_alloc)
    ~KernelLock();  // gives it back
    KernelLock(const KernelLock&) = delete;
    KernelLock& operator=(const KernelLock&) = delete;
    void lock() { slot_->lock(); }
    void unlock() { slot_->unlock(); }
    KernelSlot* slot() const { return slot_; }

private:
    KernelSlot* slot_;
};

struct KernelInfo {
    CLCONTEXT* cp = nullptr;
    cl_context ctx = nullptr;  // a cl_kernel libstdcl did not create: its cl_context
    std::string name;
    std::vector<cl_kernel> per_group;  // kernel object for each device group
    cl_uint nargs = 0;
    std::vector<cl_kernel_arg_address_qualifier> qual;  // empty if unknown
    std::vector<std::string> type_names;
    std::vector<cl_kernel_arg_type_qualifier> tqual;  // const, volatile...; empty if unknown
    // By-value parameters' types (argtype.hpp): what clforka and clarg_set convert
    // a typed value to; empty if unknown.
    std::vector<ParamType> ptypes;
    KernelLock mu;  // guards args and set+enqueue sequences
    std::vector<KernelArg> args;
    // What the kernel objects hold for each argument, per device group: the
    // allocation and serial of the memory object a launch last set (launch).  A
    // launch sets the argument again only when the serial differs; before an
    // allocation's memory objects are released, kernel_unbind sets the arguments
    // that hold them to NULL (kernel_unbind).
    struct Held {
        const Allocation* alloc = nullptr;
        std::uint64_t serial = 0;
        unsigned devnum = 0;  // the device, and the offset into alloc, it was made for
        size_t offset = 0;
    };
    std::vector<std::array<Held, 8>> held;
    unsigned long long args_gen = 0;  // raised when a __local argument changes or goes
    // local_kinds (workgroup.cpp) for args_gen + 1 == kinds_gen: 0 no __local
    // argument, 1 sized by bytes or per work-item only, 2 one sized by a function.
    unsigned long long kinds_gen = 0;
    int kinds = 0;
    std::vector<WorkGroupLimits> limits;  // per device of cp (workgroup.cpp)
    // A cl_kernel libstdcl did not create: per_group holds it with a reference of
    // libstdcl's own, released with the record.
    bool external = false;
    bool closed = false;  // a tombstone: its program was clclosed, or the program released it

    // Whether argument i (a __global one) is one the kernel cannot write: const,
    // or __constant.  Without argument information, false.
    bool read_only_arg(cl_uint i) const
    {
        if (qual.empty()) return false;
        return qual[i] == CL_KERNEL_ARG_ADDRESS_CONSTANT || (i < tqual.size() && (tqual[i] & CL_KERNEL_ARG_TYPE_CONST));
    }

    KernelInfo() = default;
    KernelInfo(const KernelInfo&) = delete;
    KernelInfo& operator=(const KernelInfo&) = delete;
    // Sizes args and held for n arguments, all unset.
    void set_nargs(cl_uint n);
    // Releases the kernel objects libstdcl created: the last holder (clclose, or a
    // launch still in flight in another thread) releases them.
    ~KernelInfo();
};

// Whether ki may run in cp: the context it was made in; for a cl_kernel libstdcl
// did not create, any context over its cl_context (default contexts over the same
// devices share one).
inline bool kernel_usable_in(const KernelInfo& ki, const CLCONTEXT* cp)
{
    return ki.external ? cp && ki.ctx && cp->ctx == ki.ctx : cp == ki.cp;
}

// Kernel registry: cl_kernel (any group's) -> info.
std::shared_ptr<KernelInfo> kernel_find(cl_kernel k);
void kernel_register(const std::shared_ptr<KernelInfo>& ki);
// Forgets ki's kernels: a later use of them is an error, never a driver call on a
// released object, while their tombstone is among the last kept (it holds a
// reference to each kernel object, so no new kernel takes one of their handles).
void kernel_unregister(KernelInfo& ki) noexcept;
// Drops every record of cp's kernels, tombstones included (before cp's memory
// objects are released).
void kernel_forget_context(CLCONTEXT* cp) noexcept;
// Sets to NULL every kernel argument that holds one of a's memory objects (called
// before they are released): no kernel object keeps a handle to a released object,
// which a driver that keeps raw pointers in the kernel may read at a later
// clSetKernelArg or launch.
void kernel_unbind(const Allocation& a) noexcept;

// Checks an index space's dimensions, global sizes and given local sizes
// (STDCL_LOCAL_SIZE_DRIVER only in ltsz[0], with 0s or itself after it); throws
// with `call` in messages.
// With the kernel ki and the device, a local size that a launch chose and wrote
// back for another global size is named as such.
void check_ndrange(const clndrange_t* ndr, const char* call, const KernelInfo* ki = nullptr, unsigned devnum = 0);
// Why the driver refused ndr's (complete) local size for kernel k of ki on device
// devnum: the device's or the kernel's limit it passes, with numbers.
std::string local_size_reason(CLCONTEXT* cp, unsigned devnum, KernelInfo& ki, cl_kernel k, const clndrange_t& ndr);

// Work-group sizes and __local arguments sized at launch (workgroup.cpp); the
// caller holds ki.mu.
// True when (size, value) is a __local marker (CLLOCAL...); *out gets it.
bool local_marker(size_t size, const void* value, stdcl_local_t* out);
// Fills ndr's 0 local sizes for kernel k (ki's kernel on device devnum) and
// checks the given ones and the __local memory; throws with `call` in messages.
// With STDCL_LOCAL_SIZE_DRIVER in ltsz[0] it refuses __local arguments sized by
// the group and leaves ndr as it is, or sets the kernel's reqd_work_group_size.
void fit_local_size(CLCONTEXT* cp, unsigned devnum, KernelInfo& ki, cl_kernel k, clndrange_t* ndr, const char* call);
// Sets the __local arguments sized per work-item or by a function for the local
// size in ndr (complete).
void set_sized_locals(KernelInfo& ki, cl_kernel k, const clndrange_t& ndr, const char* call);

// Kernel records (kernels.cpp).  A new record of kernel `name` of the programs
// progs (one per device group of cp), described and registered.
// typedefs: those of the program's source (parameter types), or nullptr.
std::shared_ptr<KernelInfo> kernel_create(CLCONTEXT* cp, const std::string& name, const std::vector<cl_program>& progs,
                                          const TypedefTable* typedefs = nullptr);
// The record of k, checked against the caller's context (cp may be NULL); throws
// with `call` in the message.
std::shared_ptr<KernelInfo> kernel_for(CLCONTEXT* cp, cl_kernel k, const char* call);

// The kernels last looked up, for clarg_set's fast path (with_kernel): a small
// table, direct-mapped by the kernel handle, of lock slots.  kernel_find writes
// into the record's slot, under the slot's lock, the handle, the kernel table's
// generation and the record, then puts the slot in the table.  A reader locks the
// slot it finds (slots are never freed) and takes the record only when the slot
// names its handle and the generation is unchanged: the kernel table then still
// maps the handle to the record and holds a reference to it.  No thread-local
// storage: the library costs the same loaded with the program or by dlopen().
constexpr unsigned kFastKernelBits = 8;
extern std::atomic<KernelSlot*> g_fast_kernels[1u << kFastKernelBits];
// The kernel table's generation: raised at every change of the table.
extern std::atomic<uint64_t> g_kernel_gen;

__attribute__((always_inline)) inline std::atomic<KernelSlot*>& fast_entry(cl_kernel k)
{
    uint64_t h = (uint64_t(uintptr_t(k)) >> 4) * 0x9e3779b97f4a7c15ull;
    return g_fast_kernels[h >> (64 - kFastKernelBits)];
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
    KernelSlot* slot = k ? fast_entry(k).load(std::memory_order_acquire) : nullptr;
    if (slot) {
        slot->lock();
        KernelInfo* ki = slot->ki;
        if (slot->k == k && slot->gen == g_kernel_gen.load(std::memory_order_acquire) && !ki->external && !ki->closed &&
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

}  // namespace stdcl
