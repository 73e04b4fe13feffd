// SPDX-License-Identifier: MIT
// memory.hpp: allocations, their registry, guard zones, transfers and command order
// (memory.cpp, registry.cpp, guard.cpp, transfer.cpp, order.cpp).
#pragma once

#include "contexts/context.hpp"
#include "helpers/small_vec.hpp"

#include <condition_variable>
#include <map>

namespace stdcl {

// Where an allocation's host memory comes from (blocks.cpp, memory.cpp).
enum class Backing : unsigned char {
    slab,  // a chunk of a slab (small allocations): pages shared with others
    pages,  // mapped pages of its own
    heap,  // posix_memalign (when a mapping was refused)
    pinned,  // the mapping of a CL_MEM_ALLOC_HOST_PTR buffer
    adopted,  // the program's memory (clmadopt): never freed here
    devonly,  // CL_MEM_DEVONLY: reserved addresses, no host memory
    watched,  // STDCL_CHECK=sync: pages mapped twice (watch.hpp), host and libview
};

// Allocations below kSlabMax bytes come from slabs.
constexpr size_t kSlabMax = 4096 - 128;
// The slab size class for size bytes aligned to align (a power of two); 0: none.
unsigned slab_class(size_t size, size_t align);
size_t slab_chunk_bytes(unsigned cls);
char* slab_alloc(unsigned cls);  // nullptr when out of memory
void slab_free(char* p, unsigned cls) noexcept;
// Page-aligned blocks: mapped (*mapped) or from posix_memalign; nullptr when out of memory.
char* pages_alloc(size_t bytes, bool* mapped);
void pages_free(char* p, size_t bytes, bool mapped) noexcept;
// Addresses no memory backs (PROT_NONE); nullptr when refused.
char* reserve_addresses(size_t bytes);
void release_addresses(char* p, size_t bytes) noexcept;
// The system's page size.
size_t page_size();

// One host allocation and its per-device copies.
struct Allocation {
    char* host = nullptr;  // the program's view of the host memory
    // Backing::watched: the library's and the driver's view of the same pages
    // (the program's may be protected); every other backing: nullptr (host).
    char* libview = nullptr;
    int watch = -1;  // Backing::watched: the watch slot (-1: never protected)
    size_t size = 0;
    char* block = nullptr;  // the host block (host, or before it: STDCL_CHECK)
    size_t block_bytes = 0;  // its length (pages, heap, devonly)
    Backing backing = Backing::pages;
    unsigned slab = 0;  // Backing::slab: the size class
    size_t guard = 0;  // STDCL_CHECK: guard bytes behind host + size (0: off)
    cl_mem pin = nullptr;  // pinned: the CL_MEM_ALLOC_HOST_PTR buffer block lies in,
    char* pin_map = nullptr;  //   its mapping (block is its first page boundary),
    cl_command_queue pin_queue = nullptr;  //   and the queue it was mapped on (retained)
    int flags = 0;  // clmalloc flags
    std::atomic<CLCONTEXT*> cp{nullptr};  // nullptr while detached
    std::atomic<bool> dead{false};
    std::atomic<bool> in_kernel{false};  // a launch set one of its memory objects as an argument
    // CL_MEM_NOFORCE without STDCL_CHECK=sync: clmctl(CL_MCTL_MARK_CLEAN) said the
    // host copy is unchanged since its last sync (cleared by a launch that may
    // write it), and the devices (bit d, d < 64) whose copy was the host's at the
    // last whole sync with them and no kernel or copy there changed it since.
    std::atomic<bool> clean{false};
    // stdcl_mem handed out a device object: commands libstdcl does not see may
    // write the memory (STDCL_CHECK=sync then reports no lost update for it).
    std::atomic<bool> handed_out{false};
    // Tickets of foreign commands naming it (clforeign_begin to clforeign_end).
    std::atomic<int> foreign_open{0};
    // A foreign command on it was announced (clforeign_begin): the program tells
    // the library of its commands, so the sync check judges it as before.
    std::atomic<bool> announced{false};
    std::atomic<std::uint64_t> current{0};

    // Image shape, when flags has CL_MEM_IMAGE2D and clmctl set it.
    bool is_image = false;
    size_t img_w = 0, img_h = 0;
    cl_image_format img_fmt{CL_RGBA, CL_FLOAT};

    std::mutex mu;  // guards everything below but order's tables
    std::condition_variable idle;  // signalled when users drops to 0 and idle_waiters > 0
    // Calls using the memory now (AllocUse), counted without the lock: a claim
    // raises it, then checks dead and cp; wait_unused raises idle_waiters, then
    // checks users.  Either the claim sees the allocation freed or detached, or
    // the wait sees the claim (all sequentially consistent).
    std::atomic<int> users{0};
    std::atomic<int> idle_waiters{0};
    std::vector<cl_mem> mem;  // per device of cp, created on first use
    std::vector<std::uint64_t> mem_serial;  // per device: mem's serial (mem_serial_next)

