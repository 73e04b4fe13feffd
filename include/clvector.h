/* SPDX-License-Identifier: MIT */
/* clvector.h: clvector<T>, a std::vector<T> whose storage is clmalloc memory,
 * with the STDCL 1.6 members COPRTHR programs call (clmattach, clmdetach,
 * clmsync, clarg_set_global, get_ptr).  Every std::vector operation works.
 *
 *   clvector<float> a;
 *   for (int i = 0; i < n; ++i) a.push_back(i);
 *   a.clmattach(cp);                        // a's storage joins context cp
 *   a.clmsync(cp, 0, CL_MEM_DEVICE);        // host -> device 0
 *   a.clarg_set_global(cp, krn, 0);         // kernel argument 0 is a's storage
 *
 * Growing an attached clvector (push_back past its capacity, resize, reserve)
 * moves it to new clmalloc storage in the same context and binds every kernel
 * argument set through clarg_set_global to the new storage at once: no kernel
 * keeps the freed buffer.  The new storage's device copies are empty: clmsync
 * it again, as after any host-side change.  See <clmalloc_allocator.h>.
 *
 * The members return what the C calls return (0 or a negative code, clmsync's
 * event); clerror() says why a call failed.
 *
 * Element-wise expressions (e = a + 2.0f * sqrt(b)) are CLETE's: see
 * <clete.h>.  With __CLVECTOR_FULLAUTO defined before this header, their
 * assignment to a clvector runs as a generated OpenCL kernel.
 */
#ifndef STDCL_CLVECTOR_H
#define STDCL_CLVECTOR_H

#include <stdcl.h>
#include <clmalloc_allocator.h>

#include <vector>

/* CLETE: where an expression assigned to a clvector runs (see <clete.h>). */
#ifdef __CLVECTOR_FULLAUTO
#define STDCL_CLVECTOR_AUTO true
#else
#define STDCL_CLVECTOR_AUTO false
#endif
#include <clete.h>

template <typename T, typename A = clmalloc_allocator<T> >
class clvector : public std::vector<T, clmalloc_allocator<T> > {
public:
    typedef clmalloc_allocator<T> allocator_t;
    typedef std::vector<T, allocator_t> base_t;

    clvector() : base_t() {}
    explicit clvector(size_t n, const T& value = T()) : base_t(n, value) {}
    template <class InputIterator>
    clvector(InputIterator first, InputIterator last) : base_t(first, last) {}
    clvector(const clvector& o) : base_t(o) {}
    clvector(clvector&& o) noexcept : base_t(std::move(o)) {}
    clvector(std::initializer_list<T> il) : base_t(il) {}
    /* CLETE: a clvector holding the expression's elements. */
    template <class E, bool Auto = STDCL_CLVECTOR_AUTO,
              typename std::enable_if<stdcl_clete::is_node<E>::value, int>::type = 0>
    clvector(const E& e) : base_t()
    {
        stdcl_clete::assign<Auto>(*this, e);
    }
    clvector& operator=(const clvector& o)
    {
        base_t::operator=(o);
        return *this;
    }
    clvector& operator=(clvector&& o) noexcept
    {
        base_t::operator=(std::move(o));
        return *this;
    }
    /* CLETE: evaluates the expression element-wise into this clvector, which
     * takes its size; the clvector may be one of its operands. */
    template <class E, bool Auto = STDCL_CLVECTOR_AUTO,
              typename std::enable_if<stdcl_clete::is_node<E>::value, int>::type = 0>
    clvector& operator=(const E& e)
    {
        stdcl_clete::assign<Auto>(*this, e);
        return *this;
    }

    /* Attaches the storage (and any later storage) to cp.  0 or negative. */
    int clmattach(CLCONTEXT* cp) { return stdcl_detail::attach(state(), ptr(), cp); }
    /* Detaches it: host memory only until the next clmattach.  0 or negative. */
    int clmdetach() { return stdcl_detail::detach(state(), ptr()); }
    /* clmsync of the storage (CL_MEM_DEVICE or CL_MEM_HOST, event flags). */
    cl_event clmsync(CLCONTEXT* cp, unsigned int devnum, int flags = 0)
    {
        return ::clmsync(cp, devnum, ptr(), flags);
    }
    /* Kernel argument argnum of krn is the storage, now and after it moves. */
    int clarg_set_global(CLCONTEXT* cp, cl_kernel krn, unsigned int argnum)
    {
        return stdcl_detail::bind(state(), ptr(), cp, krn, argnum);
    }
    void* get_ptr() { return ptr(); }

private:
    friend struct stdcl_clete::access;
    void* ptr() { return this->empty() && this->capacity() == 0 ? 0 : (void*)this->data(); }
    stdcl_detail::clmem_state& state() { return *this->get_allocator().state(); }
};

#endif /* STDCL_CLVECTOR_H */
