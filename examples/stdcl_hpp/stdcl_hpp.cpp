// SPDX-License-Identifier: MIT
// stdcl_hpp.cpp: y = 2 x + y on every device of the default context, with the
// RAII layer <stdcl.hpp>: the program and the buffers release themselves, the
// kernel's arguments are typed, and a failure is a stdcl::error exception
// carrying clerror()'s text.  Prints "device d: ok" per device and exits 0
// when every y[i] equals 2 i + 1.
#define STDCL_EXCEPTIONS
#include <stdcl.hpp>

#include <cstdio>

int main()
{
    CLCONTEXT* cp = stdgpu ? stdgpu : stdcpu;
    if (!cp) {
        std::fprintf(stderr, "no GPU or CPU context: %s\n", clerror() ? clerror() : "");
        return 1;
    }
    try {
        const cl_uint n = 1 << 16;
        stdcl::program prog(cp, "saxpy.cl");
        cl_kernel saxpy = prog.kernel("saxpy");
        int bad = 0;
        for (unsigned d = 0; d < clgetndev(cp); ++d) {
            stdcl::buffer<float> x(cp, n), y(cp, n);
            for (cl_uint i = 0; i < n; ++i) x[i] = float(i), y[i] = 1.0f;
            x.to_device(d);
            y.to_device(d);
            stdcl::launch(cp, d, saxpy, clndrange_init1d(0, n, 64), CL_EVENT_WAIT, 2.0f, x, y, n);
            y.to_host(d);
            int wrong = 0;
            for (cl_uint i = 0; i < n; ++i) wrong += y[i] != 2.0f * float(i) + 1.0f;
            std::printf("device %u: %s\n", d, wrong ? "WRONG" : "ok");
            bad += wrong;
        }
        // A mistake is an exception with the library's message.
        try {
            prog.kernel("no_such_kernel");
        } catch (const stdcl::error& e) {
            std::printf("caught: %s\n", e.what());
        }
        return bad ? 1 : 0;
    } catch (const stdcl::error& e) {
        std::fprintf(stderr, "stdcl_hpp: %s\n", e.what());
        return 1;
    }
}