    // Guards the three tables below, and is held by a CommandOrder on a two-queue
    // device from reading them to noting the new command (taken before mu, never
    // after it).
    std::mutex order;
    std::vector<cl_event> last;  // per device: last CL_EVENT_NOWAIT command using it
    std::vector<cl_command_queue> last_queue;  // per device: the queue `last` is on
    // Per device: the number of the last launch without an event (CL_EVENT_NOEVENT,
    // on the kernel queue) using it, when that is its last command; else 0.
    std::vector<std::uint64_t> last_noev;
    // (device, offset) -> sub-buffer and its serial
    std::map<std::pair<unsigned, size_t>, std::pair<cl_mem, std::uint64_t>> subs;
    std::vector<cl_mem> subs_made;  // the sub-buffers, oldest first
    std::string last_kernel;  // STDCL_CHECK: the last kernel launched with it
    std::shared_ptr<struct SyncState> sync;  // STDCL_CHECK=sync: what each device's copy holds

    // A command on device d may change its copy (a kernel's argument it may
    // write, clmcopy's destination): the copy is not the host's any more.
    void note_device_write(unsigned d)
    {
        if (current.load(std::memory_order_relaxed) & (std::uint64_t(1) << (d & 63)))
            current.fetch_and(~(std::uint64_t(1) << (d & 63)), std::memory_order_relaxed);
        if (clean.load(std::memory_order_relaxed)) clean.store(false, std::memory_order_relaxed);
    }
    // The host memory as the library and the driver read and write it.
    char* lib() const { return libview ? libview : host; }
    // Whether other allocations may start in the pages this one touches.
    bool shares_pages() const { return backing == Backing::slab || backing == Backing::adopted; }
    // Whether device d works on this allocation's host memory (no copies): a device
    // that shares host memory, and host memory aligned as it needs.
    bool zero_copy_on(const Device& d) const
    {
        return d.zero_copy && backing != Backing::devonly && uintptr_t(host) % d.base_align == 0;
    }

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
    // Remembers ev, enqueued on queue q, as the latest command on devnum touching
    // this allocation (order held).
    void note_event(unsigned devnum, cl_event ev, cl_command_queue q);
    // Remembers event-less launch seq on device d (devnum) as the latest command
    // touching this allocation; it was ordered after the one before (order held).
    void note_noevent(const Device& d, unsigned devnum, std::uint64_t seq);
    // Adds to out the last command on device d (devnum) that a new command on queue
    // q must wait for, if it is not finished and on another queue: an in-order
    // queue runs its own commands in order (order held).  An event-less launch is
    // waited for through a marker, which goes to owned as well (the caller
    // releases it).
    void add_wait(const Device& d, unsigned devnum, std::vector<cl_event>& out, std::vector<cl_event>& owned,
                  cl_command_queue q);
    // Waits for every command still using this allocation.
    void wait_idle();
    // Waits for and releases the events taken out of `last`, and waits for the
    // event-less launches taken out of `last_noev` (allocates nothing).
    void finish_events(std::vector<cl_event>& pending, const std::vector<std::uint64_t>& noev,
                       CLCONTEXT* owner) noexcept;
    // Waits until no call holds an AllocUse on it (mu held by the caller's lock).
    void wait_unused(std::unique_lock<std::mutex>& lock);
    // Releases device objects (after wait_idle).
    void release_device_objects();
};

// A new allocation's host memory of size bytes (bytes: rounded as its backing
// needs): a's block and backing, chosen in this order: device-only addresses,
// pages mapped twice (STDCL_CHECK=sync), pinned memory, a slab chunk (unless
// paged), mapped pages, the heap.  Throws STDCL_ENOMEM (blocks.cpp).
void host_block(Allocation& a, CLCONTEXT* cp, size_t size, size_t bytes, bool paged, int flags, const char* call);
// Frees a's block: unmaps and releases a pinned buffer, returns a slab chunk or
// pages; the program's own memory (adopted) stays.
void release_block(Allocation& a) noexcept;

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
    void release() noexcept;  // ends the claim
    std::shared_ptr<Allocation> a_;
};

