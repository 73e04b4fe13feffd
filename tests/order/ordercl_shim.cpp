// SPDX-License-Identifier: MIT
// ordercl_shim.cpp: an ordering fuzzer for libstdcl, preloaded with
// LD_PRELOAD in front of the OpenCL ICD loader.
//
// Why: PoCL's CPU devices finish each command soon after it is enqueued, in
// enqueue order, so commands on two queues of a device (libstdcl's kernel
// queue and its transfer queue) nearly never overlap, and a missing
// dependency between them (an event the library should have put in a wait
// list) rarely gives a wrong result in the tests.  A GPU runs the queues
// apart and gives one.
//
// What: every clEnqueue* of OpenCL 1.2 that takes an event wait list is
// forwarded to the real one (dlsym RTLD_NEXT) with one more event in its
// wait list: a user event (the gate) that a background thread completes
// after a random delay.  Each command therefore starts at a random time
// after it is enqueued, no earlier than its wait list and its queue's order
// allow, and the queues drift apart as far as the declared dependencies let
// them.  The command's own event (the caller's out-parameter) is untouched.
// A blocking call waits for its gate like any other command: the thread
// completes gates on its own, so the call returns after the delay.
//
// The releaser thread keeps the gates in a min-heap by release time.  At
// exit every pending gate is completed at once and later commands are no
// longer gated, so no command stays held while the program's exit path
// waits (clFinish).  The shared state is never destroyed: the thread may
// still run during exit.  A child of fork() starts with a state and a
// thread of its own.
//
// Delays are drawn from a seeded generator (splitmix64), under the lock, in
// enqueue order: a single-threaded program gets the same delays for the same
// seed.  The C library's rand() is not used (test programs rely on its
// state; ORDERCL_RESEED, below, calls srand on purpose).
//
// Environment:
//   ORDERCL_SEED=S          seed (decimal); default: from the time and pid
//   ORDERCL_MAX_US=N        delays are uniform in [0, N] microseconds
//                           (default 2000; 0 still gates, with no delay)
//   ORDERCL_OFF=1           forward every call unchanged
//   ORDERCL_QUIET=1         no line on stderr at load
//   ORDERCL_REPORT=file     at exit, append "ordercl: N commands held, seed S"
//   ORDERCL_RESEED=1        clBuildProgram reseeds the C library's rand() after
//                           building (srand of the time and pid), as NVIDIA's
//                           OpenCL compiler does: a library that builds in a
//                           program's process must keep the program's sequence
//   ORDERCL_ARGCHECK=0      no check of kernel arguments (below)
//   ORDERCL_HELDCHECK=0     no check of releases of objects a kernel holds (below)
//   ORDERCL_SUBCHECK=0      no check of the order sub-buffers are released in (below)
//
// It also checks that every kernel launch uses memory objects that are still
// the ones its arguments were set to: clSetKernelArg of a cl_mem the process
// created records the object's generation; a launch whose argument names an
// object released since (its handle perhaps reused for a new object, which
// the kernel was never given) prints "ordercl: stale argument ..." and
// aborts.  A driver that keeps a raw pointer in the kernel (NVIDIA's) fails
// on such launches only at times; this check fails every time.  And it checks
// that no memory object is released (its last reference dropped) while a
// kernel argument still holds it: "ordercl: held argument ..." and abort.
// NVIDIA's OpenCL can crash in such a release; libstdcl sets those arguments
// to NULL first.
//
// And it models NVIDIA's sub-buffers: releasing a sub-buffer while a newer
// sub-buffer of the same buffer, which a kernel was launched with, still
// exists crashes that driver; a released sub-buffer there exists for a while
// after the commands that used it completed.  Here a destroyed sub-buffer
// counts as existing for a random delay (up to ORDERCL_MAX_US) before its
// destructor callbacks run, and such a release prints "ordercl: sub-buffer
// order ..." and aborts.
//
// Destructor callbacks (clSetMemObjectDestructorCallback) come late, from a
// thread of their own, after up to ORDERCL_MAX_US, as from a driver that
// destroys a released object only once its own references are gone.
//
// The line at load ("ordercl: seed S, delays up to N us ...") is printed by
// processes that link OpenCL (a shell or tool that also gets the preload
// stays quiet); one that opens OpenCL later prints at its first command.
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <new>
#include <queue>
#include <thread>
#include <vector>

#define SHIM_API extern "C" __attribute__((visibility("default")))

