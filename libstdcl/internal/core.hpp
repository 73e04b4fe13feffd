// SPDX-License-Identifier: MIT
// core.hpp: the objects behind the API: contexts, devices, allocations, programs, kernels.
#pragma once

#include <stdcl.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace stdcl {

struct Allocation;
struct Program;
struct KernelInfo;
struct ContextProfile;  // profile.cpp

// Events of one device that clwait joins.  No fixed capacity.
struct EventList {
    std::mutex mu;
    std::vector<cl_event> kernel;
    std::vector<cl_event> mem;
};

struct Device {
    cl_device_id id = nullptr;
    cl_command_queue queue = nullptr;  // kernels (and all commands of a zero-copy device)
    // Transfers (clmsync, clmcopy): on a device with memory of its own a second queue,
    // so that copies overlap kernels; else (or STDCL_OVERLAP=0) the same as queue.
    // With two queues every command waits for the last command on each allocation it
    // uses (Allocation::last), which keeps the order one in-order queue gives.
    cl_command_queue xfer = nullptr;
    cl_device_type type = 0;
    std::string name;
    std::string vendor_macro;     // e.g. "__POCL__"
    bool zero_copy = false;       // host memory is the device's memory (probed)
    cl_uint base_align = 128;     // CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes
    cl_ulong max_alloc = 0;       // CL_DEVICE_MAX_MEM_ALLOC_SIZE
    cl_ulong global_mem = 0;
    bool image_support = false;
    int group = 0;                // index of its device-type group in the context
    std::unique_ptr<EventList> events{new EventList};
};

}  // namespace stdcl

// The public CLCONTEXT.
struct stdcl_context {
    std::string label;            // "stddev", "stdcpu", ... or "user"
    std::string why;              // how it was chosen (stdcl_context_why)
    bool is_default = false;
    cl_platform_id platform = nullptr;
    std::string platform_name;
    cl_context ctx = nullptr;
    std::vector<stdcl::Device> devs;
    // The alignment, in bytes, an interior pointer given to a kernel must have:
    // the largest CL_DEVICE_MEM_BASE_ADDR_ALIGN of devs, a power of two
    // (stdcl_mem_align).
    size_t mem_align = 1;
    // Device-type groups: devices that share build options (one cl_program each).
    std::vector<std::vector<cl_device_id>> groups;

    // Loader state.
    std::mutex load_mu;
    std::vector<std::shared_ptr<stdcl::Program>> programs;

    // The profile at exit (STDCL_PROFILE): null when it is off.  Shared with the
    // list of profiles printed at exit, which outlives the context.
    std::shared_ptr<stdcl::ContextProfile> prof;
};

namespace stdcl {

// One host allocation and its per-device copies.
struct Allocation {
    char* host = nullptr;
    size_t size = 0;
    char* block = nullptr;        // what posix_memalign returned (host, or before it: STDCL_CHECK)
    size_t guard = 0;             // STDCL_CHECK: guard bytes behind host + size (0: off)
    cl_mem pin = nullptr;         // pinned: the CL_MEM_ALLOC_HOST_PTR buffer block lies in,
    char* pin_map = nullptr;      //   its mapping (block is its first page boundary),
    cl_command_queue pin_queue = nullptr;  //   and the queue it was mapped on (retained)
    int flags = 0;                // clmalloc flags
    std::atomic<CLCONTEXT*> cp{nullptr};  // nullptr while detached
    std::atomic<bool> dead{false};
    std::atomic<bool> in_kernel{false};  // a launch set one of its memory objects as an argument

    // Image shape, when flags has CL_MEM_IMAGE2D and clmctl set it.
    bool is_image = false;
    size_t img_w = 0, img_h = 0;
    cl_image_format img_fmt{CL_RGBA, CL_FLOAT};

    std::mutex mu;                // guards everything below
    std::condition_variable idle; // signalled when users drops to 0
    int users = 0;                // calls using the memory now (AllocUse)
    std::vector<cl_mem> mem;      // per device of cp, created on first use
    std::vector<std::uint64_t> mem_serial;  // per device: mem's serial (mem_serial_next)
    std::vector<cl_event> last;   // per device: last CL_EVENT_NOWAIT command using it
    std::mutex order;             // two-queue devices: held from reading `last` to noting the new command
    // (device, offset) -> sub-buffer and its serial
    std::map<std::pair<unsigned, size_t>, std::pair<cl_mem, std::uint64_t>> subs;
    std::vector<cl_mem> subs_made;                        // the sub-buffers, oldest first
    std::string last_kernel;      // STDCL_CHECK: the last kernel launched with it

