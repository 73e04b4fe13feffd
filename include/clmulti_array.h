/* SPDX-License-Identifier: MIT */
/* clmulti_array.h: clmulti_array<T, D>, a boost::multi_array<T, D> (Debian's
 * libboost-dev) whose storage is clmalloc memory, with the STDCL 1.6 members
 * COPRTHR programs call: clmattach, clmdetach, clmsync, clarg_set_global,
 * get_ptr.  Every boost::multi_array operation works.
 *
 *   clmulti_array<float, 2> aa(boost::extents[n][n]);
 *   aa.clmattach(cp);
 *   aa.clmsync(cp, 0, CL_MEM_DEVICE);
 *   aa.clarg_set_global(cp, krn, 1);
 *
 * resize() of an attached array moves it to new clmalloc storage in the same
 * context and binds every kernel argument set through clarg_set_global to it
 * (see <clmalloc_allocator.h>); clmsync it again afterwards.
 *
 * Element-wise expressions (x = a * b + sqrt(d), lower ranks repeated over
 * the trailing indices) are CLETE's: see <clete.h>.  With
 * __CLMULTI_ARRAY_FULLAUTO defined before this header, their assignment to a
 * clmulti_array runs as a generated OpenCL kernel.
 */
#ifndef STDCL_CLMULTI_ARRAY_H
#define STDCL_CLMULTI_ARRAY_H

#include <stdcl.h>
#include <clmalloc_allocator.h>

#include <boost/multi_array.hpp>

/* CLETE: where an expression assigned to a clmulti_array runs (<clete.h>). */
#ifdef __CLMULTI_ARRAY_FULLAUTO
#define STDCL_CLMULTI_ARRAY_AUTO true
#else
#define STDCL_CLMULTI_ARRAY_AUTO false
#endif
#include <clete.h>

namespace stdcl_detail {
/* Holds the allocator (and so the shared state) before the array is built. */
template <class T>
struct clmulti_array_alloc {
    clmalloc_allocator<T> alloc_;
};
} /* namespace stdcl_detail */

template <typename T, std::size_t D>
class clmulti_array : private stdcl_detail::clmulti_array_alloc<T>,
                      public boost::multi_array<T, D, clmalloc_allocator<T> > {
    typedef stdcl_detail::clmulti_array_alloc<T> holder_t;

public:
    typedef clmalloc_allocator<T> allocator_t;
    typedef boost::multi_array<T, D, allocator_t> base_t;

    clmulti_array() : holder_t(), base_t(this->alloc_) {}
    template <class ExtentList>
    explicit clmulti_array(const ExtentList& sizes) : holder_t(), base_t(sizes, this->alloc_) {}
    template <class ExtentList>
    clmulti_array(const ExtentList& sizes, const boost::general_storage_order<D>& order)
        : holder_t(), base_t(sizes, order, this->alloc_) {}
    /* A copy has its own storage and starts detached. */
    clmulti_array(const clmulti_array& o)
        : holder_t(), base_t(static_cast<const boost::multi_array_ref<T, D>&>(o), boost::c_storage_order(),
                             this->alloc_) {}
    clmulti_array& operator=(const clmulti_array& o)
    {
        base_t::operator=(o);
        return *this;
    }
    /* CLETE: a clmulti_array of the expression's extents holding its elements. */
    template <class E, bool Auto = STDCL_CLMULTI_ARRAY_AUTO,
              typename std::enable_if<stdcl_clete::is_node<E>::value, int>::type = 0>
    clmulti_array(const E& e) : holder_t(), base_t(this->alloc_)
    {
        stdcl_clete::assign<Auto>(*this, e);
    }
    /* CLETE: evaluates the expression element-wise into this array (same
     * extents, or empty: it takes them); the array may be one of its operands. */
    template <class E, bool Auto = STDCL_CLMULTI_ARRAY_AUTO,
              typename std::enable_if<stdcl_clete::is_node<E>::value, int>::type = 0>
    clmulti_array& operator=(const E& e)
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
    void* ptr() { return this->num_elements() ? (void*)this->data() : 0; }
    stdcl_detail::clmem_state& state() { return *this->alloc_.state(); }
};

#endif /* STDCL_CLMULTI_ARRAY_H */
