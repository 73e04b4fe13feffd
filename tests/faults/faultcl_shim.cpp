// SPDX-License-Identifier: MIT
// faultcl_shim.cpp: a fault-injection interposer for libstdcl, preloaded with
// LD_PRELOAD in front of the OpenCL ICD loader (tools/check_faults.sh runs it).
//
// OpenCL: it defines every OpenCL entry point libstdcl imports (and a few it
// may come to import), forwards each to the real one (dlsym RTLD_NEXT), and
// counts the calls whose immediate caller is code in libstdcl.so.  With
// FAULTCL_FAIL_AT=K, call number K (1-based) fails the way a driver fails it:
// an error code that function can return per the OpenCL 1.2/3.0
// specification (the table at each function; the code rotates with K over the
// function's list), NULL and *errcode_ret from object-returning calls, no
// event written, nothing enqueued.  clFinish, clFlush and clWaitForEvents do
// the real work first and then report the error, as a driver does when it
// finds the failure while waiting.
//
// clRelease* are forwarded, never failed, and not counted as injection
// points: a release that fails leaves the object in a state only the driver
// knows, the caller has nothing to retry or undo, and every released object
// is one the caller stops using anyway.  Injecting there would measure the
// driver, not libstdcl.
//
// Host memory: malloc, calloc, realloc, posix_memalign, aligned_alloc,
// memalign and every form of operator new are interposed too.  An allocation
// counts when it was asked for by libstdcl: its caller is in libstdcl.so, or
// the caller is the C or C++ runtime (std::string's growth, fopen...) and the
// first frame above the runtime is libstdcl.  PoCL's own allocations never
// count.  With FAULTCL_ALLOC_FAIL_AT=K the K-th such allocation fails (NULL
// and ENOMEM, std::bad_alloc from operator new).
//
// Object ledger: every OpenCL object libstdcl creates (context, queue,
// program, kernel, memory object, event) is counted +1, each of its
// clRetain* +1 and clRelease* -1.  A release of an object whose count is
// already 0 is an over-release (the driver may free it under a later user:
// use-after-free); one still above 0 at exit is a leak.  Both are written to
// the report at once.
//
// Environment:
//   FAULTCL_FAIL_AT=K        fail the K-th counted OpenCL call (0: none)
//   FAULTCL_ALLOC_FAIL_AT=K  fail the K-th counted allocation (0: none)
//   FAULTCL_NO_UNIFIED=1     CL_DEVICE_HOST_UNIFIED_MEMORY reads CL_FALSE for
//                            libstdcl, so its zero-copy probe puts every device
//                            in copy mode (the path a discrete GPU takes)
//   FAULTCL_REPORT=file      where the report lines go (appended; default none)
//   FAULTCL_TRACE=1          also report every counted call and allocation
//                            ("call K fn site=...", "alloc K what site=...")
// Report lines (one event each, written with write(2) as they happen):
//   inject K fn CODE_NAME code site=libstdcl.so+0xOFF
//   inject-alloc K what size site=libstdcl.so+0xOFF
//   overrelease type 0xHANDLE by fn site=...
//   leak type 0xHANDLE count N           (at exit)
//   calls N allocs M injected I          (at exit: the ranges of K)
//   fn NAME COUNT                        (at exit: calls per function)
// The workload asks what was injected through faultcl_injected() (dlsym).
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <unwind.h>

#include <atomic>
#include <mutex>
#include <new>

#define SHIM_API extern "C" __attribute__((visibility("default")))
#define TLS __attribute__((tls_model("initial-exec")))

namespace {

// ---------------------------------------------------------------------------
// Where code is: the address ranges of libstdcl and of the runtimes
// ---------------------------------------------------------------------------

struct Range {
    uintptr_t lo = 0, hi = 0;
};
enum Lib { kStdcl, kRuntime, kNumLibs };
constexpr int kMaxRanges = 16;
Range g_ranges[kNumLibs][kMaxRanges];
int g_nranges[kNumLibs];
uintptr_t g_stdcl_base;
std::atomic<int> g_ranges_state{0};  // 0 not yet, 1 in progress, 2 done

bool name_has(const char* path, const char* what) { return path && strstr(path, what); }

int collect_range(struct dl_phdr_info* info, size_t, void*)
{
    const char* n = info->dlpi_name;
    int lib = -1;
    if (name_has(n, "/libstdcl.so"))
        lib = kStdcl;
    else if (name_has(n, "/libstdc++.so") || name_has(n, "/libc.so") || name_has(n, "/libgcc_s.so") ||
             name_has(n, "/libm.so"))
        lib = kRuntime;
    if (lib < 0) return 0;
    if (lib == kStdcl) g_stdcl_base = info->dlpi_addr;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) || g_nranges[lib] >= kMaxRanges) continue;
        Range& r = g_ranges[lib][g_nranges[lib]++];
        r.lo = info->dlpi_addr + ph.p_vaddr;
        r.hi = r.lo + ph.p_memsz;
    }
    return 0;
}

void init_ranges()
{
    int expect = 0;
    if (!g_ranges_state.compare_exchange_strong(expect, 1)) return;
    dl_iterate_phdr(collect_range, nullptr);
    g_ranges_state.store(g_nranges[kStdcl] ? 2 : 0);  // libstdcl not mapped yet: look again later
}

bool in_lib(int lib, uintptr_t a)
{
    if (g_ranges_state.load(std::memory_order_acquire) != 2) init_ranges();
    for (int i = 0; i < g_nranges[lib]; ++i)
        if (a >= g_ranges[lib][i].lo && a < g_ranges[lib][i].hi) return true;
    return false;
}

bool from_stdcl(const void* ra) { return in_lib(kStdcl, uintptr_t(ra)); }

// ---------------------------------------------------------------------------
// Configuration and the report
// ---------------------------------------------------------------------------

long env_long(const char* name)
{
    const char* v = getenv(name);
    return v && *v ? strtol(v, nullptr, 10) : 0;
}

struct Config {
    long fail_at = 0, alloc_fail_at = 0;
    bool no_unified = false, trace = false;
    int report_fd = -1;
    bool ready = false;
};
Config g_cfg;
std::mutex g_cfg_mu;

