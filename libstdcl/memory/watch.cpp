// SPDX-License-Identifier: MIT
// watch.cpp: memory mapped twice, protected in the program's view, and the
// SIGSEGV handler that records the program's accesses to it (watch.hpp).
#include "memory/watch.hpp"

#include <errno.h>
#include <execinfo.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

namespace stdcl {

namespace {

// The first fault in a page since it was last taken: free (0), being written
// by the handler (1), or ready (2).  One per page of a slot, so that no access
// is lost however many pages the program touches between two library calls.
struct Record {
    std::atomic<int> state;
    WatchFault fault;
};

struct Slot {
    std::atomic<char*> user{nullptr};  // nullptr: free
    std::atomic<char*> lib{nullptr};
    std::atomic<size_t> bytes{0};
    std::atomic<void*> owner{nullptr};
    std::atomic<Record*> records{nullptr};  // one per page, mapped at watch_add (zeroed: free)
    std::atomic<size_t> ready{0};  // records of this slot in state 2
};

constexpr size_t kSlots = 4096;

Slot g_slots[kSlots];
std::atomic<size_t> g_used{0};  // slots [0, g_used) may be taken
std::atomic<unsigned> g_ready{0};
std::atomic<std::uint64_t> g_seq{0};  // the order of the faults

std::mutex g_mu;  // slot allocation and installing the handler
bool g_installed = false;
struct sigaction g_prev;

size_t page_bytes()
{
    static const size_t ps = size_t(sysconf(_SC_PAGESIZE));
    return ps;
}

// The page as the program was about to touch it.  A program that touches memory
// while a command that writes it is pending (a finding) races the driver here;
// the race is the program's, and ThreadSanitizer is not to report it as ours.
__attribute__((no_sanitize("thread"))) std::uint64_t hash_page_at_fault(const char* p, size_t n)
{
    return hash_bytes_inline(p, n);
}

__attribute__((no_sanitize("thread"))) void word_at_fault(const char* p, unsigned char* out)
{
    for (int i = 0; i < 4; ++i) out[i] = static_cast<unsigned char>(p[i]);
}

void fault_context(void* uc, WatchFault& f)
{
    f.pc = nullptr;
    f.write = false;
#if defined(__x86_64__)
    const ucontext_t* u = static_cast<const ucontext_t*>(uc);
    f.pc = reinterpret_cast<void*>(u->uc_mcontext.gregs[REG_RIP]);
    f.write = (u->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#elif defined(__aarch64__)
    const ucontext_t* u = static_cast<const ucontext_t*>(uc);
    f.pc = reinterpret_cast<void*>(u->uc_mcontext.pc);
#else
    (void)uc;
#endif
}

// The program's own handler, or the default action: restored, so that the
// faulting instruction, run again, ends the process at its address.
void chain(int sig, siginfo_t* si, void* uc)
{
    if (g_prev.sa_flags & SA_SIGINFO) {
        if (g_prev.sa_sigaction) {
            g_prev.sa_sigaction(sig, si, uc);
            return;
        }
    } else if (g_prev.sa_handler != SIG_DFL && g_prev.sa_handler != SIG_IGN) {
        g_prev.sa_handler(sig);
        return;
    }
    struct sigaction dfl;
    std::memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, nullptr);
}

void on_fault(int sig, siginfo_t* si, void* uc)
{
    int saved = errno;
    char* addr = static_cast<char*>(si->si_addr);
    if (si->si_code == SEGV_ACCERR) {
        size_t used = g_used.load(std::memory_order_acquire);
        for (size_t i = 0; i < used; ++i) {
            char* user = g_slots[i].user.load(std::memory_order_acquire);
            size_t bytes = g_slots[i].bytes.load(std::memory_order_relaxed);
            if (!user || addr < user || addr >= user + bytes) continue;
            size_t ps = page_bytes();
            size_t off = size_t(addr - user);
            size_t page = off / ps * ps;
            char* lib = g_slots[i].lib.load(std::memory_order_relaxed);
            Record* recs = g_slots[i].records.load(std::memory_order_acquire);
            int expect = 0;
            // A page faults again before its record was taken only where the
            // library protected it again meanwhile; the first access is kept.
            if (recs && recs[page / ps].state.compare_exchange_strong(expect, 1, std::memory_order_acquire)) {
                Record& r = recs[page / ps];
                WatchFault& f = r.fault;
                f.owner = g_slots[i].owner.load(std::memory_order_relaxed);
                f.offset = off;
                f.seq = g_seq.fetch_add(1, std::memory_order_relaxed);
                fault_context(uc, f);
                f.page_hash = hash_page_at_fault(lib + page, ps);
                word_at_fault(lib + (off & ~size_t(3)), f.word);  // slots are page-aligned: the word is inside
                f.nframes = backtrace(f.frames, int(sizeof f.frames / sizeof f.frames[0]));
                r.state.store(2, std::memory_order_release);
                g_slots[i].ready.fetch_add(1, std::memory_order_release);
                g_ready.fetch_add(1, std::memory_order_release);
            }
            // The page is the program's again; the access is run again and succeeds.
            mprotect(user + page, ps, PROT_READ | PROT_WRITE);
            errno = saved;
            return;
        }
    }
    errno = saved;
    chain(sig, si, uc);
}

void install()
{
    void* warm[2];
    backtrace(warm, 2);  // loads the unwinder now, not inside the handler
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g_prev);
    g_installed = true;
}

}  // namespace