    Allocation() = default;
    Allocation(const Allocation&) = delete;
    Allocation& operator=(const Allocation&) = delete;
    // Frees the host memory (pinned or not) if clfree did not: an allocation that
    // never reached the registry, when clmalloc fails after allocating it.
    ~Allocation();

    // Device devnum's cl_mem (created if needed); offset > 0 gives a sub-buffer.
    // *serial (when given) receives the object's serial number: unlike the handle,
    // which a driver may hand out again once the object is released, a serial
    // names one object for the life of the process.
    cl_mem device_mem(unsigned devnum, size_t offset, std::uint64_t* serial = nullptr);
    // Remembers ev as the latest command on devnum touching this allocation.
    void note_event(unsigned devnum, cl_event ev);
    // Adds to out the last command on devnum that a new command must wait for, if
    // it is not finished (order held).
    void add_wait(unsigned devnum, std::vector<cl_event>& out);
    // Waits for every command still using this allocation.
    void wait_idle();
    // Waits for and releases the events taken out of `last` (allocates nothing).
    void finish_events(std::vector<cl_event>& pending, CLCONTEXT* owner) noexcept;
    // Waits until no call holds an AllocUse on it (mu held by the caller's lock).
    void wait_unused(std::unique_lock<std::mutex>& lock);
    // Releases device objects (after wait_idle).
    void release_device_objects();
};

// A call's claim on an allocation while it enqueues and waits for commands on it:
// clfree and clmdetach wait for every claim to end before they release memory, so
// a blocking clmsync in one thread never reads memory another thread freed.
// Throws STDCL_ENOENT if the allocation was freed, STDCL_ESTATE if detached.
class AllocUse {
public:
    AllocUse() = default;
    explicit AllocUse(std::shared_ptr<Allocation> a);
    AllocUse(AllocUse&& o) noexcept : a_(std::move(o.a_)) {}
    AllocUse& operator=(AllocUse&&) = delete;
    AllocUse(const AllocUse&) = delete;
    ~AllocUse();
    Allocation* operator->() const { return a_.get(); }
    Allocation& operator*() const { return *a_; }
private:
    std::shared_ptr<Allocation> a_;
};

// The one path by which every command libstdcl enqueues is ordered after the
// commands on the memory it uses.  A device with a transfer queue beside its
// kernel queue runs the two queues at once, so a command must wait for the last
// CL_EVENT_NOWAIT command on each allocation it touches (it may be on the other
// queue).  Make a CommandOrder before enqueuing: it locks each allocation's order
// mutex (once, in address order: no other command slips in between) and collects
// the events to wait for; pass count() and list() as the command's wait list;
// after the enqueue, enqueued(ev, flags) notes a NOWAIT command on every
// allocation (clfree and the next command wait for it; a waited command is
// complete when its call returns).  The locks are held until the CommandOrder
// goes.  On a device with one queue the queue's own order suffices: nothing is
// locked or waited for.
class CommandOrder {
public:
    CommandOrder(const Device& d, unsigned devnum, std::vector<Allocation*> allocs);
    CommandOrder(const CommandOrder&) = delete;
    CommandOrder& operator=(const CommandOrder&) = delete;
    cl_uint count() const { return cl_uint(waits_.size()); }
    const cl_event* list() const { return waits_.empty() ? nullptr : waits_.data(); }
    void enqueued(cl_event ev, int flags);

private:
    unsigned devnum_;
    std::vector<Allocation*> allocs_;  // sorted, each once
    std::vector<std::unique_lock<std::mutex>> locks_;
    std::vector<cl_event> waits_;
};

// The registry (registry.cpp): address -> allocation in constant time, lock-free for
// registry_lookup, never reads user memory.
std::shared_ptr<Allocation> registry_find(const void* p, size_t* offset);
// Base and size of the allocation containing p, without touching the allocation.
bool registry_lookup(const void* p, uintptr_t* base, size_t* size);
// Enters a new allocation (moved in); on failure the record, and so its memory, goes.
void registry_insert(std::shared_ptr<Allocation> a);
// Removes the allocation that starts at p, in one locked step.  For an interior
// pointer nothing is removed: *out is its allocation and *offset the offset.
enum class RegistryTake { removed, interior, absent };
RegistryTake registry_take(const void* p, std::shared_ptr<Allocation>* out, size_t* offset);
std::vector<std::shared_ptr<Allocation>> registry_of_context(CLCONTEXT* cp);
// Detaches every allocation of cp (before cp is destroyed).
void memory_forget_context(CLCONTEXT* cp);

// Per-kernel argument state, kept so global arguments bind per device at clfork.
struct KernelArg {
    enum Kind : unsigned char { unset, value, local, global } kind = unset;
    std::shared_ptr<Allocation> alloc;  // for global
    size_t offset = 0;                  // for global (interior pointer)
    stdcl_local_t lrule{};              // for local: its size rule (workgroup.cpp)
};

// A kernel's work-group limits on one device, queried once (workgroup.cpp), and
// the last local size chosen for it (a launch in a loop does not search again).
struct WorkGroupLimits {
    bool known = false;
    size_t group_max = 1;               // CL_KERNEL_WORK_GROUP_SIZE
    size_t multiple = 1;                // CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE
    size_t item_max[3] = {1, 1, 1};     // CL_DEVICE_MAX_WORK_ITEM_SIZES
    cl_ulong local_mem = 0;             // CL_DEVICE_LOCAL_MEM_SIZE
    size_t required[3] = {0, 0, 0};     // CL_KERNEL_COMPILE_WORK_GROUP_SIZE (0: none)
    clndrange_t last_in{}, last_out{};  // memo: last request and its answer
    unsigned long long last_gen = 0;    // args_gen of the memo
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
    KernelLock();   // takes a slot (throws std::bad_alloc)
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
    std::string name;
    std::vector<cl_kernel> per_group;   // kernel object for each device group
    cl_uint nargs = 0;
    std::vector<cl_kernel_arg_address_qualifier> qual;  // empty if unknown
    std::vector<std::string> type_names;
    KernelLock mu;                      // guards args and set+enqueue sequences
    std::vector<KernelArg> args;
    // What the kernel objects hold for each argument, per device group: the
    // allocation and serial of the memory object a launch last set (launch).  A
    // launch sets the argument again only when the serial differs; before an
    // allocation's memory objects are released, kernel_unbind sets the arguments
    // that hold them to NULL (kernel_unbind).
    struct Held {
        const Allocation* alloc = nullptr;
        std::uint64_t serial = 0;
    };
    std::vector<std::array<Held, 8>> held;
    unsigned long long args_gen = 0;    // raised when a __local argument changes
    std::vector<WorkGroupLimits> limits;  // per device of cp (workgroup.cpp)
    bool external = false;              // a cl_kernel libstdcl did not create
    bool closed = false;                // a tombstone: its program was clclosed