const Config& cfg()
{
    if (__atomic_load_n(&g_cfg.ready, __ATOMIC_ACQUIRE)) return g_cfg;
    std::lock_guard<std::mutex> lock(g_cfg_mu);
    if (!g_cfg.ready) {
        g_cfg.fail_at = env_long("FAULTCL_FAIL_AT");
        g_cfg.alloc_fail_at = env_long("FAULTCL_ALLOC_FAIL_AT");
        g_cfg.no_unified = env_long("FAULTCL_NO_UNIFIED") != 0;
        g_cfg.trace = env_long("FAULTCL_TRACE") != 0;
        const char* r = getenv("FAULTCL_REPORT");
        if (r && *r) g_cfg.report_fd = open(r, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        __atomic_store_n(&g_cfg.ready, true, __ATOMIC_RELEASE);
    }
    return g_cfg;
}

void report(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void report(const char* fmt, ...)
{
    int fd = cfg().report_fd;
    if (fd < 0) return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (n > int(sizeof buf) - 2) n = int(sizeof buf) - 2;
    buf[n++] = '\n';
    ssize_t w = write(fd, buf, size_t(n));
    (void)w;
}

uintptr_t site(const void* ra) { return uintptr_t(ra) - g_stdcl_base; }

const char* cl_name(cl_int e)
{
    switch (e) {
    case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
    case CL_DEVICE_NOT_AVAILABLE: return "CL_DEVICE_NOT_AVAILABLE";
    case CL_COMPILER_NOT_AVAILABLE: return "CL_COMPILER_NOT_AVAILABLE";
    case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
    case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
    case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
    case CL_MAP_FAILURE: return "CL_MAP_FAILURE";
    case CL_MISALIGNED_SUB_BUFFER_OFFSET: return "CL_MISALIGNED_SUB_BUFFER_OFFSET";
    case CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST: return "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST";
    case CL_KERNEL_ARG_INFO_NOT_AVAILABLE: return "CL_KERNEL_ARG_INFO_NOT_AVAILABLE";
    case CL_IMAGE_FORMAT_NOT_SUPPORTED: return "CL_IMAGE_FORMAT_NOT_SUPPORTED";
    case CL_INVALID_BINARY: return "CL_INVALID_BINARY";
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return "CL_?";
    }
}

// ---------------------------------------------------------------------------
// Counting and injecting OpenCL calls
// ---------------------------------------------------------------------------

std::atomic<long> g_calls{0}, g_injected{0};
std::atomic<bool> g_final_registered{false};
char g_injected_fn[64];
cl_int g_injected_code;

// Calls per function name (for the coverage check of tools/check_faults.sh).
constexpr int kMaxFns = 96;
struct FnCount {
    const char* name;
    std::atomic<long> n;
};
FnCount g_fns[kMaxFns];
std::atomic<int> g_nfns{0};
std::mutex g_fns_mu;

void count_fn(const char* fn)
{
    int n = g_nfns.load();
    for (int i = 0; i < n; ++i)
        if (g_fns[i].name == fn) {
            g_fns[i].n++;
            return;
        }
    std::lock_guard<std::mutex> lock(g_fns_mu);
    n = g_nfns.load();
    for (int i = 0; i < n; ++i)
        if (g_fns[i].name == fn) {
            g_fns[i].n++;
            return;
        }
    if (n < kMaxFns) {
        g_fns[n].name = fn;
        g_fns[n].n = 1;
        g_nfns.store(n + 1);
    }
}

// Counts the call if libstdcl made it; true (and *code) when it is the one to fail.
template <size_t N> bool inject(const char* fn, const void* ra, const cl_int (&codes)[N], cl_int* code)
{
    if (!from_stdcl(ra)) return false;
    long k = ++g_calls;
    count_fn(fn);
    const Config& c = cfg();
    if (c.trace) report("call %ld %s site=libstdcl.so+0x%lx", k, fn, (unsigned long)site(ra));
    if (k != c.fail_at) return false;
    *code = codes[size_t(k) % N];
    snprintf(g_injected_fn, sizeof g_injected_fn, "%s", fn);
    g_injected_code = *code;
    g_injected++;
    report("inject %ld %s %s %d site=libstdcl.so+0x%lx", k, fn, cl_name(*code), int(*code), (unsigned long)site(ra));
    return true;
}

void* real_sym(const char* name)
{
    void* p = dlsym(RTLD_NEXT, name);
    if (!p) {
        static const char msg[] = "faultcl_shim: a real OpenCL function is missing\n";
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

// ---------------------------------------------------------------------------
// The object ledger
// ---------------------------------------------------------------------------

enum ObjType { kContext, kQueue, kProgram, kKernel, kMem, kEvent };
const char* const kTypeNames[] = {"context", "queue", "program", "kernel", "mem", "event"};

constexpr size_t kSlots = 1 << 16;  // open addressing; a deleted slot keeps count 0
struct Slot {
    const void* obj;
    int type;
    long count;
};
Slot g_ledger[kSlots];
std::mutex g_ledger_mu;

Slot* ledger_find(const void* obj, bool create)
{
    size_t h = (uintptr_t(obj) >> 4) * 0x9E3779B97F4A7C15ull >> 48;
    for (size_t i = 0; i < kSlots; ++i) {
        Slot& s = g_ledger[(h + i) & (kSlots - 1)];
        if (s.obj == obj) return &s;
        if (!s.obj) {
            if (!create) return nullptr;
            s.obj = obj;
            return &s;
        }
    }
    return nullptr;
}

void ledger_created(const void* obj, ObjType t)
{
    if (!obj) return;
    std::lock_guard<std::mutex> lock(g_ledger_mu);
    Slot* s = ledger_find(obj, true);
    if (!s) return;
    s->type = t;
    s->count = 1;  // a handle the driver hands out again is a new object
}

void ledger_retained(const void* obj, ObjType t)
{
    std::lock_guard<std::mutex> lock(g_ledger_mu);
    Slot* s = ledger_find(obj, false);
    if (s && s->type == int(t)) s->count++;
}

void ledger_released(const void* obj, ObjType t, const char* fn, const void* ra)
{
    if (!obj) return;
    std::lock_guard<std::mutex> lock(g_ledger_mu);
    Slot* s = ledger_find(obj, false);
    if (!s || s->type != int(t)) return;  // not one libstdcl made
    if (s->count <= 0) {
        report("overrelease %s %p by %s site=libstdcl.so+0x%lx", kTypeNames[t], obj, fn, (unsigned long)site(ra));
        return;
    }
    s->count--;
}

// ---------------------------------------------------------------------------
// Counting and failing allocations
// ---------------------------------------------------------------------------

TLS __thread int t_in_hook;  // this thread is inside the shim: do not count
std::atomic<long> g_allocs{0};

struct Walk {
    int depth;
    int verdict;  // 0 undecided, 1 libstdcl, -1 someone else
    uintptr_t site;
};

_Unwind_Reason_Code walk_frame(struct _Unwind_Context* ctx, void* arg)
{
    Walk* w = static_cast<Walk*>(arg);
    uintptr_t pc = _Unwind_GetIP(ctx);
    if (++w->depth <= 1) return _URC_NO_REASON;  // the hook itself
    if (w->depth > 12 || !pc) {
        w->verdict = -1;
        return _URC_END_OF_STACK;
    }
    if (in_lib(kStdcl, pc)) {
        w->verdict = 1;
        w->site = pc;
        return _URC_END_OF_STACK;
    }
    if (in_lib(kRuntime, pc)) return _URC_NO_REASON;
    w->verdict = -1;
    return _URC_END_OF_STACK;
}

// True when this allocation is the one to fail.  ra: the hook's return address.
bool alloc_fails(const char* what, size_t size, const void* ra)
{
    if (t_in_hook) return false;
    t_in_hook = 1;
    bool fail = false;
    uintptr_t where = 0;
    bool ours = false;
    if (g_ranges_state.load(std::memory_order_acquire) == 2 || g_ranges_state.load() == 0) {
        if (in_lib(kStdcl, uintptr_t(ra))) {
            ours = true;
            where = uintptr_t(ra);
        } else if (in_lib(kRuntime, uintptr_t(ra))) {
            Walk w{0, 0, 0};
            _Unwind_Backtrace(walk_frame, &w);
            ours = w.verdict == 1;
            where = w.site;
        }
    }
    if (ours) {
        long k = ++g_allocs;
        const Config& c = cfg();
        if (c.trace) report("alloc %ld %s site=libstdcl.so+0x%lx", k, what, (unsigned long)(where - g_stdcl_base));
        if (k == c.alloc_fail_at) {
            fail = true;
            snprintf(g_injected_fn, sizeof g_injected_fn, "%s", what);
            g_injected_code = 0;
            g_injected++;
            report("inject-alloc %ld %s %zu site=libstdcl.so+0x%lx", k, what, size,
                   (unsigned long)(where - g_stdcl_base));
        }
    }
    t_in_hook = 0;
    return fail;
}

// The real allocator; dlsym may allocate before it is known, from a static arena.
using MallocFn = void* (*)(size_t);
using CallocFn = void* (*)(size_t, size_t);
using ReallocFn = void* (*)(void*, size_t);
using FreeFn = void (*)(void*);
using MemalignFn = int (*)(void**, size_t, size_t);
using AlignedAllocFn = void* (*)(size_t, size_t);
MallocFn r_malloc;
CallocFn r_calloc;
ReallocFn r_realloc;
FreeFn r_free;
MemalignFn r_posix_memalign;
AlignedAllocFn r_aligned_alloc, r_memalign;
using UsableFn = size_t (*)(void*);
UsableFn r_usable;  // malloc_usable_size: the room a block has
constexpr size_t kGrowMin = size_t(64) << 10;

alignas(16) char g_arena[64 * 1024];
std::atomic<size_t> g_arena_used{0};
TLS __thread int t_resolving;

bool in_arena(const void* p) { return p >= g_arena && p < g_arena + sizeof g_arena; }

void* arena_alloc(size_t n)
{
    size_t need = (n + 31) & ~size_t(15);
    size_t at = g_arena_used.fetch_add(need);
    if (at + need > sizeof g_arena) return nullptr;
    char* p = g_arena + at;
    memcpy(p, &n, sizeof n);
    return p + 16;
}

void resolve_allocator()
{
    if (__atomic_load_n(&r_free, __ATOMIC_ACQUIRE)) return;
    t_resolving = 1;
    r_malloc = reinterpret_cast<MallocFn>(dlsym(RTLD_NEXT, "malloc"));
    r_calloc = reinterpret_cast<CallocFn>(dlsym(RTLD_NEXT, "calloc"));
    r_realloc = reinterpret_cast<ReallocFn>(dlsym(RTLD_NEXT, "realloc"));
    r_posix_memalign = reinterpret_cast<MemalignFn>(dlsym(RTLD_NEXT, "posix_memalign"));
    r_aligned_alloc = reinterpret_cast<AlignedAllocFn>(dlsym(RTLD_NEXT, "aligned_alloc"));
    r_memalign = reinterpret_cast<AlignedAllocFn>(dlsym(RTLD_NEXT, "memalign"));
    r_usable = reinterpret_cast<UsableFn>(dlsym(RTLD_NEXT, "malloc_usable_size"));
    __atomic_store_n(&r_free, reinterpret_cast<FreeFn>(dlsym(RTLD_NEXT, "free")), __ATOMIC_RELEASE);
    t_resolving = 0;
}

bool allocator_ready()
{
    if (t_resolving) return false;
    resolve_allocator();
    return r_malloc != nullptr;
}

void* do_malloc(size_t n, const char* what, const void* ra)
{
    if (!allocator_ready()) return arena_alloc(n);
    if (alloc_fails(what, n, ra)) {
        errno = ENOMEM;
        return nullptr;
    }
    return r_malloc(n);
}

void* do_aligned(size_t align, size_t n, const char* what, const void* ra)
{
    if (!allocator_ready()) return nullptr;
    if (alloc_fails(what, n, ra)) return nullptr;
    void* p = nullptr;
    if (r_posix_memalign(&p, align < sizeof(void*) ? sizeof(void*) : align, n) != 0) return nullptr;
    return p;
}

void* new_or_throw(size_t n, const void* ra)
{
    void* p = do_malloc(n ? n : 1, "operator new", ra);
    if (!p) throw std::bad_alloc();
    return p;
}

void* new_aligned_or_throw(size_t n, size_t align, const void* ra)
{
    void* p = do_aligned(align, n ? n : 1, "operator new (aligned)", ra);
    if (!p) throw std::bad_alloc();
    return p;
}

}  // namespace

// ---------------------------------------------------------------------------
// The allocator hooks
// ---------------------------------------------------------------------------

SHIM_API void* malloc(size_t n) { return do_malloc(n, "malloc", __builtin_return_address(0)); }

SHIM_API void* calloc(size_t a, size_t b)
{
    if (!allocator_ready()) {
        if (b && a > SIZE_MAX / b) return nullptr;
        return arena_alloc(a * b);  // static storage: already zero
    }
    if (alloc_fails("calloc", a * b, __builtin_return_address(0))) {
        errno = ENOMEM;
        return nullptr;
    }
    return r_calloc(a, b);
}

SHIM_API void free(void* p)
{
    if (!p || in_arena(p)) return;
    if (!allocator_ready()) return;  // cannot happen for a pointer the real malloc made
    r_free(p);
}

SHIM_API void* realloc(void* p, size_t n)
{
    if (p && in_arena(p)) {
        size_t old = 0;
        memcpy(&old, static_cast<char*>(p) - 16, sizeof old);
        void* q = malloc(n);
        if (q) memcpy(q, p, old < n ? old : n);
        return q;
    }
    if (!allocator_ready()) return arena_alloc(n);
    if (n && alloc_fails("realloc", n, __builtin_return_address(0))) {
        errno = ENOMEM;
        return nullptr;
    }
    // A block of kGrowMin bytes or more that grows takes twice its size, and
    // later growth within that room keeps the block (realloc may return p):
    // PoCL reads a program's files (pocl_read_file) by growing one buffer a
    // few KB at a time, and LeakSanitizer's realloc copies the whole block
    // into new pages each time, byte by byte, which took more than half of
    // each run's time.
    if (p && n >= kGrowMin && r_usable) {
        size_t room = r_usable(p);
        if (n <= room) return p;
        void* q = r_realloc(p, n < room * 2 ? room * 2 : n);
        if (q) return q;
    }
    return r_realloc(p, n);
}

SHIM_API int posix_memalign(void** out, size_t align, size_t n)
{
    if (!allocator_ready()) return ENOMEM;
    if (alloc_fails("posix_memalign", n, __builtin_return_address(0))) return ENOMEM;
    return r_posix_memalign(out, align, n);
}

SHIM_API void* aligned_alloc(size_t align, size_t n)
{
    if (!allocator_ready()) return nullptr;
    if (alloc_fails("aligned_alloc", n, __builtin_return_address(0))) {
        errno = ENOMEM;
        return nullptr;
    }
    return r_aligned_alloc(align, n);
}

SHIM_API void* memalign(size_t align, size_t n)
{
    if (!allocator_ready()) return nullptr;
    if (alloc_fails("memalign", n, __builtin_return_address(0))) {
        errno = ENOMEM;
        return nullptr;
    }
    return r_memalign(align, n);
}

__attribute__((visibility("default"))) void* operator new(size_t n)
{
    return new_or_throw(n, __builtin_return_address(0));
}
__attribute__((visibility("default"))) void* operator new[](size_t n)
{
    return new_or_throw(n, __builtin_return_address(0));
}
__attribute__((visibility("default"))) void* operator new(size_t n, const std::nothrow_t&) noexcept
{
    return do_malloc(n ? n : 1, "operator new (nothrow)", __builtin_return_address(0));
}
__attribute__((visibility("default"))) void* operator new[](size_t n, const std::nothrow_t&) noexcept
{
    return do_malloc(n ? n : 1, "operator new[] (nothrow)", __builtin_return_address(0));
}
__attribute__((visibility("default"))) void* operator new(size_t n, std::align_val_t a)
{
    return new_aligned_or_throw(n, size_t(a), __builtin_return_address(0));
}
__attribute__((visibility("default"))) void* operator new[](size_t n, std::align_val_t a)
{
    return new_aligned_or_throw(n, size_t(a), __builtin_return_address(0));
}
__attribute__((visibility("default"))) void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept
{
    return do_aligned(size_t(a), n ? n : 1, "operator new (aligned, nothrow)", __builtin_return_address(0));
}
__attribute__((visibility("default"))) void* operator new[](size_t n, std::align_val_t a,
                                                            const std::nothrow_t&) noexcept
{
    return do_aligned(size_t(a), n ? n : 1, "operator new[] (aligned, nothrow)", __builtin_return_address(0));
}
__attribute__((visibility("default"))) void operator delete(void* p) noexcept { free(p); }
__attribute__((visibility("default"))) void operator delete[](void* p) noexcept { free(p); }
__attribute__((visibility("default"))) void operator delete(void* p, size_t) noexcept { free(p); }
__attribute__((visibility("default"))) void operator delete[](void* p, size_t) noexcept { free(p); }
__attribute__((visibility("default"))) void operator delete(void* p, const std::nothrow_t&) noexcept { free(p); }
__attribute__((visibility("default"))) void operator delete[](void* p, const std::nothrow_t&) noexcept { free(p); }
__attribute__((visibility("default"))) void operator delete(void* p, std::align_val_t) noexcept { free(p); }
__attribute__((visibility("default"))) void operator delete[](void* p, std::align_val_t) noexcept { free(p); }
__attribute__((visibility("default"))) void operator delete(void* p, size_t, std::align_val_t) noexcept { free(p); }
__attribute__((visibility("default"))) void operator delete[](void* p, size_t, std::align_val_t) noexcept { free(p); }
__attribute__((visibility("default"))) void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept
{
    free(p);
}
__attribute__((visibility("default"))) void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept
{
    free(p);
}

// ---------------------------------------------------------------------------
// Exit handlers: the final report runs after libstdcl's
// ---------------------------------------------------------------------------

namespace {
void final_report(void*);
}

SHIM_API int __cxa_atexit(void (*fn)(void*), void* arg, void* dso)
{
    using AtexitFn = int (*)(void (*)(void*), void*, void*);
    static AtexitFn real;
    if (!real) real = reinterpret_cast<AtexitFn>(dlsym(RTLD_NEXT, "__cxa_atexit"));
    if (from_stdcl(__builtin_return_address(0)) && !g_final_registered.exchange(true))
        real(final_report, nullptr, nullptr);
    return real(fn, arg, dso);
}

// ---------------------------------------------------------------------------
// What the workload may ask
// ---------------------------------------------------------------------------

// How many failures were injected so far; *fn and *code_name say the last
// one (an allocation: its allocator's name, and "" for the code).
SHIM_API long faultcl_injected(const char** fn, const char** code_name)
{
    if (fn) *fn = g_injected_fn;
    if (code_name) *code_name = g_injected_code ? cl_name(g_injected_code) : "";
    return g_injected.load();
}

namespace {

__attribute__((constructor)) void shim_init()
{
    t_in_hook++;
    cfg();
    init_ranges();
    t_in_hook--;
}

std::atomic<bool> g_final_done{false};

// The ledger's verdict and the totals, once, after libstdcl's exit handler.
void final_report(void*)
{
    if (g_final_done.exchange(true)) return;
    t_in_hook++;
    {
        std::lock_guard<std::mutex> lock(g_ledger_mu);
        for (const Slot& s : g_ledger)
            if (s.obj && s.count > 0) report("leak %s %p count %ld", kTypeNames[s.type], s.obj, s.count);
    }
    int n = g_nfns.load();
    for (int i = 0; i < n; ++i) report("fn %s %ld", g_fns[i].name, g_fns[i].n.load());
    report("calls %ld allocs %ld injected %ld", g_calls.load(), g_allocs.load(), g_injected.load());
    t_in_hook--;
}

// libstdcl releases its default contexts from an atexit() handler, which
// glibc runs after the destructors of shared objects (it was registered from
// a constructor, before libc registered its own finaliser).  So the final
// report is registered just before libstdcl's handler (see __cxa_atexit
// below) and runs right after it; the destructor covers a libstdcl that
// registers none.
__attribute__((destructor)) void shim_fini()
{
    if (!g_final_registered.load()) final_report(nullptr);
}

// Real OpenCL functions.
DECLARE_REAL(clGetPlatformIDs);
DECLARE_REAL(clGetPlatformInfo);
DECLARE_REAL(clGetDeviceIDs);
DECLARE_REAL(clGetDeviceInfo);
DECLARE_REAL(clCreateContext);
DECLARE_REAL(clRetainContext);
DECLARE_REAL(clReleaseContext);
DECLARE_REAL(clGetContextInfo);
DECLARE_REAL(clCreateCommandQueue);
DECLARE_REAL(clCreateCommandQueueWithProperties);
DECLARE_REAL(clRetainCommandQueue);
DECLARE_REAL(clReleaseCommandQueue);
DECLARE_REAL(clCreateBuffer);
DECLARE_REAL(clCreateSubBuffer);
DECLARE_REAL(clCreateImage);
DECLARE_REAL(clRetainMemObject);
DECLARE_REAL(clReleaseMemObject);
DECLARE_REAL(clGetMemObjectInfo);
DECLARE_REAL(clGetCommandQueueInfo);
DECLARE_REAL(clCreateProgramWithSource);
DECLARE_REAL(clCreateProgramWithBinary);
DECLARE_REAL(clRetainProgram);
DECLARE_REAL(clReleaseProgram);
DECLARE_REAL(clBuildProgram);
DECLARE_REAL(clGetProgramInfo);
DECLARE_REAL(clGetProgramBuildInfo);
DECLARE_REAL(clCreateKernel);
DECLARE_REAL(clRetainKernel);
DECLARE_REAL(clReleaseKernel);
DECLARE_REAL(clSetKernelArg);
DECLARE_REAL(clSetMemObjectDestructorCallback);
DECLARE_REAL(clGetKernelInfo);
DECLARE_REAL(clGetKernelArgInfo);
DECLARE_REAL(clGetKernelWorkGroupInfo);
DECLARE_REAL(clWaitForEvents);
DECLARE_REAL(clCreateUserEvent);
DECLARE_REAL(clSetUserEventStatus);
DECLARE_REAL(clGetEventInfo);
DECLARE_REAL(clGetEventProfilingInfo);
DECLARE_REAL(clRetainEvent);
DECLARE_REAL(clReleaseEvent);
DECLARE_REAL(clFlush);
DECLARE_REAL(clFinish);
DECLARE_REAL(clEnqueueReadBuffer);
DECLARE_REAL(clEnqueueWriteBuffer);
DECLARE_REAL(clEnqueueCopyBuffer);
DECLARE_REAL(clEnqueueFillBuffer);
DECLARE_REAL(clEnqueueReadImage);
DECLARE_REAL(clEnqueueWriteImage);
DECLARE_REAL(clEnqueueMapBuffer);
DECLARE_REAL(clEnqueueUnmapMemObject);
DECLARE_REAL(clEnqueueNDRangeKernel);
DECLARE_REAL(clEnqueueMarkerWithWaitList);
DECLARE_REAL(clEnqueueBarrierWithWaitList);

// Error codes each function can return for a failure that is not the
// caller's mistake (OpenCL 1.2/3.0, "Errors" of each function).
const cl_int kHost[] = {CL_OUT_OF_RESOURCES, CL_OUT_OF_HOST_MEMORY};
const cl_int kHostOnly[] = {CL_OUT_OF_HOST_MEMORY};
const cl_int kPlatformIDs[] = {CL_OUT_OF_HOST_MEMORY, -1001 /* CL_PLATFORM_NOT_FOUND_KHR, from the ICD loader */};
// Not CL_DEVICE_NOT_FOUND: that is the driver's answer "no device of this type",
// which the library rightly takes for none (a NULL default context is then the
// truth as the driver tells it), not a failure to report.
const cl_int kDeviceIDs[] = {CL_OUT_OF_RESOURCES, CL_OUT_OF_HOST_MEMORY};
const cl_int kContextCodes[] = {CL_DEVICE_NOT_AVAILABLE, CL_OUT_OF_RESOURCES, CL_OUT_OF_HOST_MEMORY};
const cl_int kMemAlloc[] = {CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES, CL_OUT_OF_HOST_MEMORY};
const cl_int kImage[] = {CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_IMAGE_FORMAT_NOT_SUPPORTED, CL_OUT_OF_RESOURCES,
                         CL_OUT_OF_HOST_MEMORY};
const cl_int kSubBuffer[] = {CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_MISALIGNED_SUB_BUFFER_OFFSET, CL_OUT_OF_RESOURCES,
                             CL_OUT_OF_HOST_MEMORY};
const cl_int kBinary[] = {CL_INVALID_BINARY, CL_OUT_OF_RESOURCES, CL_OUT_OF_HOST_MEMORY};
const cl_int kBuild[] = {CL_BUILD_PROGRAM_FAILURE, CL_COMPILER_NOT_AVAILABLE, CL_OUT_OF_RESOURCES,
                         CL_OUT_OF_HOST_MEMORY};
const cl_int kArgInfo[] = {CL_KERNEL_ARG_INFO_NOT_AVAILABLE, CL_OUT_OF_RESOURCES, CL_OUT_OF_HOST_MEMORY};
const cl_int kWait[] = {CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, CL_OUT_OF_RESOURCES, CL_OUT_OF_HOST_MEMORY};
const cl_int kEnqueueMem[] = {CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES, CL_OUT_OF_HOST_MEMORY};
const cl_int kMap[] = {CL_MAP_FAILURE, CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES, CL_OUT_OF_HOST_MEMORY};

#define RA __builtin_return_address(0)

void set_err(cl_int* errcode_ret, cl_int e)
{
    if (errcode_ret) *errcode_ret = e;
}

void note_event(cl_int status, cl_event* ev)
{
    if (status == CL_SUCCESS && ev) ledger_created(*ev, kEvent);
}

}  // namespace

// ---------------------------------------------------------------------------
// The OpenCL entry points
// ---------------------------------------------------------------------------

SHIM_API cl_int clGetPlatformIDs(cl_uint n, cl_platform_id* ids, cl_uint* num)
{
    cl_int e;
    if (inject("clGetPlatformIDs", RA, kPlatformIDs, &e)) {
        if (e == -1001 && num) *num = 0;
        return e;
    }
    return REAL(clGetPlatformIDs)(n, ids, num);
}

SHIM_API cl_int clGetPlatformInfo(cl_platform_id p, cl_platform_info what, size_t sz, void* v, size_t* ret)
{
    cl_int e;
    if (inject("clGetPlatformInfo", RA, kHostOnly, &e)) return e;
    return REAL(clGetPlatformInfo)(p, what, sz, v, ret);
}

SHIM_API cl_int clGetDeviceIDs(cl_platform_id p, cl_device_type t, cl_uint n, cl_device_id* ids, cl_uint* num)
{
    cl_int e;
    if (inject("clGetDeviceIDs", RA, kDeviceIDs, &e)) {
        if (e == CL_DEVICE_NOT_FOUND && num) *num = 0;
        return e;
    }
    return REAL(clGetDeviceIDs)(p, t, n, ids, num);
}

SHIM_API cl_int clGetDeviceInfo(cl_device_id d, cl_device_info what, size_t sz, void* v, size_t* ret)
{
    const void* ra = RA;
    cl_int e;
    if (inject("clGetDeviceInfo", ra, kHost, &e)) return e;
    if (what == CL_DEVICE_HOST_UNIFIED_MEMORY && cfg().no_unified && from_stdcl(ra)) {
        if (ret) *ret = sizeof(cl_bool);
        if (v) {
            if (sz < sizeof(cl_bool)) return CL_INVALID_VALUE;
            *static_cast<cl_bool*>(v) = CL_FALSE;
        }
        return CL_SUCCESS;
    }
    return REAL(clGetDeviceInfo)(d, what, sz, v, ret);
}

SHIM_API cl_context clCreateContext(const cl_context_properties* props, cl_uint n, const cl_device_id* devs,
                                    void(CL_CALLBACK* notify)(const char*, const void*, size_t, void*), void* user,
                                    cl_int* err)
{
    cl_int e;
    if (inject("clCreateContext", RA, kContextCodes, &e)) return set_err(err, e), nullptr;
    cl_context c = REAL(clCreateContext)(props, n, devs, notify, user, err);
    if (from_stdcl(RA)) ledger_created(c, kContext);
    return c;
}

SHIM_API cl_int clRetainContext(cl_context c)
{
    cl_int e;
    if (inject("clRetainContext", RA, kHost, &e)) return e;
    cl_int r = REAL(clRetainContext)(c);
    if (r == CL_SUCCESS && from_stdcl(RA)) ledger_retained(c, kContext);
    return r;
}

SHIM_API cl_int clReleaseContext(cl_context c)
{
    if (from_stdcl(RA)) ledger_released(c, kContext, "clReleaseContext", RA);
    return REAL(clReleaseContext)(c);
}

SHIM_API cl_int clGetContextInfo(cl_context c, cl_context_info what, size_t sz, void* v, size_t* ret)
{
    cl_int e;
    if (inject("clGetContextInfo", RA, kHost, &e)) return e;
    return REAL(clGetContextInfo)(c, what, sz, v, ret);
}

SHIM_API cl_command_queue clCreateCommandQueue(cl_context c, cl_device_id d, cl_command_queue_properties p, cl_int* err)
{
    cl_int e;
    if (inject("clCreateCommandQueue", RA, kHost, &e)) return set_err(err, e), nullptr;
    cl_command_queue q = REAL(clCreateCommandQueue)(c, d, p, err);
    if (from_stdcl(RA)) ledger_created(q, kQueue);
    return q;
}

SHIM_API cl_command_queue clCreateCommandQueueWithProperties(cl_context c, cl_device_id d, const cl_queue_properties* p,
                                                             cl_int* err)
{
    cl_int e;
    if (inject("clCreateCommandQueueWithProperties", RA, kHost, &e)) return set_err(err, e), nullptr;
    cl_command_queue q = REAL(clCreateCommandQueueWithProperties)(c, d, p, err);
    if (from_stdcl(RA)) ledger_created(q, kQueue);
    return q;
}

SHIM_API cl_int clRetainCommandQueue(cl_command_queue q)
{
    cl_int e;
    if (inject("clRetainCommandQueue", RA, kHost, &e)) return e;
    cl_int r = REAL(clRetainCommandQueue)(q);
    if (r == CL_SUCCESS && from_stdcl(RA)) ledger_retained(q, kQueue);
    return r;
}

SHIM_API cl_int clReleaseCommandQueue(cl_command_queue q)
{
    if (from_stdcl(RA)) ledger_released(q, kQueue, "clReleaseCommandQueue", RA);
    return REAL(clReleaseCommandQueue)(q);
}

SHIM_API cl_mem clCreateBuffer(cl_context c, cl_mem_flags f, size_t size, void* host, cl_int* err)
{
    cl_int e;
    if (inject("clCreateBuffer", RA, kMemAlloc, &e)) return set_err(err, e), nullptr;
    cl_mem m = REAL(clCreateBuffer)(c, f, size, host, err);
    if (from_stdcl(RA)) ledger_created(m, kMem);
    return m;
}

SHIM_API cl_mem clCreateSubBuffer(cl_mem parent, cl_mem_flags f, cl_buffer_create_type t, const void* info, cl_int* err)
{
    cl_int e;
    if (inject("clCreateSubBuffer", RA, kSubBuffer, &e)) return set_err(err, e), nullptr;
    cl_mem m = REAL(clCreateSubBuffer)(parent, f, t, info, err);
    if (from_stdcl(RA)) ledger_created(m, kMem);
    return m;
}

SHIM_API cl_mem clCreateImage(cl_context c, cl_mem_flags f, const cl_image_format* fmt, const cl_image_desc* desc,
                              void* host, cl_int* err)
{
    cl_int e;
    if (inject("clCreateImage", RA, kImage, &e)) return set_err(err, e), nullptr;
    cl_mem m = REAL(clCreateImage)(c, f, fmt, desc, host, err);
    if (from_stdcl(RA)) ledger_created(m, kMem);
    return m;
}

SHIM_API cl_int clRetainMemObject(cl_mem m)
{
    cl_int e;
    if (inject("clRetainMemObject", RA, kHost, &e)) return e;
    cl_int r = REAL(clRetainMemObject)(m);
    if (r == CL_SUCCESS && from_stdcl(RA)) ledger_retained(m, kMem);
    return r;
}

SHIM_API cl_int clReleaseMemObject(cl_mem m)
{
    if (from_stdcl(RA)) ledger_released(m, kMem, "clReleaseMemObject", RA);
    return REAL(clReleaseMemObject)(m);
}

SHIM_API cl_int clGetCommandQueueInfo(cl_command_queue q, cl_command_queue_info what, size_t sz, void* v,
                                      size_t* ret)
{
    cl_int e;
    if (inject("clGetCommandQueueInfo", RA, kHost, &e)) return e;
    return REAL(clGetCommandQueueInfo)(q, what, sz, v, ret);
}

SHIM_API cl_int clGetMemObjectInfo(cl_mem m, cl_mem_info what, size_t sz, void* v, size_t* ret)
{
    cl_int e;
    if (inject("clGetMemObjectInfo", RA, kHost, &e)) return e;
    return REAL(clGetMemObjectInfo)(m, what, sz, v, ret);
}

SHIM_API cl_program clCreateProgramWithSource(cl_context c, cl_uint n, const char** src, const size_t* len, cl_int* err)
{
    cl_int e;
    if (inject("clCreateProgramWithSource", RA, kHost, &e)) return set_err(err, e), nullptr;
    cl_program p = REAL(clCreateProgramWithSource)(c, n, src, len, err);
    if (from_stdcl(RA)) ledger_created(p, kProgram);
    return p;
}

SHIM_API cl_program clCreateProgramWithBinary(cl_context c, cl_uint n, const cl_device_id* devs, const size_t* lens,
                                              const unsigned char** bins, cl_int* status, cl_int* err)
{
    cl_int e;
    if (inject("clCreateProgramWithBinary", RA, kBinary, &e)) {
        if (e == CL_INVALID_BINARY && status)
            for (cl_uint i = 0; i < n; ++i) status[i] = CL_INVALID_BINARY;
        return set_err(err, e), nullptr;
    }
    cl_program p = REAL(clCreateProgramWithBinary)(c, n, devs, lens, bins, status, err);
    if (from_stdcl(RA)) ledger_created(p, kProgram);
    return p;
}

SHIM_API cl_int clRetainProgram(cl_program p)
{
    cl_int e;
    if (inject("clRetainProgram", RA, kHost, &e)) return e;
    cl_int r = REAL(clRetainProgram)(p);
    if (r == CL_SUCCESS && from_stdcl(RA)) ledger_retained(p, kProgram);
    return r;
}

SHIM_API cl_int clReleaseProgram(cl_program p)
{
    if (from_stdcl(RA)) ledger_released(p, kProgram, "clReleaseProgram", RA);
    return REAL(clReleaseProgram)(p);
}

SHIM_API cl_int clBuildProgram(cl_program p, cl_uint n, const cl_device_id* devs, const char* opts,
                               void(CL_CALLBACK* notify)(cl_program, void*), void* user)
{
    cl_int e;
    if (inject("clBuildProgram", RA, kBuild, &e)) return e;
    return REAL(clBuildProgram)(p, n, devs, opts, notify, user);
}

SHIM_API cl_int clGetProgramInfo(cl_program p, cl_program_info what, size_t sz, void* v, size_t* ret)
{
    cl_int e;
    if (inject("clGetProgramInfo", RA, kHost, &e)) return e;
    return REAL(clGetProgramInfo)(p, what, sz, v, ret);
}

SHIM_API cl_int clGetProgramBuildInfo(cl_program p, cl_device_id d, cl_program_build_info what, size_t sz, void* v,
                                      size_t* ret)
{
    cl_int e;
    if (inject("clGetProgramBuildInfo", RA, kHost, &e)) return e;
    return REAL(clGetProgramBuildInfo)(p, d, what, sz, v, ret);
}

SHIM_API cl_kernel clCreateKernel(cl_program p, const char* name, cl_int* err)
{
    cl_int e;
    if (inject("clCreateKernel", RA, kHost, &e)) return set_err(err, e), nullptr;
    cl_kernel k = REAL(clCreateKernel)(p, name, err);
    if (from_stdcl(RA)) ledger_created(k, kKernel);
    return k;
}

SHIM_API cl_int clRetainKernel(cl_kernel k)
{
    cl_int e;
    if (inject("clRetainKernel", RA, kHost, &e)) return e;
    cl_int r = REAL(clRetainKernel)(k);
    if (r == CL_SUCCESS && from_stdcl(RA)) ledger_retained(k, kKernel);
    return r;
}

SHIM_API cl_int clReleaseKernel(cl_kernel k)
{
    if (from_stdcl(RA)) ledger_released(k, kKernel, "clReleaseKernel", RA);
    return REAL(clReleaseKernel)(k);
}

SHIM_API cl_int clSetKernelArg(cl_kernel k, cl_uint i, size_t sz, const void* v)
{
    cl_int e;
    if (inject("clSetKernelArg", RA, kHost, &e)) return e;
    return REAL(clSetKernelArg)(k, i, sz, v);
}

SHIM_API cl_int clSetMemObjectDestructorCallback(cl_mem m, void(CL_CALLBACK* fn)(cl_mem, void*), void* user)
{
    cl_int e;
    if (inject("clSetMemObjectDestructorCallback", RA, kHost, &e)) return e;
    return REAL(clSetMemObjectDestructorCallback)(m, fn, user);
}

SHIM_API cl_int clGetKernelInfo(cl_kernel k, cl_kernel_info what, size_t sz, void* v, size_t* ret)
{
    cl_int e;
    if (inject("clGetKernelInfo", RA, kHost, &e)) return e;
    return REAL(clGetKernelInfo)(k, what, sz, v, ret);
}

SHIM_API cl_int clGetKernelArgInfo(cl_kernel k, cl_uint i, cl_kernel_arg_info what, size_t sz, void* v, size_t* ret)
{
    cl_int e;
    if (inject("clGetKernelArgInfo", RA, kArgInfo, &e)) return e;
    return REAL(clGetKernelArgInfo)(k, i, what, sz, v, ret);
}

SHIM_API cl_int clGetKernelWorkGroupInfo(cl_kernel k, cl_device_id d, cl_kernel_work_group_info what, size_t sz,
                                         void* v, size_t* ret)
{
    cl_int e;
    if (inject("clGetKernelWorkGroupInfo", RA, kHost, &e)) return e;
    return REAL(clGetKernelWorkGroupInfo)(k, d, what, sz, v, ret);
}

SHIM_API cl_event clCreateUserEvent(cl_context c, cl_int* err)
{
    cl_int e;
    if (inject("clCreateUserEvent", RA, kHost, &e)) return set_err(err, e), nullptr;
    cl_event ev = REAL(clCreateUserEvent)(c, err);
    if (ev && from_stdcl(RA)) ledger_created(ev, kEvent);
    return ev;
}

SHIM_API cl_int clSetUserEventStatus(cl_event ev, cl_int status)
{
    cl_int e;
    if (inject("clSetUserEventStatus", RA, kHost, &e)) return e;
    return REAL(clSetUserEventStatus)(ev, status);
}

SHIM_API cl_int clWaitForEvents(cl_uint n, const cl_event* evs)
{
    cl_int e;
    bool fail = inject("clWaitForEvents", RA, kWait, &e);
    cl_int r = REAL(clWaitForEvents)(n, evs);  // the wait happens; its failure is found after
    return fail ? e : r;
}

// A polled wait (STDCL_WAIT=block) asks for an event's status again and again
// until it changes, as many times as the command takes: only the first of a
// run of such queries (the same event, from the same site, in one thread) is
// counted, so that the calls of a run are numbered the same every time.
thread_local cl_event t_polled_ev;
thread_local const void* t_polled_ra;

SHIM_API cl_int clGetEventInfo(cl_event ev, cl_event_info what, size_t sz, void* v, size_t* ret)
{
    cl_int e;
    const void* ra = RA;
    if (what == CL_EVENT_COMMAND_EXECUTION_STATUS && ev == t_polled_ev && ra == t_polled_ra)
        return REAL(clGetEventInfo)(ev, what, sz, v, ret);
    t_polled_ev = what == CL_EVENT_COMMAND_EXECUTION_STATUS ? ev : nullptr;
    t_polled_ra = ra;
    if (inject("clGetEventInfo", ra, kHost, &e)) return e;
    return REAL(clGetEventInfo)(ev, what, sz, v, ret);
}

SHIM_API cl_int clGetEventProfilingInfo(cl_event ev, cl_profiling_info what, size_t sz, void* v, size_t* ret)
{
    cl_int e;
    if (inject("clGetEventProfilingInfo", RA, kHost, &e)) return e;
    return REAL(clGetEventProfilingInfo)(ev, what, sz, v, ret);
}

SHIM_API cl_int clRetainEvent(cl_event ev)
{
    cl_int e;
    if (inject("clRetainEvent", RA, kHost, &e)) return e;
    cl_int r = REAL(clRetainEvent)(ev);
    if (r == CL_SUCCESS && from_stdcl(RA)) ledger_retained(ev, kEvent);
    return r;
}

SHIM_API cl_int clReleaseEvent(cl_event ev)
{
    if (from_stdcl(RA)) ledger_released(ev, kEvent, "clReleaseEvent", RA);
    return REAL(clReleaseEvent)(ev);
}

SHIM_API cl_int clFlush(cl_command_queue q)
{
    cl_int e;
    bool fail = inject("clFlush", RA, kHost, &e);
    cl_int r = REAL(clFlush)(q);
    return fail ? e : r;
}

SHIM_API cl_int clFinish(cl_command_queue q)
{
    cl_int e;
    bool fail = inject("clFinish", RA, kHost, &e);
    cl_int r = REAL(clFinish)(q);
    return fail ? e : r;
}

SHIM_API cl_int clEnqueueReadBuffer(cl_command_queue q, cl_mem m, cl_bool block, size_t off, size_t n, void* p,
                                    cl_uint nw, const cl_event* wl, cl_event* ev)
{
    cl_int e;
    if (inject("clEnqueueReadBuffer", RA, kEnqueueMem, &e)) return e;
    cl_int r = REAL(clEnqueueReadBuffer)(q, m, block, off, n, p, nw, wl, ev);
    if (from_stdcl(RA)) note_event(r, ev);
    return r;
}

SHIM_API cl_int clEnqueueWriteBuffer(cl_command_queue q, cl_mem m, cl_bool block, size_t off, size_t n, const void* p,
                                     cl_uint nw, const cl_event* wl, cl_event* ev)
{
    cl_int e;
    if (inject("clEnqueueWriteBuffer", RA, kEnqueueMem, &e)) return e;
    cl_int r = REAL(clEnqueueWriteBuffer)(q, m, block, off, n, p, nw, wl, ev);
    if (from_stdcl(RA)) note_event(r, ev);
    return r;
}

SHIM_API cl_int clEnqueueCopyBuffer(cl_command_queue q, cl_mem s, cl_mem d, size_t so, size_t doff, size_t n,
                                    cl_uint nw, const cl_event* wl, cl_event* ev)
{
    cl_int e;
    if (inject("clEnqueueCopyBuffer", RA, kEnqueueMem, &e)) return e;
    cl_int r = REAL(clEnqueueCopyBuffer)(q, s, d, so, doff, n, nw, wl, ev);
    if (from_stdcl(RA)) note_event(r, ev);
    return r;
}

SHIM_API cl_int clEnqueueFillBuffer(cl_command_queue q, cl_mem m, const void* pat, size_t psz, size_t off, size_t n,
                                    cl_uint nw, const cl_event* wl, cl_event* ev)
{
    cl_int e;
    if (inject("clEnqueueFillBuffer", RA, kEnqueueMem, &e)) return e;
    cl_int r = REAL(clEnqueueFillBuffer)(q, m, pat, psz, off, n, nw, wl, ev);
    if (from_stdcl(RA)) note_event(r, ev);
    return r;
}

SHIM_API cl_int clEnqueueReadImage(cl_command_queue q, cl_mem m, cl_bool block, const size_t* origin,
                                   const size_t* region, size_t rp, size_t sp, void* p, cl_uint nw, const cl_event* wl,
                                   cl_event* ev)
{
    cl_int e;
    if (inject("clEnqueueReadImage", RA, kEnqueueMem, &e)) return e;
    cl_int r = REAL(clEnqueueReadImage)(q, m, block, origin, region, rp, sp, p, nw, wl, ev);
    if (from_stdcl(RA)) note_event(r, ev);
    return r;
}

SHIM_API cl_int clEnqueueWriteImage(cl_command_queue q, cl_mem m, cl_bool block, const size_t* origin,
                                    const size_t* region, size_t rp, size_t sp, const void* p, cl_uint nw,
                                    const cl_event* wl, cl_event* ev)
{
    cl_int e;
    if (inject("clEnqueueWriteImage", RA, kEnqueueMem, &e)) return e;
    cl_int r = REAL(clEnqueueWriteImage)(q, m, block, origin, region, rp, sp, p, nw, wl, ev);
    if (from_stdcl(RA)) note_event(r, ev);
    return r;
}

SHIM_API void* clEnqueueMapBuffer(cl_command_queue q, cl_mem m, cl_bool block, cl_map_flags f, size_t off, size_t n,
                                  cl_uint nw, const cl_event* wl, cl_event* ev, cl_int* err)
{
    cl_int e;
    if (inject("clEnqueueMapBuffer", RA, kMap, &e)) return set_err(err, e), nullptr;
    cl_int r = CL_SUCCESS;
    void* p = REAL(clEnqueueMapBuffer)(q, m, block, f, off, n, nw, wl, ev, &r);
    set_err(err, r);
    if (from_stdcl(RA)) note_event(r, ev);
    return p;
}

SHIM_API cl_int clEnqueueUnmapMemObject(cl_command_queue q, cl_mem m, void* p, cl_uint nw, const cl_event* wl,
                                        cl_event* ev)
{
    cl_int e;
    if (inject("clEnqueueUnmapMemObject", RA, kHost, &e)) return e;
    cl_int r = REAL(clEnqueueUnmapMemObject)(q, m, p, nw, wl, ev);
    if (from_stdcl(RA)) note_event(r, ev);
    return r;
}

SHIM_API cl_int clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t* off,
                                       const size_t* gsz, const size_t* lsz, cl_uint nw, const cl_event* wl,
                                       cl_event* ev)
{
    cl_int e;
    if (inject("clEnqueueNDRangeKernel", RA, kEnqueueMem, &e)) return e;
    cl_int r = REAL(clEnqueueNDRangeKernel)(q, k, dim, off, gsz, lsz, nw, wl, ev);
    if (from_stdcl(RA)) note_event(r, ev);
    return r;
}

SHIM_API cl_int clEnqueueMarkerWithWaitList(cl_command_queue q, cl_uint nw, const cl_event* wl, cl_event* ev)
{
    cl_int e;
    if (inject("clEnqueueMarkerWithWaitList", RA, kHost, &e)) return e;
    cl_int r = REAL(clEnqueueMarkerWithWaitList)(q, nw, wl, ev);
    if (from_stdcl(RA)) note_event(r, ev);
    return r;
}

SHIM_API cl_int clEnqueueBarrierWithWaitList(cl_command_queue q, cl_uint nw, const cl_event* wl, cl_event* ev)
{
    cl_int e;
    if (inject("clEnqueueBarrierWithWaitList", RA, kHost, &e)) return e;
    cl_int r = REAL(clEnqueueBarrierWithWaitList)(q, nw, wl, ev);
    if (from_stdcl(RA)) note_event(r, ev);
    return r;
}
