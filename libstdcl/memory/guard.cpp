// SPDX-License-Identifier: MIT
// guard.cpp: the overrun check mode (STDCL_CHECK=1).  Every clmalloc allocation gets
// guard zones: a page before the host memory and, behind it, from the first byte
// past the requested size, the rest of its last page plus 4 KiB; device buffers get
// the same zone behind the data.  The zones hold a known pattern, checked at each
// clmsync, clwait and clfree: a kernel or host code that wrote past the end is
// reported as an error naming the allocation, the last kernel launched on it and
// how far past the end it wrote, before the damage reaches the heap (without the
// mode, glibc aborts later, far from the cause, or nothing is noticed at all).
#include "memory/memory.hpp"
#include "config/config.hpp"
#include "helpers/diag.hpp"

#include <cstdlib>
#include <cstring>

namespace stdcl {

namespace {

constexpr size_t kBackGuard = 4096;

unsigned char pattern(size_t i) { return (unsigned char)(0xA5u ^ (i * 0x3Bu)); }

void fill(unsigned char* p, size_t n, size_t phase)
{
    for (size_t i = 0; i < n; ++i) p[i] = pattern(phase + i);
}

// Bytes from the start of the zone to its last damaged byte (0: intact).
size_t damaged_extent(const unsigned char* p, size_t n, size_t phase)
{
    size_t extent = 0;
    for (size_t i = 0; i < n; ++i)
        if (p[i] != pattern(phase + i)) extent = i + 1;
    return extent;
}

// Bytes before the end of the front zone that were written (0: intact).
size_t damaged_before(const unsigned char* p, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        if (p[i] != pattern(i)) return n - i;
    return 0;
}

[[noreturn]] void report(Allocation& a, const char* call, const char* where, size_t bytes, bool before)
{
    std::string kernel;
    {
        std::lock_guard<std::mutex> lock(a.mu);
        kernel = a.last_kernel;
    }
    fail(STDCL_EOVERRUN,
         "%s: overrun: %zu byte(s) written %s the %zu-byte allocation at %p (%s); last kernel launched on it: %s", call,
         bytes, before ? "before the start of" : "past the end of", a.size, (void*)a.host, where,
         kernel.empty() ? "none" : ("'" + kernel + "'").c_str());
}

}  // namespace

bool check_mode() { return settings().check; }

size_t guard_front_bytes(size_t page) { return check_mode() ? page : 0; }

size_t guard_back_bytes(size_t size, size_t page)
{
    if (!check_mode()) return 0;
    size_t rounded = (size + page - 1) / page * page;
    return rounded - size + kBackGuard;
}

void guard_init_host(Allocation& a, size_t front)
{
    if (!a.guard) return;
    fill(reinterpret_cast<unsigned char*>(a.lib()) - front, front, 0);
    fill(reinterpret_cast<unsigned char*>(a.lib()) + a.size, a.guard, 0);
}

void guard_init_device(Allocation& a, const Device& d, cl_mem m)
{
    if (!a.guard || a.is_image || a.zero_copy_on(d) || (a.flags & CL_MEM_NOCOPY)) return;  // host memory holds the zone
    std::vector<unsigned char> zone(a.guard);
    fill(zone.data(), zone.size(), 0);
    check_cl(clEnqueueWriteBuffer(d.queue, m, CL_TRUE, a.size, a.guard, zone.data(), 0, nullptr, nullptr),
             "clEnqueueWriteBuffer (STDCL_CHECK guard zone)");
}

void guard_check(Allocation& a, int devnum, const char* call)
{
    if (!a.guard) return;
    unsigned char* host = reinterpret_cast<unsigned char*>(a.lib());  // the program's view may be protected
    size_t front = a.host - a.block;
    if (size_t n = damaged_extent(host + a.size, a.guard, 0)) {
        fill(host + a.size, a.guard, 0);
        report(a, call, "host memory", n, false);
    }
    if (size_t n = damaged_before(host - front, front)) {
        fill(host - front, front, 0);
        report(a, call, "host memory", n, true);
    }
    CLCONTEXT* cp = a.cp.load();
    if (!cp || a.is_image) return;
    for (unsigned d = 0; d < cp->devs.size(); ++d) {
        if (devnum >= 0 && unsigned(devnum) != d) continue;
        const Device& dev = cp->devs[d];
        cl_mem m = nullptr;
        {
            std::lock_guard<std::mutex> lock(a.mu);
            if (d < a.mem.size()) m = a.mem[d];
        }
        if (!m || a.zero_copy_on(dev)) continue;
        std::vector<unsigned char> zone(a.guard);
        check_cl(clEnqueueReadBuffer(dev.queue, m, CL_TRUE, a.size, a.guard, zone.data(), 0, nullptr, nullptr),
                 "clEnqueueReadBuffer (STDCL_CHECK guard zone)");
        if (size_t n = damaged_extent(zone.data(), zone.size(), 0)) {
            guard_init_device(a, dev, m);
            report(a, call, strprintf("device %u (%s)", d, dev.name.c_str()).c_str(), n, false);
        }
    }
}

}  // namespace stdcl