namespace {

using Clock = std::chrono::steady_clock;

// ---------------------------------------------------------------------------
// Configuration
// ---------------------------------------------------------------------------

uint64_t splitmix64(uint64_t& s)
{
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

bool env_on(const char* name)
{
    const char* v = getenv(name);
    return v && strcmp(v, "1") == 0;
}

bool env_u64(const char* name, uint64_t* out)
{
    const char* v = getenv(name);
    if (!v || !*v) return false;
    char* end = nullptr;
    unsigned long long x = strtoull(v, &end, 10);
    if (*end) return false;
    *out = x;
    return true;
}

struct Config {
    bool off = false;
    bool quiet = false;
    bool argcheck = true;
    bool heldcheck = true;
    bool subcheck = true;
    uint64_t seed = 0;
    uint64_t max_us = 2000;
    const char* report = nullptr;
};

const Config& cfg()
{
    static const Config c = [] {
        Config k;
        k.off = env_on("ORDERCL_OFF");
        k.quiet = env_on("ORDERCL_QUIET");
        if (const char* v = getenv("ORDERCL_ARGCHECK")) k.argcheck = strcmp(v, "0") != 0;
        if (const char* v = getenv("ORDERCL_HELDCHECK")) k.heldcheck = strcmp(v, "0") != 0;
        if (const char* v = getenv("ORDERCL_SUBCHECK")) k.subcheck = strcmp(v, "0") != 0;
        env_u64("ORDERCL_MAX_US", &k.max_us);
        if (!env_u64("ORDERCL_SEED", &k.seed)) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            uint64_t s = uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
            s ^= uint64_t(getpid()) << 32;
            k.seed = splitmix64(s) % 1000000000000ull;  // short enough to type back
        }
        const char* r = getenv("ORDERCL_REPORT");
        k.report = r && *r ? strdup(r) : nullptr;
        return k;
    }();
    return c;
}

// This process uses OpenCL: print the line once, and report at exit.
std::once_flag g_banner_once;
std::atomic<bool> g_active{false};

void activate()
{
    std::call_once(g_banner_once, [] {
        const Config& c = cfg();
        g_active.store(true);
        if (c.off || c.quiet) return;
        fprintf(stderr, "ordercl: seed %llu, delays up to %llu us (ORDERCL_SEED=%llu replays)\n",
                (unsigned long long)c.seed, (unsigned long long)c.max_us, (unsigned long long)c.seed);
    });
}

// ---------------------------------------------------------------------------
// Real OpenCL functions
// ---------------------------------------------------------------------------

void* real_sym(const char* name)
{
    void* p = dlsym(RTLD_NEXT, name);
    if (!p) {
        static const char msg[] = "ordercl_shim: a real OpenCL function is missing\n";
        ssize_t w = write(2, msg, sizeof msg - 1);
        (void)w;
        abort();
    }
    return p;
}

template <class T> T load_real(T& slot, const char* name)
{
    T p = __atomic_load_n(&slot, __ATOMIC_ACQUIRE);
    if (!p) {
        p = reinterpret_cast<T>(real_sym(name));
        __atomic_store_n(&slot, p, __ATOMIC_RELEASE);
    }
    return p;
}
#define REAL(fn) load_real(real_##fn, #fn)
#define DECLARE_REAL(fn) decltype(&::fn) real_##fn

DECLARE_REAL(clGetCommandQueueInfo);
DECLARE_REAL(clCreateUserEvent);
DECLARE_REAL(clSetUserEventStatus);
DECLARE_REAL(clRetainEvent);
DECLARE_REAL(clReleaseEvent);
DECLARE_REAL(clEnqueueNDRangeKernel);
DECLARE_REAL(clEnqueueTask);
DECLARE_REAL(clEnqueueNativeKernel);
DECLARE_REAL(clEnqueueReadBuffer);
DECLARE_REAL(clEnqueueWriteBuffer);
DECLARE_REAL(clEnqueueReadBufferRect);
DECLARE_REAL(clEnqueueWriteBufferRect);
DECLARE_REAL(clEnqueueCopyBuffer);
DECLARE_REAL(clEnqueueCopyBufferRect);
DECLARE_REAL(clEnqueueFillBuffer);
DECLARE_REAL(clEnqueueReadImage);
DECLARE_REAL(clEnqueueWriteImage);
DECLARE_REAL(clEnqueueCopyImage);
DECLARE_REAL(clEnqueueCopyImageToBuffer);
DECLARE_REAL(clEnqueueCopyBufferToImage);
DECLARE_REAL(clEnqueueFillImage);
DECLARE_REAL(clEnqueueMapBuffer);
DECLARE_REAL(clEnqueueMapImage);
DECLARE_REAL(clEnqueueUnmapMemObject);
DECLARE_REAL(clEnqueueMarkerWithWaitList);
DECLARE_REAL(clEnqueueBarrierWithWaitList);
DECLARE_REAL(clEnqueueMigrateMemObjects);
DECLARE_REAL(clBuildProgram);
DECLARE_REAL(clCreateBuffer);
DECLARE_REAL(clCreateSubBuffer);
DECLARE_REAL(clCreateImage);
DECLARE_REAL(clRetainMemObject);
DECLARE_REAL(clReleaseMemObject);
DECLARE_REAL(clSetKernelArg);
DECLARE_REAL(clReleaseKernel);
DECLARE_REAL(clRetainKernel);
DECLARE_REAL(clSetMemObjectDestructorCallback);

// Completes a gate and drops the releaser's reference to it.
void open_gate(cl_event gate)
{
    REAL(clSetUserEventStatus)(gate, CL_COMPLETE);
    REAL(clReleaseEvent)(gate);
}

// ---------------------------------------------------------------------------
// The releaser
// ---------------------------------------------------------------------------

struct Held {
    Clock::time_point when;
    uint64_t seq;  // enqueue order breaks ties
    cl_event gate;
};
struct Later {
    bool operator()(const Held& a, const Held& b) const { return a.when != b.when ? a.when > b.when : a.seq > b.seq; }
};

struct Releaser {
    std::mutex mu;
    std::condition_variable cv;
    std::priority_queue<Held, std::vector<Held>, Later> heap;
    uint64_t rng = 0;
    uint64_t seq = 0;
    bool exiting = false;  // at exit: no new gates, pending ones opened
    bool no_thread = false;  // the thread could not start: gates open at once
    std::once_flag started;
    std::atomic<unsigned long> held{0};
};

// Never destroyed: the detached thread uses it until the process ends.
std::atomic<Releaser*> g_rel{nullptr};

Releaser* make_releaser(uint64_t rng)
{
    Releaser* p = new Releaser;
    p->rng = rng;
    return p;
}

Releaser& rel()
{
    Releaser* r = g_rel.load(std::memory_order_acquire);
    if (!r) {
        Releaser* mine = make_releaser(cfg().seed);
        if (g_rel.compare_exchange_strong(r, mine))
            r = mine;
        else
            delete mine;  // another thread's came first; nobody saw this one
    }
    return *r;
}

// A child of fork() has no releaser thread and maybe a lock held by one: it
// starts over with a state of its own (the parent's gates are the parent's)
// and the delays continue from the parent's.
void after_fork_child()
{
    Releaser* old = g_rel.load(std::memory_order_relaxed);
    if (old) g_rel.store(make_releaser(old->rng), std::memory_order_release);
}

void releaser_loop()
{
    Releaser& r = rel();
    std::vector<cl_event> due;
    std::unique_lock<std::mutex> lock(r.mu);
    for (;;) {
        if (r.heap.empty()) {
            r.cv.wait(lock);
            continue;
        }
        Clock::time_point now = Clock::now();
        if (r.heap.top().when > now) {
            r.cv.wait_until(lock, r.heap.top().when);
            continue;
        }
        while (!r.heap.empty() && r.heap.top().when <= now) {
            due.push_back(r.heap.top().gate);
            r.heap.pop();
        }
        lock.unlock();  // PoCL starts the commands: not under our lock
        for (cl_event g : due) open_gate(g);
        due.clear();
        lock.lock();
    }
}

void start_thread()
{
    Releaser& r = rel();
    std::call_once(r.started, [&r] {
        try {
            std::thread(releaser_loop).detach();
        } catch (...) {
            std::lock_guard<std::mutex> lock(r.mu);
            r.no_thread = true;
        }
    });
}

// Hands the gate (and its reference) to the releaser with a random delay;
// false if it was opened at once instead (exit has begun).
bool schedule(cl_event gate)
{
    start_thread();
    Releaser& r = rel();
    {
        std::lock_guard<std::mutex> lock(r.mu);
        if (!r.exiting && !r.no_thread) {
            uint64_t max = cfg().max_us;
            uint64_t us = max ? splitmix64(r.rng) % (max + 1) : 0;
            r.heap.push({Clock::now() + std::chrono::microseconds(us), r.seq++, gate});
            r.held.fetch_add(1, std::memory_order_relaxed);
            r.cv.notify_one();
            return true;
        }
    }
    open_gate(gate);
    return false;
}

// At exit: open every pending gate, gate nothing more, write the report.
std::atomic<bool> g_exit_done{false};

void at_exit()
{
    if (g_exit_done.exchange(true)) return;
    Releaser& r = rel();
    std::vector<cl_event> pending;
    {
        std::lock_guard<std::mutex> lock(r.mu);
        r.exiting = true;
        while (!r.heap.empty()) {
            pending.push_back(r.heap.top().gate);
            r.heap.pop();
        }
    }
    for (cl_event g : pending) open_gate(g);

    const Config& c = cfg();
    if (!c.report || !g_active.load()) return;
    char line[128];
    int n = snprintf(line, sizeof line, "ordercl: %lu commands held, seed %llu\n", r.held.load(),
                     (unsigned long long)c.seed);
    int fd = open(c.report, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    ssize_t w = write(fd, line, size_t(n));
    (void)w;
    close(fd);
}

__attribute__((constructor)) void shim_init()
{
    cfg();
    rel();
    // A process that does not link OpenCL (a shell, a compiler a test
    // starts) prints nothing; one that opens it later prints at its first
    // command.
    if (dlsym(RTLD_NEXT, "clCreateUserEvent")) activate();
    // Registered after the constructors of libstdcl and the ICD loader ran,
    // so it runs before their exit handlers and destructors.
    atexit(at_exit);
    pthread_atfork(nullptr, nullptr, after_fork_child);
}

// ---------------------------------------------------------------------------
// The gate of one command
// ---------------------------------------------------------------------------

// Builds the wait list a command is forwarded with: the caller's plus a
// gate, or the caller's unchanged (off, exit begun, a malformed list whose
// error the driver must report, no user event).  The gate is scheduled
// before the real call, so a blocking call returns after its delay; this
// call's own reference keeps the gate valid while the driver reads the list,
// even if the releaser has opened it by then.
class Gate {
public:
    Gate(cl_command_queue q, cl_uint n, const cl_event* list, bool empty_means_all = false) : n_(n), list_(list)
    {
        const Config& c = cfg();
        if (c.off) return;
        activate();
        if ((n == 0) != (list == nullptr)) return;
        // A marker or barrier with no wait list waits for every earlier
        // command of its queue; with a gate in its list, on an out-of-order
        // queue, it would wait for the gate alone.
        if (empty_means_all && n == 0) {
            cl_command_queue_properties props = 0;
            if (REAL(clGetCommandQueueInfo)(q, CL_QUEUE_PROPERTIES, sizeof props, &props, nullptr) != CL_SUCCESS ||
                (props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE))
                return;
        }
        cl_context ctx = nullptr;
        if (REAL(clGetCommandQueueInfo)(q, CL_QUEUE_CONTEXT, sizeof ctx, &ctx, nullptr) != CL_SUCCESS) return;
        cl_int err = CL_SUCCESS;
        cl_event gate = REAL(clCreateUserEvent)(ctx, &err);
        if (!gate || err != CL_SUCCESS) return;
        REAL(clRetainEvent)(gate);  // this call's reference; the releaser owns the first
        if (!schedule(gate)) {
            // Exit has begun: the gate is open already; forward unchanged.
            REAL(clReleaseEvent)(gate);
            return;
        }
        gate_ = gate;
        ext_.reserve(size_t(n) + 1);
        ext_.assign(list, list + n);
        ext_.push_back(gate);
        n_ = n + 1;
        list_ = ext_.data();
    }
    ~Gate()
    {
        if (gate_) REAL(clReleaseEvent)(gate_);
    }
    Gate(const Gate&) = delete;
    Gate& operator=(const Gate&) = delete;

    cl_uint n() const { return n_; }
    const cl_event* list() const { return list_; }

private:
    cl_uint n_;
    const cl_event* list_;
    cl_event gate_ = nullptr;
    std::vector<cl_event> ext_;
};

// ---------------------------------------------------------------------------
// Kernel arguments that name released memory objects
// ---------------------------------------------------------------------------

struct MemObject {
    uint64_t gen;  // this object's generation: a reused handle gets a new one
    long refs;  // the process's references (create and retain, less release)
};
struct ArgRecord {
    cl_mem mem;
    uint64_t gen;
};
// A sub-buffer, from its creation until the (late) end of its destruction.
struct SubBuffer {
    cl_mem mem;
    cl_mem parent;
    bool launched = false;  // a kernel was launched with it
    bool released = false;  // the process's last reference is gone
    std::vector<std::pair<void(CL_CALLBACK*)(cl_mem, void*), void*>> callbacks;  // the program's
};
struct ArgTable {
    std::mutex mu;
    uint64_t next_gen = 0;
    std::map<cl_mem, MemObject> live;
    std::map<std::pair<cl_kernel, cl_uint>, ArgRecord> args;
    std::map<cl_kernel, unsigned> kernel_retains;  // clRetainKernel calls not yet matched by a release
    uint64_t next_sub = 0;
    std::map<uint64_t, SubBuffer> subs;  // by creation order, until destroyed
    std::map<cl_mem, uint64_t> live_subs;  // handle -> id, until released
};
ArgTable& args_table()
{
    static ArgTable* t = new ArgTable;  // never destroyed: calls may come during exit
    return *t;
}

void note_created(cl_mem m)
{
    if (!m || !cfg().argcheck) return;
    ArgTable& t = args_table();
    std::lock_guard<std::mutex> lock(t.mu);
    t.live[m] = MemObject{++t.next_gen, 1};
}

void note_refs(cl_mem m, long delta)
{
    if (!m || !cfg().argcheck) return;
    ArgTable& t = args_table();
    std::lock_guard<std::mutex> lock(t.mu);
    auto it = t.live.find(m);
    if (it == t.live.end()) return;
    it->second.refs += delta;
    if (it->second.refs > 0) return;
    if (cfg().subcheck) {
        auto ls = t.live_subs.find(m);
        if (ls != t.live_subs.end()) {
            SubBuffer& me = t.subs.at(ls->second);
            for (auto n = t.subs.upper_bound(ls->second); n != t.subs.end(); ++n) {
                if (n->second.parent != me.parent || !n->second.launched) continue;
                fprintf(stderr,
                        "ordercl: sub-buffer order: sub-buffer %p of buffer %p released while a newer one (%p%s), "
                        "which a kernel was launched with, still exists (NVIDIA's OpenCL crashes here)\n",
                        (void*)m, (void*)me.parent, (void*)n->second.mem,
                        n->second.released ? ", released but not yet destroyed" : "");
                abort();
            }
            me.released = true;
            t.live_subs.erase(ls);
        }
    }
    if (cfg().heldcheck)
        for (const auto& a : t.args) {
            if (a.second.mem != m || a.second.gen != it->second.gen) continue;
            fprintf(stderr,
                    "ordercl: held argument: memory object %p released while argument %u of kernel %p holds it\n",
                    (void*)m, a.first.second, (void*)a.first.first);
            abort();
        }
    t.live.erase(it);
}

void note_arg(cl_kernel k, cl_uint i, size_t size, const void* value)
{
    if (!cfg().argcheck) return;
    ArgTable& t = args_table();
    std::lock_guard<std::mutex> lock(t.mu);
    auto key = std::make_pair(k, i);
    cl_mem m = nullptr;
    if (size == sizeof(cl_mem) && value) memcpy(&m, value, sizeof m);
    auto it = m ? t.live.find(m) : t.live.end();
    if (it == t.live.end())
        t.args.erase(key);
    else
        t.args[key] = ArgRecord{m, it->second.gen};
}

// The driver destroyed sub-buffer `id`: it counts as existing for a random
// while longer, as on a driver that keeps its own references after the
// commands that used it completed; then the program's destructor callbacks run.
void CL_CALLBACK sub_destroyed(cl_mem m, void* id_as_ptr)
{
    uint64_t id = uint64_t(uintptr_t(id_as_ptr));
    uint64_t r = id ^ cfg().seed;
    uint64_t us = cfg().max_us ? splitmix64(r) % (cfg().max_us + 1) : 0;
    auto finish = [m, id, us] {
        if (us) std::this_thread::sleep_for(std::chrono::microseconds(us));
        std::vector<std::pair<void(CL_CALLBACK*)(cl_mem, void*), void*>> cbs;
        {
            ArgTable& t = args_table();
            std::lock_guard<std::mutex> lock(t.mu);
            auto it = t.subs.find(id);
            if (it == t.subs.end()) return;
            cbs.swap(it->second.callbacks);
            t.subs.erase(it);
        }
        for (auto c = cbs.rbegin(); c != cbs.rend(); ++c) c->first(m, c->second);  // the latest first, as OpenCL
    };
    try {
        std::thread(finish).detach();
    } catch (...) {
        finish();
    }
}

// A sub-buffer made: tracked until its destruction.
void note_sub(cl_mem m, cl_mem parent)
{
    if (!m || !cfg().argcheck || !cfg().subcheck) return;
    ArgTable& t = args_table();
    uint64_t id;
    {
        std::lock_guard<std::mutex> lock(t.mu);
        id = ++t.next_sub;
        t.subs[id] = SubBuffer{m, parent, false, false, {}};
        t.live_subs[m] = id;
    }
    if (REAL(clSetMemObjectDestructorCallback)(m, sub_destroyed, (void*)uintptr_t(id)) != CL_SUCCESS) {
        std::lock_guard<std::mutex> lock(t.mu);  // untracked: no check can be made on it
        t.subs.erase(id);
        t.live_subs.erase(m);
    }
}

// The program's destructor callback on a tracked sub-buffer: kept, to run when
// the sub-buffer counts as destroyed.  False when m is not tracked.
bool stash_destructor(cl_mem m, void(CL_CALLBACK* fn)(cl_mem, void*), void* user)
{
    if (!cfg().argcheck || !cfg().subcheck) return false;
    ArgTable& t = args_table();
    std::lock_guard<std::mutex> lock(t.mu);
    auto ls = t.live_subs.find(m);
    if (ls == t.live_subs.end()) return false;
    t.subs.at(ls->second).callbacks.emplace_back(fn, user);
    return true;
}

// A clRetainKernel of k: its arguments outlive the next release.
void retain_kernel(cl_kernel k)
{
    if (!cfg().argcheck) return;
    ArgTable& t = args_table();
    std::lock_guard<std::mutex> lock(t.mu);
    ++t.kernel_retains[k];
}

// A clReleaseKernel of k: the last reference (as far as the process's retains
// tell) takes its arguments' records with it.
void forget_kernel(cl_kernel k)
{
    if (!cfg().argcheck) return;
    ArgTable& t = args_table();
    std::lock_guard<std::mutex> lock(t.mu);
    auto r = t.kernel_retains.find(k);
    if (r != t.kernel_retains.end()) {
        if (--r->second == 0) t.kernel_retains.erase(r);
        return;  // another reference holds the kernel, and its arguments
    }
    t.args.erase(t.args.lower_bound(std::make_pair(k, cl_uint(0))), t.args.upper_bound(std::make_pair(k, ~cl_uint(0))));
}

void check_args(cl_kernel k)
{
    if (!cfg().argcheck) return;
    ArgTable& t = args_table();
    std::lock_guard<std::mutex> lock(t.mu);
    for (auto it = t.args.lower_bound(std::make_pair(k, cl_uint(0))); it != t.args.end() && it->first.first == k;
         ++it) {
        if (cfg().subcheck) {
            auto ls = t.live_subs.find(it->second.mem);
            if (ls != t.live_subs.end()) t.subs.at(ls->second).launched = true;
        }
        auto m = t.live.find(it->second.mem);
        if (m != t.live.end() && m->second.gen == it->second.gen) continue;
        fprintf(stderr,
                "ordercl: stale argument: kernel %p launched with argument %u set to memory object %p, which was "
                "released since%s\n",
                (void*)k, it->first.second, (void*)it->second.mem,
                m != t.live.end() ? " (its handle now names a new object)" : "");
        abort();
    }
}

}  // namespace

// ---------------------------------------------------------------------------
// The OpenCL entry points
// ---------------------------------------------------------------------------

SHIM_API CL_API_ENTRY cl_int CL_API_CALL clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dim,
                                                                const size_t* offset, const size_t* global,
                                                                const size_t* local, cl_uint n, const cl_event* list,
                                                                cl_event* ev)
{
    check_args(k);
    Gate g(q, n, list);
    return REAL(clEnqueueNDRangeKernel)(q, k, dim, offset, global, local, g.n(), g.list(), ev);
}

