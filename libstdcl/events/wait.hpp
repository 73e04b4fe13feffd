// SPDX-License-Identifier: MIT
// wait.hpp: how the library waits for a device (wait.cpp; STDCL_WAIT in
// stdcl(7)).  Every wait of the library for its commands goes through
// wait_events or finish_queue: the driver's own wait (clWaitForEvents,
// clFinish), or a poll of the events' status that spins for a moment and
// then sleeps.
#pragma once

#include <stdcl.h>

#include <cstdint>
#include <string>

namespace stdcl {

struct Device;

enum class WaitPolicy : unsigned char {
    driver,  // clWaitForEvents / clFinish (NVIDIA's OpenCL spins; PoCL sleeps)
    block,  // poll: spin kWaitSpinNs, then sleep a growing interval between looks
    yield,  // poll: spin kWaitSpinNs, then sched_yield between looks
    // The driver's wait while the device's waits are short; after a wait that
    // took longer than kWaitSpinNs, block, until a wait ends within it again.
    adaptive,
};

// How long a polled wait spins before it sleeps or yields: a wait shorter
// than this (a launch-bound loop's) costs what the driver's spinning wait does.
constexpr std::uint64_t kWaitSpinNs = 200000;

// The policy of a new context's devices on the named platform: STDCL_WAIT
// (driver, block, yield, adaptive), or, when it is unset or auto, adaptive on
// the platforms whose own wait spins (NVIDIA's) and driver elsewhere.
WaitPolicy wait_policy_for(const std::string& platform) noexcept;
const char* wait_policy_name(WaitPolicy p) noexcept;

// Whether d's next wait polls: block and yield always, adaptive after a long
// wait.  A command the library would make without an event because it is
// waited for at once (a blocking launch, a blocking transfer) gets one then,
// to be polled.
bool wait_polls(const Device& d) noexcept;

// Waits for the n events (commands of device d, or user events) as
// clWaitForEvents does, and returns what it returns.  A polled wait flushes
// the events' queues, looks at their status until each has completed or
// failed, then calls clWaitForEvents, which returns at once, for its result:
// errors are those of the driver's wait.  A failed status query ends the
// poll in the driver's wait.
cl_int wait_events(const Device& d, cl_uint n, const cl_event* evs) noexcept;

// Waits for the n events (commands of device d) by looking at their status,
// whatever d's policy (flushing their queues first): spins for kWaitSpinNs,
// then sleeps (yield: yields) between looks.  For a short wait whose end the
// driver's own wait notices late: clreduce's read of its value into pinned
// memory (BENCHMARKS Table 15.18).  Returns CL_SUCCESS when each completed,
// else the first failed one's status; when a status query fails, what
// clWaitForEvents returns.
cl_int poll_events(const Device& d, cl_uint n, const cl_event* evs) noexcept;

// Waits for every command enqueued so far on q (one of d's in-order queues)
// as clFinish does, and returns what clFinish returns.  Polled: a marker,
// waited for as above, then clFinish, which has nothing left to wait for;
// when no marker can be enqueued, clFinish alone.
cl_int finish_queue(const Device& d, cl_command_queue q) noexcept;

}  // namespace stdcl
