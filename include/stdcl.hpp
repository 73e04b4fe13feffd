// SPDX-License-Identifier: MIT
/* stdcl.hpp: a small RAII layer over <stdcl.h> for C++ programs (C++11).
 *
 *   stdcl::program prog(cp, "add.cl");            // clopen; clclose when destroyed
 *   stdcl::buffer<float> a(cp, n), b(cp, n), c(cp, n);   // clmalloc; clfree
 *   a.to_device(0); b.to_device(0);               // clmsync host -> device 0
 *   clndrange_t ndr = clndrange_init1d(0, n, 64);
 *   stdcl::launch(cp, 0, prog.kernel("add"), ndr, CL_EVENT_WAIT, a, b, c, n);
 *   c.to_host(0);
 *
 * launch() takes the kernel's arguments typed: a stdcl::buffer stands for its
 * memory, anything else is passed by value (scalars, cl_float4, ...).
 *
 * Errors: by default a failed call leaves the object empty (operator bool is
 * false) or returns NULL / a negative code, as the C API does, and clerror()
 * says why.  Define STDCL_EXCEPTIONS before including this header to get a
 * stdcl::error exception instead, carrying the clerror() text and the code.
 * The C API itself never throws.
 */
#ifndef STDCL_HPP
#define STDCL_HPP

#include <stdcl.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

namespace stdcl {

/* What a failed call throws with STDCL_EXCEPTIONS: clerror()'s text. */
class error : public std::runtime_error {
public:
    error(int code, const std::string& what) : std::runtime_error(what), code_(code) {}
    int code() const noexcept { return code_; }

private:
    int code_;
};

namespace detail {
/* When ok is false, throws (STDCL_EXCEPTIONS) an error with clerror()'s text
 * (which names the call), or does nothing. */
inline void check(bool ok, int code, const char* call)
{
#ifdef STDCL_EXCEPTIONS
    if (!ok) {
        const char* m = clerror();
        throw error(code, m ? std::string(m) : std::string(call) + ": failed");
    }
#else
    (void)ok;
    (void)code;
    (void)call;
#endif
}
} /* namespace detail */

/* A program opened with clopen (or clsopen: program::source), closed with
 * clclose when the last owner goes.  Movable, not copyable. */
class program {
public:
    program() noexcept : cp_(0), h_(0) {}
    program(CLCONTEXT* cp, const char* file, int flags = CLLD_NOW) : cp_(cp), h_(clopen(cp, file, flags))
    {
        detail::check(h_ != 0, STDCL_ENOENT, "clopen");
    }
    static program source(CLCONTEXT* cp, const char* text, int flags = CLLD_NOW)
    {
        program p;
        p.cp_ = cp;
        p.h_ = clsopen(cp, text, flags);
        detail::check(p.h_ != 0, STDCL_EBUILD, "clsopen");
        return p;
    }
    program(program&& o) noexcept : cp_(o.cp_), h_(o.h_) { o.h_ = 0; }
    program& operator=(program&& o) noexcept
    {
        if (this != &o) {
            reset();
            cp_ = o.cp_;
            h_ = o.h_;
            o.h_ = 0;
        }
        return *this;
    }
    program(const program&) = delete;
    program& operator=(const program&) = delete;
    ~program() { reset(); }

    /* The kernel `name` (clsym; owned by the program).  NULL or throws. */
    cl_kernel kernel(const char* name) const
    {
        cl_kernel k = h_ ? clsym(cp_, h_, name, CLLD_NOW) : 0;
        if (!h_) detail::check(false, STDCL_ESTATE, "clsym (the program did not open)");
        else detail::check(k != 0, STDCL_ENOENT, "clsym");
        return k;
    }
    void* handle() const noexcept { return h_; }
    CLCONTEXT* context() const noexcept { return cp_; }
    explicit operator bool() const noexcept { return h_ != 0; }
    void reset() noexcept
    {
        if (h_) clclose(cp_, h_);
        h_ = 0;
    }

private:
    CLCONTEXT* cp_;
    void* h_;
};

/* n elements of T in clmalloc memory of cp, freed with clfree.  Movable, not
 * copyable; indexes like an array. */
template <class T>
class buffer {
public:
    buffer() noexcept : cp_(0), p_(0), n_(0) {}
    buffer(CLCONTEXT* cp, size_t n, int flags = 0)
        : cp_(cp), p_(static_cast<T*>(clmalloc(cp, n * sizeof(T), flags))), n_(p_ ? n : 0)
    {
        detail::check(p_ != 0, STDCL_ENOMEM, "clmalloc");
    }
    buffer(buffer&& o) noexcept : cp_(o.cp_), p_(o.p_), n_(o.n_)
    {
        o.p_ = 0;
        o.n_ = 0;
    }
    buffer& operator=(buffer&& o) noexcept
    {
        if (this != &o) {
            reset();
            cp_ = o.cp_;
            p_ = o.p_;
            n_ = o.n_;
            o.p_ = 0;
            o.n_ = 0;
        }
        return *this;
    }
    buffer(const buffer&) = delete;
    buffer& operator=(const buffer&) = delete;
    ~buffer() { reset(); }

    T* data() const noexcept { return p_; }
    size_t size() const noexcept { return n_; }
    T& operator[](size_t i) const noexcept { return p_[i]; }
    T* begin() const noexcept { return p_; }
    T* end() const noexcept { return p_ + n_; }
    explicit operator bool() const noexcept { return p_ != 0; }

    /* clmsync to device devnum / back to the host (event flags in flags). */
    cl_event to_device(unsigned int devnum, int flags = CL_EVENT_WAIT) const
    {
        cl_event e = clmsync(cp_, devnum, p_, CL_MEM_DEVICE | flags);
        detail::check(e != 0, STDCL_ECL, "clmsync(CL_MEM_DEVICE)");
        return e;
    }
    cl_event to_host(unsigned int devnum, int flags = CL_EVENT_WAIT) const
    {
        cl_event e = clmsync(cp_, devnum, p_, CL_MEM_HOST | flags);
        detail::check(e != 0, STDCL_ECL, "clmsync(CL_MEM_HOST)");
        return e;
    }
    void reset() noexcept
    {
        if (p_) clfree(p_);
        p_ = 0;
        n_ = 0;
    }

private:
    CLCONTEXT* cp_;
    T* p_;
    size_t n_;
};

namespace detail {
template <class T>
inline const T& kernel_arg(const T& x) { return x; }
template <class T>
inline T* kernel_arg(const buffer<T>& b) { return b.data(); }
} /* namespace detail */

/* clforka with typed arguments (a buffer passes its memory).  Returns the
 * event (as clforka), NULL or throws on failure. */
template <class... A>
inline cl_event launch(CLCONTEXT* cp, unsigned int devnum, cl_kernel krn, clndrange_t ndr, int flags,
                       const A&... args)
{
    cl_event e = clforka(cp, devnum, krn, &ndr, flags, detail::kernel_arg(args)...);
    detail::check(e != 0, STDCL_ECL, "clforka");
    return e;
}

/* stdcl_wait: 0, or a negative code (or throws). */
inline int wait(CLCONTEXT* cp, unsigned int devnum, int flags = CL_ALL_EVENT)
{
    int rc = stdcl_wait(cp, devnum, flags);
    detail::check(rc == 0, rc, "clwait");
    return rc;
}

} /* namespace stdcl */

#endif /* STDCL_HPP */
