// SPDX-License-Identifier: MIT
// context.hpp: devices and contexts (context.cpp), and what every owner uses.
#pragma once

#include <stdcl.h>

#include "events/wait.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
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
    // clwait takes no reference of its own on the events it waits for: while
    // `waiting` calls are between taking the lists and removing what they waited
    // for, an event leaving a list (its reference released) goes to `retired`
    // instead, and the last of them to finish releases those.
    unsigned waiting = 0;
    std::vector<cl_event> retired;
    // Launches enqueued on the kernel queue without an event (CL_EVENT_NOEVENT),
    // numbered from 1.  What must wait for one gets a marker enqueued after it
    // (noevent_marker); the newest marker is kept for the next such wait.
    // The number of the last one enqueued: raised after its enqueue, without mu
    // (a marker made once it reads n comes after launches 1 to n).
    std::atomic<std::uint64_t> noev_seq{0};
    std::uint64_t noev_joined = 0;  // clwait has joined those up to this one
    cl_event marker = nullptr;  // enqueued after launch marker_seq (or null)
    std::uint64_t marker_seq = 0;
    std::atomic<std::uint64_t> flushed_ns{0};  // when the kernel queue was last flushed for them
    // A driver that starts kernels unflushed: when the first launch left unflushed
    // since the kernel queue's last flush was made (0: none).
    std::atomic<std::uint64_t> unflushed_since_ns{0};
    // stdcl_queue handed the kernel queue to the program: its commands there keep
    // their order with libstdcl's, so transfers go to the kernel queue from then on.
    std::atomic<bool> queue_shared{false};
    // clforeign_end noted commands on a queue of the program's own on this
    // device's allocations: commands on the kernel queue wait for them too.
    std::atomic<bool> other_queues{false};
    // WaitPolicy::adaptive: this device's last wait took longer than the spin
    // (kWaitSpinNs), so its waits poll until one ends within it again.
    std::atomic<bool> waits_long{false};
    EventList() = default;
    EventList(const EventList&) = delete;
    EventList& operator=(const EventList&) = delete;
    ~EventList()
    {
        if (marker) clReleaseEvent(marker);
        for (cl_event e : retired) clReleaseEvent(e);
    }
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
    std::string vendor_macro;  // e.g. "__POCL__"
    bool zero_copy = false;  // host memory is the device's memory (probed)
    // The driver starts an enqueued kernel without a clFlush (NVIDIA's and PoCL's,
    // bench/flush_probe): a NOWAIT launch is then not flushed; a burst is,
    // kKernelFlushNs after its first launch at the latest.
    bool starts_unflushed = false;
    // How the library waits for this device's commands (events/wait.hpp, STDCL_WAIT).
    WaitPolicy wait = WaitPolicy::driver;
    cl_uint base_align = 128;  // CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes
    cl_ulong max_alloc = 0;  // CL_DEVICE_MAX_MEM_ALLOC_SIZE
    cl_ulong global_mem = 0;
    bool image_support = false;
    int group = 0;  // index of its device-type group in the context
    std::unique_ptr<EventList> events{new EventList};
};

}  // namespace stdcl

// The public CLCONTEXT.
struct stdcl_context {
    std::string label;  // "stddev", "stdcpu", ... or "user"
    std::string why;  // how it was chosen (stdcl_context_why)
    bool is_default = false;
    cl_platform_id platform = nullptr;
    std::string platform_name;
    cl_context ctx = nullptr;  // held (retained) by each default context over the same devices
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

// Records msg ("label: msg") in the load report that a call given a NULL default
// context quotes; is_failure also warns once on stderr.  Load time only.
void note_load(const char* label, const std::string& msg, bool is_failure) noexcept;

// Context helpers.
// Throw on a NULL or unknown context (context_device: or a bad devnum); the
// message starts with "call: " when call is given.
CLCONTEXT* context_check(CLCONTEXT* cp, const char* call = nullptr);
Device& context_device(CLCONTEXT* cp, unsigned devnum, const char* call = nullptr);
// Whether cp is live (not destroyed), for a call that reached cp through an
// allocation, not context_check: notes cp as the call's context first, so that
// clcontext_destroy either sees the call or the call sees cp gone.
bool context_live(CLCONTEXT* cp);
// The context of c; nullptr if not ours.  Of default contexts that share c, the
// first of stddev, stdcpu, stdgpu, stdacc.
CLCONTEXT* context_of_cl(cl_context c);
void context_release_programs(CLCONTEXT* cp);
// Forgets the programs of clsort, clscan and clreduce of cp and releases their
// scratch memory (prims.cpp).
void prims_forget_context(CLCONTEXT* cp) noexcept;
// Drops libstdcl's records of the kernels the program made in cp's cl_context
// (and its references to them): all of them where no other live context works
// in it, else those that name cp.  After cp's memory objects were released, so
// that their arguments were set to NULL first (kernels.cpp).
void kernel_forget_cl_context(CLCONTEXT* cp) noexcept;

}  // namespace stdcl