bool watch_map(size_t bytes, char** user, char** lib)
{
    int fd = memfd_create("stdcl-check", MFD_CLOEXEC);
    if (fd < 0) return false;
    bool ok = ftruncate(fd, off_t(bytes)) == 0;
    void* u = ok ? mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    void* l = u != MAP_FAILED ? mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    close(fd);
    if (l == MAP_FAILED) {
        if (u != MAP_FAILED) munmap(u, bytes);
        return false;
    }
    *user = static_cast<char*>(u);
    *lib = static_cast<char*>(l);
    return true;
}

void watch_unmap(char* user, char* lib, size_t bytes) noexcept
{
    munmap(user, bytes);
    munmap(lib, bytes);
}

int watch_add(char* user, char* lib, size_t bytes, void* owner)
{
    std::lock_guard<std::mutex> lock(g_mu);
    if (!g_installed) install();
    size_t used = g_used.load(std::memory_order_relaxed);
    size_t i = 0;
    while (i < used && g_slots[i].user.load(std::memory_order_relaxed)) ++i;
    if (i == kSlots) return -1;
    size_t rbytes = (bytes / page_bytes() * sizeof(Record) + page_bytes() - 1) / page_bytes() * page_bytes();
    void* recs = mmap(nullptr, rbytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (recs == MAP_FAILED) return -1;
    Slot& s = g_slots[i];
    s.records.store(static_cast<Record*>(recs), std::memory_order_relaxed);
    s.ready.store(0, std::memory_order_relaxed);
    s.lib.store(lib, std::memory_order_relaxed);
    s.bytes.store(bytes, std::memory_order_relaxed);
    s.owner.store(owner, std::memory_order_relaxed);
    s.user.store(user, std::memory_order_release);
    if (i == used) g_used.store(used + 1, std::memory_order_release);
    return int(i);
}

void watch_remove(int slot) noexcept
{
    if (slot < 0) return;
    std::lock_guard<std::mutex> lock(g_mu);
    Slot& s = g_slots[slot];
    char* user = s.user.load(std::memory_order_relaxed);
    if (!user) return;
    size_t bytes = s.bytes.load(std::memory_order_relaxed);
    mprotect(user, bytes, PROT_READ | PROT_WRITE);
    s.user.store(nullptr, std::memory_order_release);
    g_ready.fetch_sub(unsigned(s.ready.exchange(0, std::memory_order_acq_rel)), std::memory_order_relaxed);
    Record* recs = s.records.exchange(nullptr, std::memory_order_acq_rel);
    size_t rbytes = (bytes / page_bytes() * sizeof(Record) + page_bytes() - 1) / page_bytes() * page_bytes();
    if (recs) munmap(recs, rbytes);
}

void watch_protect(int slot, size_t first, size_t n, Access access) noexcept
{
    if (slot < 0 || n == 0) return;
    if (access != Access::open) {
        // A handler the program installed since is chained to, ours goes first again.
        std::lock_guard<std::mutex> lock(g_mu);
        struct sigaction now;
        if (sigaction(SIGSEGV, nullptr, &now) == 0 && (!(now.sa_flags & SA_SIGINFO) || now.sa_sigaction != on_fault))
            install();
    }
    Slot& s = g_slots[slot];
    char* user = s.user.load(std::memory_order_relaxed);
    if (!user) return;
    size_t ps = page_bytes();
    int prot = access == Access::none ? PROT_NONE : access == Access::read ? PROT_READ : PROT_READ | PROT_WRITE;
    mprotect(user + first * ps, n * ps, prot);
}

bool watch_pending() noexcept { return g_ready.load(std::memory_order_acquire) != 0; }

std::vector<WatchFault> watch_take()
{
    std::vector<WatchFault> out;
    std::lock_guard<std::mutex> lock(g_mu);
    size_t used = g_used.load(std::memory_order_acquire), ps = page_bytes();
    for (size_t i = 0; i < used; ++i) {
        Slot& s = g_slots[i];
        if (!s.user.load(std::memory_order_acquire) || s.ready.load(std::memory_order_acquire) == 0) continue;
        Record* recs = s.records.load(std::memory_order_relaxed);
        size_t pages = s.bytes.load(std::memory_order_relaxed) / ps;
        for (size_t p = 0; p < pages; ++p) {
            Record& r = recs[p];
            if (r.state.load(std::memory_order_acquire) != 2) continue;
            out.push_back(r.fault);
            r.state.store(0, std::memory_order_release);
            s.ready.fetch_sub(1, std::memory_order_relaxed);
            g_ready.fetch_sub(1, std::memory_order_relaxed);
        }
    }
    std::sort(out.begin(), out.end(), [](const WatchFault& x, const WatchFault& y) { return x.seq < y.seq; });
    return out;
}

}  // namespace stdcl
