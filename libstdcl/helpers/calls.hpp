// SPDX-License-Identifier: MIT
// calls.hpp: which threads are inside a libstdcl call, and on which context
// (calls.cpp).  Every entry point runs inside a CallScope (guarded() makes
// one), so that what releases shared objects (the exit handler,
// clcontext_destroy) can see whether another thread may be using them, and
// never pulls an object out from under a call in flight.
//
// Each thread has a slot of its own (a depth and the context its outermost
// call named), written only by that thread, so a call costs two atomic
// operations on a line no other thread writes.  A releaser announces itself
// first (exit_begin, or the context's removal from the live set under its
// lock) and then scans the slots: with sequentially consistent operations on
// both sides, either the releaser sees the call, or the call sees the
// release and does not go on.
#pragma once

#include <atomic>

namespace stdcl {

struct CallSlot;

// The calls of this thread: entered and left by CallScope.
class CallScope {
public:
    CallScope() noexcept;
    ~CallScope();
    CallScope(const CallScope&) = delete;
    CallScope& operator=(const CallScope&) = delete;
    // Throws Error(STDCL_ESTATE) when the call may not run: the exit handler
    // is releasing the contexts.
    void check() const;

private:
    CallSlot* slot_;
    bool refused_ = false;
};

// The context this thread's outermost call uses (a CLCONTEXT*, as an address):
// what context_check records.  Only the first one a call names counts.
void call_note_context(const void* cp) noexcept;

// How many threads other than this one are inside a call, on context cp (NULL:
// any call at all).
unsigned calls_elsewhere(const void* cp) noexcept;

// The process is exiting: returns true when no other thread is inside a call,
// and then every call a thread enters from here on fails (STDCL_ESTATE, "the
// process is exiting") instead of using what the exit handler releases; false
// when calls are in flight: they and later ones go on, and nothing may be
// released.  Called once, by the exit handler.
bool exit_begin() noexcept;
// The calling thread is the one that releases at exit: its calls run.
void exit_releasing_here() noexcept;

}  // namespace stdcl