SHIM_API CL_API_ENTRY cl_mem CL_API_CALL clCreateBuffer(cl_context c, cl_mem_flags f, size_t size, void* host,
                                                        cl_int* err)
{
    cl_mem m = REAL(clCreateBuffer)(c, f, size, host, err);
    note_created(m);
    return m;
}

SHIM_API CL_API_ENTRY cl_mem CL_API_CALL clCreateSubBuffer(cl_mem parent, cl_mem_flags f, cl_buffer_create_type type,
                                                           const void* info, cl_int* err)
{
    cl_mem m = REAL(clCreateSubBuffer)(parent, f, type, info, err);
    note_created(m);
    note_sub(m, parent);
    return m;
}

SHIM_API CL_API_ENTRY cl_mem CL_API_CALL clCreateImage(cl_context c, cl_mem_flags f, const cl_image_format* fmt,
                                                       const cl_image_desc* desc, void* host, cl_int* err)
{
    cl_mem m = REAL(clCreateImage)(c, f, fmt, desc, host, err);
    note_created(m);
    return m;
}

SHIM_API CL_API_ENTRY cl_int CL_API_CALL clRetainMemObject(cl_mem m)
{
    cl_int r = REAL(clRetainMemObject)(m);
    if (r == CL_SUCCESS) note_refs(m, +1);
    return r;
}