// The one path by which every command libstdcl enqueues is ordered after the
// commands on the memory it uses.  A device with a transfer queue beside its
// kernel queue runs the two queues at once, so a command must wait for the last
// CL_EVENT_NOWAIT command on each allocation it touches (it may be on the other
// queue).  Make a CommandOrder before enqueuing: it locks each allocation's order
// mutex (once, in address order: no other command slips in between) and collects
// the events to wait for (none for a command on the queue of the last one: the
// queues are in order); pass count() and list() as the command's wait list;
// after the enqueue, enqueued(ev, flags) notes a NOWAIT command on every
// allocation (clfree and the next command wait for it; a waited command is
// complete when its call returns).  The locks are held until the CommandOrder
// goes.  On a device with one queue the queue's own order suffices: nothing is
// waited for, and each order mutex is taken only to note the command.
class CommandOrder {
public:
    // q: the queue the command goes to (d.queue or d.xfer); allocs: n allocations,
    // in any order, repeats allowed.
    CommandOrder(const Device& d, unsigned devnum, std::initializer_list<Allocation*> allocs, cl_command_queue q);
    // The allocations a launch holds claims on (n of them, at uses).
    CommandOrder(const Device& d, unsigned devnum, const AllocUse* uses, size_t n, cl_command_queue q);
    CommandOrder(const CommandOrder&) = delete;
    CommandOrder& operator=(const CommandOrder&) = delete;
    cl_uint count() const { return cl_uint(waits_.size()); }
    const cl_event* list() const { return waits_.empty() ? nullptr : waits_.data(); }
    void enqueued(cl_event ev, int flags);
    // After an enqueue without an event: event-less launch seq (noevent_launched).
    void enqueued_noevent(std::uint64_t seq);
    ~CommandOrder();

private:
    const Device& d_;
    unsigned devnum_;
    cl_command_queue queue_;
    std::vector<cl_event> owned_;  // markers in waits_ made for this command
    SmallVec<Allocation*, 8> allocs_;  // sorted, each once
    bool locked_ = false;  // each allocation's order mutex is held
    void add(Allocation* a);  // into allocs_, unless there
    void start();  // locks and collects the waits (two queues)
    template <class F> void note_each(F&& note);  // under each order mutex
    void unlock_all() noexcept;  // and releases owned_
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
// Enters a new slab of chunk-byte chunks (a multiple of 128 below a page); throws
// when out of memory, before anything changes.
void registry_add_slab(char* base, size_t bytes, size_t chunk);
// Detaches every allocation of cp (before cp is destroyed).
void memory_forget_context(CLCONTEXT* cp);

// STDCL_CHECK=fill: new host memory and new device copies hold this 4-byte
// pattern, a signalling NaN as a float (a large integer as an int), so that a
// forgotten initialisation or upload gives loud garbage.
constexpr std::uint32_t kFillPattern = 0x7fa00000u;
void fill_pattern(char* p, size_t n);

// The overrun check mode, STDCL_CHECK=1 (guard.cpp).
bool check_mode();
size_t guard_front_bytes(size_t page);  // before the host memory
size_t guard_back_bytes(size_t size, size_t page);  // from host + size on
void guard_init_host(Allocation& a, size_t front);
void guard_init_device(Allocation& a, const Device& d, cl_mem m);
// Throws STDCL_EOVERRUN (and restores the zone) when a zone of a was written: the
// host's, and device devnum's (-1: every device).
void guard_check(Allocation& a, int devnum, const char* call);

// The allocation ptr points into, attached to cp (its offset in *offset); throws
// a clear error, naming call, otherwise.
std::shared_ptr<Allocation> attached(CLCONTEXT* cp, const void* ptr, const char* call, size_t* offset);

// The queue for a transfer on device d (clmsync, clmcopy): the transfer queue,
// or the kernel queue once the program holds it (stdcl_queue: foreign.cpp).
inline cl_command_queue transfer_queue(const Device& d)
{
    return d.events->queue_shared.load(std::memory_order_acquire) ? d.queue : d.xfer;
}
// After a transfer ev was enqueued on queue q of device d: if the program took
// the kernel queue meanwhile, the kernel queue waits for ev (foreign.cpp).
void transfer_enqueued(const Device& d, cl_command_queue q, cl_event ev);
// clfree, clmrealloc, clmdetach: refuses (STDCL_ESTATE) while a ticket of foreign
// commands names a (clforeign_begin without clforeign_end).
void foreign_check_closed(const Allocation& a, const char* call);
// Before the memory of an allocation of owner goes, when the program took a
// device object of it (stdcl_mem): waits for the kernel queues the program holds
// (stdcl_queue), on which it may have enqueued commands using that object.
void foreign_wait_queues(CLCONTEXT* owner) noexcept;

// A range of an allocation to device devnum or back (transfer.cpp): len bytes
// from ptr, or to the end of the allocation when whole is true.
cl_event msync_range(CLCONTEXT* cp, unsigned devnum, void* ptr, size_t len, bool whole, int flags, const char* call,
                     void* caller = nullptr);

}  // namespace stdcl
