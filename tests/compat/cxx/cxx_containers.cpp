// SPDX-License-Identifier: MIT
// cxx_containers.cpp: checks, printing one "ok <what>" line per check that
// holds (test_compat.c compares the lines):
// - a clvector attached and bound to a kernel, then grown by push_back past
//   its capacity while attached, is bound again: the kernel writes the new
//   storage (the old one was freed);
// - the same for clmulti_array::resize;
// - a copied clvector is detached and has its own storage;
// - stdcl.hpp without STDCL_EXCEPTIONS: a missing file gives an empty program
//   and clerror() says why; clmalloc failure gives an empty buffer.
#include <stdcl.h>
#include <clvector.h>
#include <clmulti_array.h>
#include <stdcl.hpp>

#include <cstdio>
#include <cstring>

static int check(bool ok, const char* what)
{
    std::printf("%s %s\n", ok ? "ok" : "FAILED", what);
    return ok ? 0 : 1;
}

int main()
{
    CLCONTEXT* cp = stdcpu;
    cl_kernel k = clsym(cp, 0, "inc", 0);
    if (!k) {
        std::printf("FAILED clsym: %s\n", clerror());
        return 1;
    }
    int bad = 0;
    {
        clvector<float> x(16, 1.0f), y(16, 0.0f);
        x.clmattach(cp);
        y.clmattach(cp);
        x.clarg_set_global(cp, k, 0);
        y.clarg_set_global(cp, k, 1);
        size_t old_capacity = y.capacity();
        for (int i = 0; i < 1000; ++i) x.push_back(float(i)), y.push_back(0.0f);  // reallocates while attached
        bad += check(old_capacity == 16 && y.capacity() >= 1016, "clvector reallocated");
        x.clmsync(cp, 1, CL_MEM_DEVICE);
        y.clmsync(cp, 1, CL_MEM_DEVICE);
        clndrange_t ndr = clndrange_init1d(0, x.size(), 8);
        bool ran = clfork(cp, 1, k, &ndr, CL_EVENT_WAIT) != 0;  // no clarg_set again
        y.clmsync(cp, 1, CL_MEM_HOST);
        bool right = ran;
        for (size_t i = 0; i < x.size(); ++i) right = right && y[i] == x[i] + 1.0f;
        bad += check(right, "clvector grown while attached stays bound to the kernel");
        clvector<float> z(y);
        bad += check(z.get_ptr() != y.get_ptr() && z.size() == y.size() && z[20] == y[20], "clvector copy has its own storage");
        bad += check(clmsync(cp, 0, z.get_ptr(), CL_MEM_DEVICE) == 0, "clvector copy starts detached");
    }
    {
        clmulti_array<float, 2> x(boost::extents[4][4]), y(boost::extents[4][4]);
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) x[i][j] = float(i * 4 + j);
        x.clmattach(cp);
        y.clmattach(cp);
        x.clarg_set_global(cp, k, 0);
        y.clarg_set_global(cp, k, 1);
        x.resize(boost::extents[32][32]);
        y.resize(boost::extents[32][32]);
        for (int i = 0; i < 32; ++i)
            for (int j = 0; j < 32; ++j) x[i][j] = float(i * 32 + j);
        x.clmsync(cp, 0, CL_MEM_DEVICE);
        y.clmsync(cp, 0, CL_MEM_DEVICE);
        clndrange_t ndr = clndrange_init1d(0, 32 * 32, 32);
        bool ran = clfork(cp, 0, k, &ndr, CL_EVENT_WAIT) != 0;
        y.clmsync(cp, 0, CL_MEM_HOST);
        bool right = ran;
        for (int i = 0; i < 32; ++i)
            for (int j = 0; j < 32; ++j) right = right && y[i][j] == float(i * 32 + j) + 1.0f;
        bad += check(right, "clmulti_array resized while attached stays bound to the kernel");
    }
    {
        stdcl::program p(cp, "no_such_file.cl");
        const char* e = clerror();
        bad += check(!p && e && std::strstr(e, "no_such_file.cl"), "stdcl.hpp program without exceptions is empty");
        stdcl::buffer<float> b(cp, 0);
        bad += check(!b && b.size() == 0, "stdcl.hpp buffer of 0 elements is empty");
        stdcl::buffer<int> good(cp, 8);
        bad += check(good && good.size() == 8, "stdcl.hpp buffer allocates");
    }
    return bad ? 1 : 0;
}