SHIM_API CL_API_ENTRY cl_int CL_API_CALL clReleaseMemObject(cl_mem m)
{
    note_refs(m, -1);  // before the real call: its handle may be reused at once
    return REAL(clReleaseMemObject)(m);
}

SHIM_API CL_API_ENTRY cl_int CL_API_CALL clSetKernelArg(cl_kernel k, cl_uint i, size_t size, const void* value)
{
    cl_int r = REAL(clSetKernelArg)(k, i, size, value);
    if (r == CL_SUCCESS) note_arg(k, i, size, value);
    return r;
}

namespace {
// A destructor callback, delivered late: some drivers (NVIDIA's) destroy a
// released memory object only once their own references to it are gone,
// after the commands that used it completed.
struct LateDestructor {
    void(CL_CALLBACK* fn)(cl_mem, void*);
    void* user;
};
std::atomic<uint64_t> g_late_rng{0};

void CL_CALLBACK late_destructor(cl_mem m, void* p)
{
    LateDestructor d = *static_cast<LateDestructor*>(p);
    delete static_cast<LateDestructor*>(p);
    uint64_t r = g_late_rng.fetch_add(1) ^ cfg().seed;
    uint64_t us = cfg().max_us ? splitmix64(r) % (cfg().max_us + 1) : 0;
    try {
        std::thread([d, m, us] {
            std::this_thread::sleep_for(std::chrono::microseconds(us));
            d.fn(m, d.user);
        }).detach();
    } catch (...) {
        d.fn(m, d.user);  // no thread: at once
    }
}
}  // namespace

