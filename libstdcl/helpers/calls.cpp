// SPDX-License-Identifier: MIT
// calls.cpp: each thread's slot of calls in flight (calls.hpp).
#include "helpers/calls.hpp"

#include "helpers/diag.hpp"

#include <pthread.h>

#include <mutex>
#include <new>
#include <thread>

namespace stdcl {

struct CallSlot {
    std::atomic<int> depth{0};
    std::atomic<const void*> ctx{nullptr};
    CallSlot* next = nullptr;
};

namespace {

// The slots of the threads that made a call, in a list under one mutex: a
// thread adds its slot at its first call and takes it out when it ends.
struct Slots {
    std::mutex mu;
    CallSlot* head = nullptr;
};
Slots& slots()
{
    // Never destroyed (nothing to destroy: a mutex and a pointer), and made
    // without an allocation that could fail inside a call's noexcept entry.
    static Slots s;
    return s;
}

// The slot of a thread whose own could not be allocated: shared, listed once,
// never freed.  The exit handler and clcontext_destroy still see its calls.
CallSlot g_shared_slot;
bool g_shared_listed = false;  // under slots().mu

// What the exit handler decided: still running, deciding (a call that enters
// waits for the decision), calls go on (nothing is released), or releasing
// (calls fail).
enum ExitState : int { running, deciding, keep, releasing };
std::atomic<int> g_exit{running};

// This thread's slot: made at its first call, listed, and taken out of the list
// and freed when the thread ends (a pthread key's destructor: the pointer itself
// is plain thread-local data, with nothing to run at the thread's end).
thread_local CallSlot* t_slot = nullptr;

void drop_slot(void* p)
{
    auto* slot = static_cast<CallSlot*>(p);
    {
        std::lock_guard<std::mutex> lock(slots().mu);
        for (CallSlot** q = &slots().head; *q; q = &(*q)->next)
            if (*q == slot) {
                *q = slot->next;
                break;
            }
    }
    delete slot;
}

pthread_key_t slot_key()
{
    static pthread_key_t key = [] {
        pthread_key_t k;
        pthread_key_create(&k, drop_slot);
        return k;
    }();
    return key;
}

CallSlot* my_slot()
{
    CallSlot* s = t_slot;
    if (s) return s;
    s = new (std::nothrow) CallSlot;
    if (!s) {  // out of memory: the shared slot, and a new try at the next call
        std::lock_guard<std::mutex> lock(slots().mu);
        if (!g_shared_listed) {
            g_shared_slot.next = slots().head;
            slots().head = &g_shared_slot;
            g_shared_listed = true;
        }
        return &g_shared_slot;
    }
    {
        std::lock_guard<std::mutex> lock(slots().mu);
        s->next = slots().head;
        slots().head = s;
    }
    pthread_setspecific(slot_key(), s);
    t_slot = s;
    return s;
}

thread_local bool t_releaser = false;  // this thread releases at exit: its calls run

}  // namespace

CallScope::CallScope() noexcept : slot_(my_slot())
{
    if (slot_->depth.fetch_add(1) != 0) return;  // a call inside a call: entered already
    int st = g_exit.load();
    while (st == deciding) {
        std::this_thread::yield();
        st = g_exit.load();
    }
    refused_ = st == releasing && !t_releaser;
}

CallScope::~CallScope()
{
    if (slot_->depth.load(std::memory_order_relaxed) == 1) slot_->ctx.store(nullptr, std::memory_order_release);
    slot_->depth.fetch_sub(1, std::memory_order_release);
}

void CallScope::check() const
{
    if (refused_)
        fail(STDCL_ESTATE,
             "the process is exiting (exit was called in another thread) and libstdcl is releasing its contexts: "
             "no call can run any more");
}

void call_note_context(const void* cp) noexcept
{
    // Ordered with clcontext_destroy by the lock on the live set that both
    // take after (context_live) or around (context_check) this store.
    CallSlot* s = my_slot();
    if (!s->ctx.load(std::memory_order_relaxed)) s->ctx.store(cp, std::memory_order_release);
}

unsigned calls_elsewhere(const void* cp) noexcept
{
    CallSlot* self = t_slot;
    unsigned n = 0;
    std::lock_guard<std::mutex> lock(slots().mu);
    for (CallSlot* s = slots().head; s; s = s->next)
        if (s != self && s->depth.load() > 0 && (!cp || s->ctx.load() == cp)) ++n;
    return n;
}

void exit_releasing_here() noexcept { t_releaser = true; }

bool exit_begin() noexcept
{
    g_exit.store(deciding);
    bool quiet = calls_elsewhere(nullptr) == 0;
    g_exit.store(quiet ? releasing : keep);
    return quiet;
}

}  // namespace stdcl
