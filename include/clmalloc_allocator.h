/* SPDX-License-Identifier: MIT */
/* clmalloc_allocator.h: a C++ allocator whose storage comes from clmalloc, for
 * the containers of <clvector.h> and <clmulti_array.h> (STDCL 1.6 names).
 *
 * Storage is allocated detached (clmalloc(0, n, CL_MEM_DETACHED)) until the
 * container is attached to a context; from then on new storage is allocated
 * in that context.  The allocator remembers the kernel arguments the
 * container was bound to (clarg_set_global through the container): when the
 * container reallocates its storage while attached (push_back past its
 * capacity, resize), every such argument is bound to the new storage at once,
 * so no kernel is left with a buffer that was freed.  The new storage's
 * device copies hold nothing yet: clmsync it to the devices again, as after
 * any host-side change.
 *
 * Copies of an allocator share that state (a container and its allocator
 * copies are one); a copied container gets a fresh, detached state.
 * Allocation failure throws std::bad_alloc (the allocator requirements);
 * clerror() says why.  Not thread safe: one container, one thread at a time.
 */
#ifndef STDCL_CLMALLOC_ALLOCATOR_H
#define STDCL_CLMALLOC_ALLOCATOR_H

#include <stdcl.h>

#include <cstddef>
#include <memory>
#include <new>
#include <vector>

namespace stdcl_detail {

/* What a container and its allocator copies share. */
struct clmem_state {
    CLCONTEXT* cp = nullptr; /* attached context, or NULL: detached */
    void* storage = nullptr; /* the container's current storage */
    struct binding {
        CLCONTEXT* cp;
        cl_kernel krn;
        unsigned int argnum;
    };
    std::vector<binding> bindings; /* kernel arguments bound to the storage */

    /* Binds every remembered argument to the current storage; an argument
     * whose kernel is gone (its program closed) is forgotten. */
    void rebind()
    {
        size_t keep = 0;
        for (size_t i = 0; i < bindings.size(); ++i)
            if (storage && stdcl_arg_set_global(bindings[i].cp, bindings[i].krn, bindings[i].argnum, storage) == 0)
                bindings[keep++] = bindings[i];
        bindings.resize(keep);
    }
};

} /* namespace stdcl_detail */

template <class T>
class clmalloc_allocator {
public:
    typedef T value_type;
    typedef T* pointer;
    typedef const T* const_pointer;
    typedef T& reference;
    typedef const T& const_reference;
    typedef std::size_t size_type;
    typedef std::ptrdiff_t difference_type;
    typedef std::true_type propagate_on_container_move_assignment;
    typedef std::true_type propagate_on_container_swap;
    template <class U>
    struct rebind {
        typedef clmalloc_allocator<U> other;
    };

    clmalloc_allocator() : st_(std::make_shared<stdcl_detail::clmem_state>()) {}
    template <class U>
    clmalloc_allocator(const clmalloc_allocator<U>& o) noexcept : st_(o.state()) {}

    /* A copied container starts detached, with no bound arguments. */
    clmalloc_allocator select_on_container_copy_construction() const { return clmalloc_allocator(); }

    T* allocate(std::size_t n, const void* = 0)
    {
        if (n == 0) n = 1;
        if (n > std::size_t(-1) / sizeof(T)) throw std::bad_alloc();
        stdcl_detail::clmem_state& s = *st_;
        void* p = s.cp ? clmalloc(s.cp, n * sizeof(T), 0) : clmalloc(0, n * sizeof(T), CL_MEM_DETACHED);
        if (!p) throw std::bad_alloc();
        s.storage = p;
        s.rebind();
        return static_cast<T*>(p);
    }

    void deallocate(T* p, std::size_t) noexcept
    {
        if (st_->storage == p) st_->storage = nullptr;
        clfree(p);
    }

    template <class U, class... A>
    void construct(U* p, A&&... a) { ::new ((void*)p) U(std::forward<A>(a)...); }
    template <class U>
    void destroy(U* p) { p->~U(); }
    std::size_t max_size() const noexcept { return std::size_t(-1) / sizeof(T); }

    const std::shared_ptr<stdcl_detail::clmem_state>& state() const noexcept { return st_; }

    template <class U>
    bool operator==(const clmalloc_allocator<U>& o) const noexcept { return st_ == o.state(); }
    template <class U>
    bool operator!=(const clmalloc_allocator<U>& o) const noexcept { return st_ != o.state(); }

private:
    std::shared_ptr<stdcl_detail::clmem_state> st_;
};

namespace stdcl_detail {

/* The STDCL members of clvector and clmulti_array, over their storage `data`
 * (NULL while empty) and shared state. */
inline int attach(clmem_state& s, void* data, CLCONTEXT* cp)
{
    if (!cp) return STDCL_EINVAL;
    if (s.cp == cp) return 0;
    if (s.cp && data) {
        int rc = clmdetach(data);
        if (rc < 0) return rc;
    }
    s.cp = nullptr;
    if (data) {
        int rc = clmattach(cp, data);
        if (rc < 0) return rc;
    }
    s.cp = cp;
    s.storage = data;
    s.rebind();
    return 0;
}

inline int detach(clmem_state& s, void* data)
{
    if (!s.cp) return 0;
    if (data) {
        int rc = clmdetach(data);
        if (rc < 0) return rc;
    }
    s.cp = nullptr;
    return 0;
}

inline int bind(clmem_state& s, void* data, CLCONTEXT* cp, cl_kernel krn, unsigned int argnum)
{
    int rc = stdcl_arg_set_global(cp, krn, argnum, data);
    if (rc < 0) return rc;
    for (size_t i = 0; i < s.bindings.size(); ++i)
        if (s.bindings[i].krn == krn && s.bindings[i].argnum == argnum) {
            s.bindings[i].cp = cp;
            return 0;
        }
    clmem_state::binding b = {cp, krn, argnum};
    s.bindings.push_back(b);
    return 0;
}

} /* namespace stdcl_detail */

#endif /* STDCL_CLMALLOC_ALLOCATOR_H */