SHIM_API CL_API_ENTRY cl_int CL_API_CALL clSetMemObjectDestructorCallback(cl_mem m,
                                                                          void(CL_CALLBACK* fn)(cl_mem, void*),
                                                                          void* user)
{
    if (cfg().off || !fn) return REAL(clSetMemObjectDestructorCallback)(m, fn, user);
    if (stash_destructor(m, fn, user)) return CL_SUCCESS;
    auto* d = new (std::nothrow) LateDestructor{fn, user};
    if (!d) return REAL(clSetMemObjectDestructorCallback)(m, fn, user);
    cl_int r = REAL(clSetMemObjectDestructorCallback)(m, late_destructor, d);
    if (r != CL_SUCCESS) delete d;
    return r;
}

SHIM_API CL_API_ENTRY cl_int CL_API_CALL clRetainKernel(cl_kernel k)
{
    cl_int r = REAL(clRetainKernel)(k);
    if (r == CL_SUCCESS) retain_kernel(k);
    return r;
}

SHIM_API CL_API_ENTRY cl_int CL_API_CALL clReleaseKernel(cl_kernel k)
{
    forget_kernel(k);  // before the real call: its handle may be reused at once
    return REAL(clReleaseKernel)(k);
}

SHIM_API CL_API_ENTRY cl_int CL_API_CALL clEnqueueTask(cl_command_queue q, cl_kernel k, cl_uint n, const cl_event* list,
                                                       cl_event* ev)
{
    Gate g(q, n, list);
    return REAL(clEnqueueTask)(q, k, g.n(), g.list(), ev);
}