    KernelInfo() = default;
    KernelInfo(const KernelInfo&) = delete;
    KernelInfo& operator=(const KernelInfo&) = delete;
    // Sizes args and held for n arguments, all unset.
    void set_nargs(cl_uint n);
    // Releases the kernel objects libstdcl created: the last holder (clclose, or a
    // launch still in flight in another thread) releases them.
    ~KernelInfo();
};

// The overrun check mode, STDCL_CHECK=1 (guard.cpp).
bool check_mode();
size_t guard_front_bytes(size_t page);                // before the host memory
size_t guard_back_bytes(size_t size, size_t page);    // from host + size on
void guard_init_host(Allocation& a, size_t front);
void guard_init_device(Allocation& a, const Device& d, cl_mem m);
// Throws STDCL_EOVERRUN (and restores the zone) when a zone of a was written: the
// host's, and device devnum's (-1: every device).
void guard_check(Allocation& a, int devnum, const char* call);

// Kernel registry: cl_kernel (any group's) -> info.
std::shared_ptr<KernelInfo> kernel_find(cl_kernel k);
void kernel_register(const std::shared_ptr<KernelInfo>& ki);
// Forgets ki's kernels: a later use of them is an error, never a driver call on a
// released object.
void kernel_unregister(const KernelInfo& ki) noexcept;
// Sets to NULL every kernel argument that holds one of a's memory objects (called
// before they are released): no kernel object keeps a handle to a released object,
// which a driver that keeps raw pointers in the kernel may read at a later
// clSetKernelArg or launch.
void kernel_unbind(const Allocation& a) noexcept;

// A program handle returned by clopen/clsopen.
struct Program {
    CLCONTEXT* cp = nullptr;
    std::string name;                   // file name or "<source>" for messages
    std::vector<std::string> sources;   // one per unit (embedded: several)
    std::vector<std::string> unit_names;
    std::vector<std::string> origins;   // per unit: file path or embedded name (cache traces)
    std::string dir;                    // the kernel file's directory ("" for source)
    std::string key;                    // identity for reuse: content + options
    int flags = 0;
    int refs = 1;
    std::mutex build_mu;                // one build at a time; guards cl and kernels
    std::atomic<bool> built{false};
    std::atomic<bool> nobuild_pending{false};  // opened with CLLD_NOBUILD, not yet built
    std::string user_options;
    // [unit][group] built programs.
    std::vector<std::vector<cl_program>> cl;
    std::map<std::string, std::shared_ptr<KernelInfo>> kernels;
    // [unit][device of cp]: the compiler's log of a successful build (clbuildlog).
    std::vector<std::vector<std::string>> logs;
    std::vector<std::string> joined_logs;  // per device: what clbuildlog returns
};

// Records msg ("label: msg") in the load report that a call given a NULL default
// context quotes; is_failure also warns once on stderr.  Load time only.
void note_load(const char* label, const std::string& msg, bool is_failure) noexcept;

// Context helpers.
CLCONTEXT* context_check(CLCONTEXT* cp);          // throws on NULL/unknown
Device& context_device(CLCONTEXT* cp, unsigned devnum);  // throws on bad devnum
CLCONTEXT* context_of_cl(cl_context c);           // nullptr if not ours
void context_release_programs(CLCONTEXT* cp);
// Releases clreduce's kernels and partial-value buffers of cp (reduce.cpp).
void reduce_forget_context(CLCONTEXT* cp) noexcept;

// Events: track, wait, return per the event flags.
int event_flags_check(int flags);                 // throws on WAIT|NOWAIT
// What an enqueued command was, for the profile at exit.
struct CommandTag {
    enum Kind { kernel, to_device, to_host, copy } kind;
    const std::string* name;  // the kernel's (kind kernel), else nullptr
    size_t bytes;             // transfers: bytes given to the command
    bool moved;               // false: a zero-copy sync (a marker: nothing copied)
};
// Waits for, tracks or hands over ev (the command on device devnum) as flags say.
cl_event event_finish(CLCONTEXT* cp, unsigned devnum, cl_event ev, int flags, const CommandTag& tag);

// Work-group sizes and __local arguments sized at launch (workgroup.cpp); the
// caller holds ki.mu.
// True when (size, value) is a __local marker (CLLOCAL...); *out gets it.
bool local_marker(size_t size, const void* value, stdcl_local_t* out);
// Fills ndr's 0 local sizes for kernel k (ki's kernel on device devnum) and
// checks the given ones and the __local memory; throws with `call` in messages.
void fit_local_size(CLCONTEXT* cp, unsigned devnum, KernelInfo& ki, cl_kernel k, clndrange_t* ndr,
                    const char* call);
// Sets the __local arguments sized per work-item or by a function for the local
// size in ndr (complete).
void set_sized_locals(KernelInfo& ki, cl_kernel k, const clndrange_t& ndr, const char* call);
// Event profiling (profile.cpp): whether new queues profile (STDCL_PROFILE on,
// or COPRTHR_OPENCL_PROFILING_ENABLE).
bool queue_profiling_wanted();
// The profile at exit (STDCL_PROFILE=1 or =path).  None of these throws; when the
// profile is off (cp->prof null) they return at once.  A command the profile could
// not time (no memory, a failed query) is counted as "not timed", never dropped.
bool profile_report_wanted();
// A new profile for cp (its devices set up), or null when the report is off.
std::shared_ptr<ContextProfile> profile_start(CLCONTEXT* cp) noexcept;
// Counts an enqueued command; done: it has completed (timed now), else its event is
// kept (retained) and timed when it completes.
void profile_command(CLCONTEXT* cp, unsigned devnum, cl_event ev, const CommandTag& tag, bool done) noexcept;
// Times the kept events of device devnum (all devices when devnum < 0) that have
// completed; with finished (the queues are finished) the rest are counted untimed.
void profile_harvest(CLCONTEXT* cp, int devnum, bool finished) noexcept;
// A program build: ms of build_program, whether a compiler ran, whether the
// program cache was consulted.
void profile_build(CLCONTEXT* cp, double ms, bool compiled, bool cache_on) noexcept;
// clopen/clsopen of a program already open in cp (no build).
void profile_reopen(CLCONTEXT* cp) noexcept;
// Prints the report (stderr, or the STDCL_PROFILE file) of every context profiled,
// first timing the commands of contexts still alive.  Called once, at exit.
void profile_report_at_exit() noexcept;
// A range of an allocation to device devnum or back (memory.cpp): len bytes
// from ptr, or to the end of the allocation when whole is true.
cl_event msync_range(CLCONTEXT* cp, unsigned devnum, void* ptr, size_t len, bool whole, int flags,
                     const char* call);

// Splits "a,b,c" into words (trimmed, empty ones dropped).
std::vector<std::string> split_list(const std::string& s, char sep);

}  // namespace stdcl