SHIM_API CL_API_ENTRY cl_int CL_API_CALL clEnqueueNativeKernel(cl_command_queue q, void(CL_CALLBACK* fn)(void*),
                                                               void* args, size_t cb_args, cl_uint nmem,
                                                               const cl_mem* mems, const void** mem_loc, cl_uint n,
                                                               const cl_event* list, cl_event* ev)
{
    Gate g(q, n, list);
    return REAL(clEnqueueNativeKernel)(q, fn, args, cb_args, nmem, mems, mem_loc, g.n(), g.list(), ev);
}

SHIM_API CL_API_ENTRY cl_int CL_API_CALL clEnqueueReadBuffer(cl_command_queue q, cl_mem buf, cl_bool blocking,
                                                             size_t offset, size_t size, void* ptr, cl_uint n,
                                                             const cl_event* list, cl_event* ev)
{
    Gate g(q, n, list);
    return REAL(clEnqueueReadBuffer)(q, buf, blocking, offset, size, ptr, g.n(), g.list(), ev);
}

SHIM_API CL_API_ENTRY cl_int CL_API_CALL clEnqueueWriteBuffer(cl_command_queue q, cl_mem buf, cl_bool blocking,
                                                              size_t offset, size_t size, const void* ptr, cl_uint n,
                                                              const cl_event* list, cl_event* ev)
{
    Gate g(q, n, list);
    return REAL(clEnqueueWriteBuffer)(q, buf, blocking, offset, size, ptr, g.n(), g.list(), ev);
}

SHIM_API CL_API_ENTRY cl_int CL_API_CALL clEnqueueReadBufferRect(cl_command_queue q, cl_mem buf, cl_bool blocking,
                                                                 const size_t* buf_origin, const size_t* host_origin,
                                                                 const size_t* region, size_t buf_row_pitch,
                                                                 size_t buf_slice_pitch, size_t host_row_pitch,
                                                                 size_t host_slice_pitch, void* ptr, cl_uint n,
                                                                 const cl_event* list, cl_event* ev)
{
    Gate g(q, n, list);
    return REAL(clEnqueueReadBufferRect)(q, buf, blocking, buf_origin, host_origin, region, buf_row_pitch,
                                         buf_slice_pitch, host_row_pitch, host_slice_pitch, ptr, g.n(), g.list(), ev);
}

SHIM_API CL_API_ENTRY cl_int CL_API_CALL clEnqueueWriteBufferRect(cl_command_queue q, cl_mem buf, cl_bool blocking,
                                                                  const size_t* buf_origin, const size_t* host_origin,
                                                                  const size_t* region, size_t buf_row_pitch,
                                                                  size_t buf_slice_pitch, size_t host_row_pitch,
                                                                  size_t host_slice_pitch, const void* ptr, cl_uint n,
                                                                  const cl_event* list, cl_event* ev)
{
    Gate g(q, n, list);
    return REAL(clEnqueueWriteBufferRect)(q, buf, blocking, buf_origin, host_origin, region, buf_row_pitch,
                                          buf_slice_pitch, host_row_pitch, host_slice_pitch, ptr, g.n(), g.list(), ev);
}

SHIM_API CL_API_ENTRY cl_int CL_API_CALL clEnqueueCopyBuffer(cl_command_queue q, cl_mem src, cl_mem dst,
                                                             size_t src_offset, size_t dst_offset, size_t size,
                                                             cl_uint n, const cl_event* list, cl_event* ev)
{
    Gate g(q, n, list);
    return REAL(clEnqueueCopyBuffer)(q, src, dst, src_offset, dst_offset, size, g.n(), g.list(), ev);
}

SHIM_API CL_API_ENTRY cl_int CL_API_CALL clEnqueueCopyBufferRect(cl_command_queue q, cl_mem src, cl_mem dst,
                                                                 const size_t* src_origin, const size_t* dst_origin,
                                                                 const size_t* region, size_t src_row_pitch,
                                                                 size_t src_slice_pitch, size_t dst_row_pitch,
                                                                 size_t dst_slice_pitch, cl_uint n,
                                                                 const cl_event* list, cl_event* ev)
{
    Gate g(q, n, list);
    return REAL(clEnqueueCopyBufferRect)(q, src, dst, src_origin, dst_origin, region, src_row_pitch, src_slice_pitch,
                                         dst_row_pitch, dst_slice_pitch, g.n(), g.list(), ev);
}

SHIM_API CL_API_ENTRY cl_int CL_API_CALL clEnqueueFillBuffer(cl_command_queue q, cl_mem buf, const void* pattern,
                                                             size_t pattern_size, size_t offset, size_t size, cl_uint n,
                                                             const cl_event* list, cl_event* ev)
{
    Gate g(q, n, list);
    return REAL(clEnqueueFillBuffer)(q, buf, pattern, pattern_size, offset, size, g.n(), g.list(), ev);
}

SHIM_API CL_API_ENTRY cl_int CL_API_CALL clEnqueueReadImage(cl_command_queue q, cl_mem img, cl_bool blocking,
                                                            const size_t* origin, const size_t* region,
                                                            size_t row_pitch, size_t slice_pitch, void* ptr, cl_uint n,
                                                            const cl_event* list, cl_event* ev)
{
    Gate g(q, n, list);
    return REAL(clEnqueueReadImage)(q, img, blocking, origin, region, row_pitch, slice_pitch, ptr, g.n(), g.list(), ev);
}

SHIM_API CL_API_ENTRY cl_int CL_API_CALL clEnqueueWriteImage(cl_command_queue q, cl_mem img, cl_bool blocking,
                                                             const size_t* origin, const size_t* region,
                                                             size_t row_pitch, size_t slice_pitch, const void* ptr,
                                                             cl_uint n, const cl_event* list, cl_event* ev)
{
    Gate g(q, n, list);
    return REAL(clEnqueueWriteImage)(q, img, blocking, origin, region, row_pitch, slice_pitch, ptr, g.n(), g.list(),
                                     ev);
}

SHIM_API CL_API_ENTRY cl_int CL_API_CALL clEnqueueCopyImage(cl_command_queue q, cl_mem src, cl_mem dst,
                                                            const size_t* src_origin, const size_t* dst_origin,
                                                            const size_t* region, cl_uint n, const cl_event* list,
                                                            cl_event* ev)
{
    Gate g(q, n, list);
    return REAL(clEnqueueCopyImage)(q, src, dst, src_origin, dst_origin, region, g.n(), g.list(), ev);
}

SHIM_API CL_API_ENTRY cl_int CL_API_CALL clEnqueueCopyImageToBuffer(cl_command_queue q, cl_mem src, cl_mem dst,
                                                                    const size_t* src_origin, const size_t* region,
                                                                    size_t dst_offset, cl_uint n, const cl_event* list,
                                                                    cl_event* ev)
{
    Gate g(q, n, list);
    return REAL(clEnqueueCopyImageToBuffer)(q, src, dst, src_origin, region, dst_offset, g.n(), g.list(), ev);
}

SHIM_API CL_API_ENTRY cl_int CL_API_CALL clEnqueueCopyBufferToImage(cl_command_queue q, cl_mem src, cl_mem dst,
                                                                    size_t src_offset, const size_t* dst_origin,
                                                                    const size_t* region, cl_uint n,
                                                                    const cl_event* list, cl_event* ev)
{
    Gate g(q, n, list);
    return REAL(clEnqueueCopyBufferToImage)(q, src, dst, src_offset, dst_origin, region, g.n(), g.list(), ev);
}

SHIM_API CL_API_ENTRY cl_int CL_API_CALL clEnqueueFillImage(cl_command_queue q, cl_mem img, const void* color,
                                                            const size_t* origin, const size_t* region, cl_uint n,
                                                            const cl_event* list, cl_event* ev)
{
    Gate g(q, n, list);
    return REAL(clEnqueueFillImage)(q, img, color, origin, region, g.n(), g.list(), ev);
}

SHIM_API CL_API_ENTRY void* CL_API_CALL clEnqueueMapBuffer(cl_command_queue q, cl_mem buf, cl_bool blocking,
                                                           cl_map_flags flags, size_t offset, size_t size, cl_uint n,
                                                           const cl_event* list, cl_event* ev, cl_int* errcode_ret)
{
    Gate g(q, n, list);
    return REAL(clEnqueueMapBuffer)(q, buf, blocking, flags, offset, size, g.n(), g.list(), ev, errcode_ret);
}

SHIM_API CL_API_ENTRY void* CL_API_CALL clEnqueueMapImage(cl_command_queue q, cl_mem img, cl_bool blocking,
                                                          cl_map_flags flags, const size_t* origin,
                                                          const size_t* region, size_t* row_pitch, size_t* slice_pitch,
                                                          cl_uint n, const cl_event* list, cl_event* ev,
                                                          cl_int* errcode_ret)
{
    Gate g(q, n, list);
    return REAL(clEnqueueMapImage)(q, img, blocking, flags, origin, region, row_pitch, slice_pitch, g.n(), g.list(), ev,
                                   errcode_ret);
}

SHIM_API CL_API_ENTRY cl_int CL_API_CALL clEnqueueUnmapMemObject(cl_command_queue q, cl_mem mem, void* mapped,
                                                                 cl_uint n, const cl_event* list, cl_event* ev)
{
    Gate g(q, n, list);
    return REAL(clEnqueueUnmapMemObject)(q, mem, mapped, g.n(), g.list(), ev);
}

SHIM_API CL_API_ENTRY cl_int CL_API_CALL clEnqueueMarkerWithWaitList(cl_command_queue q, cl_uint n,
                                                                     const cl_event* list, cl_event* ev)
{
    Gate g(q, n, list, true);
    return REAL(clEnqueueMarkerWithWaitList)(q, g.n(), g.list(), ev);
}

SHIM_API CL_API_ENTRY cl_int CL_API_CALL clEnqueueBarrierWithWaitList(cl_command_queue q, cl_uint n,
                                                                      const cl_event* list, cl_event* ev)
{
    Gate g(q, n, list, true);
    return REAL(clEnqueueBarrierWithWaitList)(q, g.n(), g.list(), ev);
}

SHIM_API CL_API_ENTRY cl_int CL_API_CALL clEnqueueMigrateMemObjects(cl_command_queue q, cl_uint nmem,
                                                                    const cl_mem* mems, cl_mem_migration_flags flags,
                                                                    cl_uint n, const cl_event* list, cl_event* ev)
{
    Gate g(q, n, list);
    return REAL(clEnqueueMigrateMemObjects)(q, nmem, mems, flags, g.n(), g.list(), ev);
}

// ORDERCL_RESEED=1: a build disturbs rand() as NVIDIA's compiler does.
SHIM_API CL_API_ENTRY cl_int CL_API_CALL clBuildProgram(cl_program program, cl_uint ndev, const cl_device_id* devices,
                                                        const char* options,
                                                        void(CL_CALLBACK* notify)(cl_program, void*), void* user)
{
    cl_int err = REAL(clBuildProgram)(program, ndev, devices, options, notify, user);
    const char* v = getenv("ORDERCL_RESEED");
    if (v && strcmp(v, "1") == 0) srand((unsigned)time(nullptr) ^ (unsigned)getpid() ^ (unsigned)(uintptr_t)program);
    return err;
}
