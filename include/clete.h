/* SPDX-License-Identifier: MIT */
/* clete.h: CLETE, element-wise expression templates over clvector<T> and
 * clmulti_array<T, D> (STDCL 1.6 / COPRTHR names).  <clvector.h> and
 * <clmulti_array.h> include it; a program does not need to.
 *
 *   clvector<float> a, b, c;                  // filled by push_back ...
 *   c = a + 2.0f * sqrt(b) - a * cos(b);      // one pass, no temporaries
 *
 * Operands: clvector, clmulti_array and expressions of them, of the same or
 * of lower rank, and scalars (either side of + - * /, pow, fmin, fmax,
 * atan2, fmod, hypot).  Operators: binary + - * /, unary - and +.
 * Functions (floating-point elements only): sqrt cbrt exp exp2 expm1 log log2
 * log10 log1p fabs abs sin cos tan asin acos atan sinh cosh tanh floor ceil
 * round trunc, and pow fmin fmax atan2 fmod hypot of two operands.
 * Elements: float, double and the integer types (not bool); a scalar beside a
 * floating-point expression takes the expression's type (2.0 * a stays
 * float for float a), beside an integer expression it promotes as C++ does.
 *
 * Shapes.  An operand of lower rank is repeated over the trailing indices of
 * the other: in a 4-D expression a(i) b(i,j) c(i,j,k) d(i,j,k,l), so their
 * leading extents must agree.  Operands that disagree (clvectors of
 * different sizes, leading extents that differ) are a programming error:
 * building the expression throws std::invalid_argument naming both shapes.
 * Elements are matched by position (index bases are ignored); a
 * clmulti_array operand must have C storage order (boost's default), or
 * std::invalid_argument.
 *
 * Assignment (clvector = expr, clmulti_array = expr, or a constructor from
 * an expression) evaluates every element once, reading all operands at an
 * index before writing the result there, so the result may be an operand
 * (a = a + log(fabs(e))).  A clvector takes the expression's size (as
 * vector assignment does); a clmulti_array must have the expression's
 * extents, unless it is empty, when it takes them (else
 * std::invalid_argument).  The rank of the expression must be the
 * container's (a compile-time error otherwise).
 *
 * Where it runs.  By default on the host, in one loop.  With
 * __CLVECTOR_FULLAUTO (for clvector results) or __CLMULTI_ARRAY_FULLAUTO
 * (clmulti_array results) defined before the header is included, the
 * assignment generates an OpenCL kernel for the expression, builds it once
 * per expression type and context (a thread-safe cache; the source's own
 * libstdcl program cache holds the binary across runs), and runs it on
 * device 0 of stdgpu, or of stdcpu when there is no GPU: clmsync of the
 * operands to the device, the kernel, clmsync of the result back, all
 * waited, so host code reading the result afterwards sees it.  To choose:
 * STDCL_CLETE=gpu|cpu|dev|acc|host in the environment (read once;
 * host: never a kernel), or stdcl_clete::set_context(cp, devnum) in the
 * program (NULL: back to the default; call it again after destroying a
 * context it named).  FULLAUTO attaches operands and result that are
 * detached to that context and leaves them attached (clmdetach() undoes it;
 * every std::vector and multi_array operation keeps working attached).
 *
 * When the kernel cannot run (no context, an operand attached to another
 * context, the build or an attachment failed), the same assignment is
 * evaluated on the host, so the result is right either way; clerror() then
 * says why (stdcl_clete::last_reason() too).  STDCL_LOG_AUTOKERN or
 * COPRTHR_LOG_AUTOKERN set (not "" or "0") prints on stderr each generated
 * kernel once, when it is built, a line per kernel run and a line per host
 * evaluation with its reason.  A failure after the kernel was launched (the
 * read-back) throws std::runtime_error when the result is also an operand
 * (its old values may be gone), else the host evaluates it.
 *
 * Thread safety: expressions of different containers may be assigned from
 * several threads at once; one container, one thread at a time (as for
 * clvector itself).
 */
#ifndef STDCL_CLETE_H
#define STDCL_CLETE_H

#include <stdcl.h>
#include <clmalloc_allocator.h>

#include <array>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

template <typename T, typename A> class clvector;
template <typename T, std::size_t D> class clmulti_array;

namespace stdcl_clete {

/* ------------------------------------------------------------------------ */
/* Element types and their OpenCL C names                                     */
/* ------------------------------------------------------------------------ */

template <class T>
struct is_element
    : std::integral_constant<bool, (std::is_integral<T>::value && !std::is_same<T, bool>::value) ||
                                       std::is_same<T, float>::value || std::is_same<T, double>::value> {};

template <class T>
inline const char* cl_name()
{
    static_assert(is_element<T>::value, "CLETE: not an element type");
    if (std::is_same<T, float>::value) return "float";
    if (std::is_same<T, double>::value) return "double";
    static const char* const s[] = {"char", "short", "int", "long"};
    static const char* const u[] = {"uchar", "ushort", "uint", "ulong"};
    int k = sizeof(T) == 1 ? 0 : sizeof(T) == 2 ? 1 : sizeof(T) == 4 ? 2 : 3;
    return std::is_signed<T>::value ? s[k] : u[k];
}

/* ------------------------------------------------------------------------ */
/* Shapes                                                                     */
/* ------------------------------------------------------------------------ */

template <std::size_t R>
using extents_t = std::array<std::size_t, R>;

template <std::size_t R>
inline std::string shape_str(const extents_t<R>& e, bool bare = false)
{
    if (R == 1 && bare) return std::to_string(e[0]);
    std::string s;
    for (std::size_t k = 0; k < R; ++k) s += "[" + std::to_string(e[k]) + "]";
    return s;
}

/* The extents of an expression of operands with extents x (rank RX) and y
 * (rank RY): the longer, once the leading min(RX, RY) agree. */
template <std::size_t RX, std::size_t RY>
inline extents_t<(RX > RY ? RX : RY)> merge(const extents_t<RX>& x, const extents_t<RY>& y)
{
    constexpr std::size_t lo = RX < RY ? RX : RY;
    for (std::size_t k = 0; k < lo; ++k)
        if (x[k] != y[k]) {
            if (RX == 1 && RY == 1)
                throw std::invalid_argument("CLETE: operand sizes " + shape_str<RX>(x, true) + " and " + shape_str<RY>(y, true) +
                                            " differ");
            throw std::invalid_argument("CLETE: operand extents " + shape_str<RX>(x) + " and " + shape_str<RY>(y) +
                                        " disagree in dimension " + std::to_string(k));
        }
    extents_t<(RX > RY ? RX : RY)> r{};
    if (RX >= RY)
        for (std::size_t k = 0; k < RX; ++k) r[k] = x[k];
    else
        for (std::size_t k = 0; k < RY; ++k) r[k] = y[k];
    return r;
}

/* ------------------------------------------------------------------------ */
/* Kernel generation and arguments                                            */
/* ------------------------------------------------------------------------ */

/* The kernel text of an expression type, built by walking the type. */
struct gen {
    std::string params; /* ", __global const float* a0, float s1, ..." */
    int next = 0;
    bool fp64 = false;
    template <class T>
    const char* type()
    {
        if (std::is_same<T, double>::value) fp64 = true;
        return cl_name<T>();
    }
};

/* The kernel's arguments after the result and n, in the same order. */
struct args_t {
    std::vector<std::size_t> sizes;
    std::vector<const void*> values;
    std::deque<std::array<unsigned char, 16> > store;
    bool narrow = false; /* the kernel's idx_t is uint (else ulong) */
    template <class V>
    void push(const V& v)
    {
        static_assert(sizeof(V) <= 16, "CLETE: argument too large");
        store.emplace_back();
        std::memcpy(store.back().data(), &v, sizeof v);
        sizes.push_back(sizeof v);
        values.push_back(store.back().data());
    }
    /* An element count or index, as the kernel's idx_t. */
    void push_index(std::size_t v)
    {
        if (narrow) push((cl_uint)v);
        else push((cl_ulong)v);
    }
};

/* A container operand, as the device path sees it. */
struct operand_ref {
    void* data;
    std::size_t bytes;
    stdcl_detail::clmem_state* st;
};

/* ------------------------------------------------------------------------ */
/* Nodes                                                                      */
/* ------------------------------------------------------------------------ */

/* Every node has value_type, rank, extents ext, and
 *   at<RR>(i, tail):  its value at flat index i of a result of rank RR,
 *                     tail[k] = ext[k] * ... * ext[RR-1] of the result;
 *   code<RR>(g):      its OpenCL C text (declaring its parameters in g);
 *   args<RR>(a, tail), operands(v): its kernel arguments, its containers. */
struct node_base {};

template <class T, std::size_t R>
struct leaf : node_base {
    typedef T value_type;
    static constexpr std::size_t rank = R;
    extents_t<R> ext;
    const T* p;
    stdcl_detail::clmem_state* st;

    template <std::size_t RR>
    T at(std::size_t i, const std::size_t* tail) const
    {
        if constexpr (R == RR) {
            (void)tail;
            return p[i];
        } else {
            return p[i / tail[R]];
        }
    }
    template <std::size_t RR>
    static std::string code(gen& g)
    {
        std::string a = "a" + std::to_string(g.next++);
        g.params += std::string(", __global const ") + g.type<T>() + "* " + a;
        if (R == RR) return a + "[i]";
        std::string t = "t" + std::to_string(g.next++);
        g.params += ", idx_t " + t;
        return a + "[i / " + t + "]";
    }
    template <std::size_t RR>
    void args(args_t& a, const std::size_t* tail) const
    {
        a.push((const void*)p);
        if (R != RR) a.push_index(tail[R]);
    }
    void operands(std::vector<operand_ref>& v) const
    {
        std::size_t n = 1;
        for (std::size_t k = 0; k < R; ++k) n *= ext[k];
        v.push_back(operand_ref{(void*)p, n * sizeof(T), st});
    }
};

template <class T>
struct scalar : node_base {
    typedef T value_type;
    static constexpr std::size_t rank = 0;
    extents_t<0> ext{};
    T v;
    explicit scalar(T x) : v(x) {}

    template <std::size_t RR>
    T at(std::size_t, const std::size_t*) const { return v; }
    template <std::size_t RR>
    static std::string code(gen& g)
    {
        std::string s = "s" + std::to_string(g.next++);
        g.params += std::string(", ") + g.type<T>() + " " + s;
        return s;
    }
    template <std::size_t RR>
    void args(args_t& a, const std::size_t*) const { a.push(v); }
    void operands(std::vector<operand_ref>&) const {}
};

template <class Op, class A>
struct unary : node_base {
    typedef typename Op::template result<typename A::value_type>::type value_type;
    static constexpr std::size_t rank = A::rank;
    extents_t<rank> ext;
    A a;
    explicit unary(const A& x) : ext(x.ext), a(x) {}

    template <std::size_t RR>
    value_type at(std::size_t i, const std::size_t* tail) const
    {
        return Op::apply(a.template at<RR>(i, tail));
    }
    template <std::size_t RR>
    static std::string code(gen& g) { return Op::code(A::template code<RR>(g)); }
    template <std::size_t RR>
    void args(args_t& x, const std::size_t* tail) const { a.template args<RR>(x, tail); }
    void operands(std::vector<operand_ref>& v) const { a.operands(v); }
};

template <class Op, class A, class B>
struct binary : node_base {
    typedef typename Op::template result<typename A::value_type, typename B::value_type>::type value_type;
    static constexpr std::size_t rank = A::rank > B::rank ? A::rank : B::rank;
    extents_t<rank> ext;
    A a;
    B b;
    binary(const A& x, const B& y) : ext(merge<A::rank, B::rank>(x.ext, y.ext)), a(x), b(y) {}

    template <std::size_t RR>
    value_type at(std::size_t i, const std::size_t* tail) const
    {
        return Op::template apply<value_type>(a.template at<RR>(i, tail), b.template at<RR>(i, tail));
    }
    template <std::size_t RR>
    static std::string code(gen& g)
    {
        std::string x = A::template code<RR>(g);
        std::string y = B::template code<RR>(g);
        return Op::code(x, y, g.type<value_type>());
    }
    template <std::size_t RR>
    void args(args_t& x, const std::size_t* tail) const
    {
        a.template args<RR>(x, tail);
        b.template args<RR>(x, tail);
    }
    void operands(std::vector<operand_ref>& v) const
    {
        a.operands(v);
        b.operands(v);
    }
};

/* ------------------------------------------------------------------------ */
/* Operations                                                                 */
/* ------------------------------------------------------------------------ */

#define STDCL_CLETE_INFIX(tag, op)                                                          \
    struct tag {                                                                            \
        template <class X, class Y>                                                         \
        struct result {                                                                     \
            typedef decltype(std::declval<X>() op std::declval<Y>()) type;                  \
        };                                                                                  \
        template <class V, class X, class Y>                                                \
        static V apply(X x, Y y) { return x op y; }                                         \
        static std::string code(const std::string& x, const std::string& y, const char*)   \
        {                                                                                   \
            return "(" + x + " " #op " " + y + ")";                                         \
        }                                                                                   \
    };
STDCL_CLETE_INFIX(op_add, +)
STDCL_CLETE_INFIX(op_sub, -)
STDCL_CLETE_INFIX(op_mul, *)
STDCL_CLETE_INFIX(op_div, /)
#undef STDCL_CLETE_INFIX

/* Two-operand functions: both operands converted to the common type. */
#define STDCL_CLETE_FN2(fn)                                                                  \
    struct fn2_##fn {                                                                        \
        template <class X, class Y>                                                          \
        struct result {                                                                      \
            typedef typename std::common_type<X, Y>::type type;                              \
        };                                                                                   \
        template <class V, class X, class Y>                                                 \
        static V apply(X x, Y y) { return std::fn(static_cast<V>(x), static_cast<V>(y)); }  \
        static std::string code(const std::string& x, const std::string& y, const char* t)  \
        {                                                                                    \
            return std::string(#fn "((") + t + ")" + x + ", (" + t + ")" + y + ")";          \
        }                                                                                    \
    };
STDCL_CLETE_FN2(pow)
STDCL_CLETE_FN2(fmin)
STDCL_CLETE_FN2(fmax)
STDCL_CLETE_FN2(atan2)
STDCL_CLETE_FN2(fmod)
STDCL_CLETE_FN2(hypot)
#undef STDCL_CLETE_FN2

struct op_neg {
    template <class X>
    struct result {
        typedef decltype(-std::declval<X>()) type;
    };
    template <class X>
    static auto apply(X x) { return -x; }
    static std::string code(const std::string& x) { return "(-" + x + ")"; }
};

struct op_pos {
    template <class X>
    struct result {
        typedef decltype(+std::declval<X>()) type;
    };
    template <class X>
    static auto apply(X x) { return +x; }
    static std::string code(const std::string& x) { return "(+" + x + ")"; }
};

/* One-operand functions (the OpenCL name, the <cmath> function). */
#define STDCL_CLETE_FN1(name, clname, cxxfn)                                                 \
    struct fn1_##name {                                                                      \
        template <class X>                                                                   \
        struct result {                                                                      \
            typedef X type;                                                                  \
        };                                                                                   \
        template <class X>                                                                   \
        static X apply(X x) { return std::cxxfn(x); }                                        \
        static std::string code(const std::string& x) { return #clname "(" + x + ")"; }     \
    };
#define STDCL_CLETE_FN1_LIST(X) \
    X(sqrt, sqrt, sqrt) X(cbrt, cbrt, cbrt) X(exp, exp, exp) X(exp2, exp2, exp2) X(expm1, expm1, expm1) \
    X(log, log, log) X(log2, log2, log2) X(log10, log10, log10) X(log1p, log1p, log1p)                  \
    X(fabs, fabs, fabs) X(abs, fabs, fabs) X(sin, sin, sin) X(cos, cos, cos) X(tan, tan, tan)          \
    X(asin, asin, asin) X(acos, acos, acos) X(atan, atan, atan) X(sinh, sinh, sinh)                    \
    X(cosh, cosh, cosh) X(tanh, tanh, tanh) X(floor, floor, floor) X(ceil, ceil, ceil)                 \
    X(round, round, round) X(trunc, trunc, trunc)
STDCL_CLETE_FN1_LIST(STDCL_CLETE_FN1)
#undef STDCL_CLETE_FN1

/* ------------------------------------------------------------------------ */
/* Operands                                                                   */
/* ------------------------------------------------------------------------ */

/* Access to the containers' storage and shared state (a friend of both). */
struct access {
    template <class T, class A>
    static leaf<T, 1> make(const clvector<T, A>& v)
    {
        leaf<T, 1> l;
        l.ext[0] = v.size();
        l.p = v.data();
        l.st = const_cast<clvector<T, A>&>(v).get_allocator().state().get();
        return l;
    }
    template <class T, std::size_t D>
    static leaf<T, D> make(const clmulti_array<T, D>& m)
    {
        for (std::size_t k = 0; k < D; ++k)
            if (m.storage_order().ordering(k) != D - 1 - k || !m.storage_order().ascending(k))
                throw std::invalid_argument("CLETE: a clmulti_array operand is not in C storage order");
        leaf<T, D> l;
        for (std::size_t k = 0; k < D; ++k) l.ext[k] = m.shape()[k];
        l.p = m.data();
        l.st = &const_cast<clmulti_array<T, D>&>(m).state();
        return l;
    }
};

/* What an operand is: a node (as is), a container (a leaf), else nothing. */
template <class X, class = void>
struct operand_traits {
    static constexpr bool value = false;
};
/* The node templates (matched by pattern: no other type is looked into). */
template <class X>
struct is_node : std::false_type {};
template <class T, std::size_t R>
struct is_node<leaf<T, R> > : std::true_type {};
template <class T>
struct is_node<scalar<T> > : std::true_type {};
template <class Op, class A>
struct is_node<unary<Op, A> > : std::true_type {};
template <class Op, class A, class B>
struct is_node<binary<Op, A, B> > : std::true_type {};

template <class X>
struct operand_traits<X, typename std::enable_if<is_node<X>::value>::type> {
    static constexpr bool value = true;
    typedef X node;
    static const X& make(const X& x) { return x; }
};
template <class T, class A>
struct operand_traits<clvector<T, A>, typename std::enable_if<is_element<T>::value>::type> {
    static constexpr bool value = true;
    typedef leaf<T, 1> node;
    static node make(const clvector<T, A>& x) { return access::make(x); }
};
template <class T, std::size_t D>
struct operand_traits<clmulti_array<T, D>, typename std::enable_if<is_element<T>::value && (D > 0)>::type> {
    static constexpr bool value = true;
    typedef leaf<T, D> node;
    static node make(const clmulti_array<T, D>& x) { return access::make(x); }
};

template <class X>
constexpr bool is_operand_v = operand_traits<typename std::decay<X>::type>::value;
template <class X>
constexpr bool is_scalar_v = is_element<typename std::decay<X>::type>::value;

template <class X>
using node_t = typename operand_traits<typename std::decay<X>::type>::node;

template <class X>
node_t<X> to_node(const X& x)
{
    return operand_traits<typename std::decay<X>::type>::make(x);
}

/* The type a scalar takes beside an expression of element type E. */
template <class E, class S>
using scalar_type_t =
    typename std::conditional<std::is_floating_point<E>::value, E, typename std::common_type<E, S>::type>::type;

/* The node of the operand x of a binary operation whose other operand is y. */
template <class X, class Y, class = void>
struct side;
template <class X, class Y>
struct side<X, Y, typename std::enable_if<is_operand_v<X> >::type> {
    typedef node_t<X> type;
    static type make(const X& x) { return to_node(x); }
};
template <class X, class Y>
struct side<X, Y, typename std::enable_if<!is_operand_v<X> && is_scalar_v<X> && is_operand_v<Y> >::type> {
    typedef scalar<scalar_type_t<typename node_t<Y>::value_type, X> > type;
    static type make(const X& x) { return type(static_cast<typename type::value_type>(x)); }
};

/* Both operands usable, at least one of them not a scalar. */
template <class X, class Y>
constexpr bool binary_ok_v = (is_operand_v<X> && (is_operand_v<Y> || is_scalar_v<Y>)) ||
                             (is_scalar_v<X> && is_operand_v<Y>);

template <class Op, class X, class Y>
using binary_t = binary<Op, typename side<X, Y>::type, typename side<Y, X>::type>;

template <class Op, class X, class Y>
binary_t<Op, X, Y> make_binary(const X& x, const Y& y)
{
    return binary_t<Op, X, Y>(side<X, Y>::make(x), side<Y, X>::make(y));
}

template <class X, class = void>
struct float_unary : std::false_type {};
template <class X>
struct float_unary<X, typename std::enable_if<is_operand_v<X> >::type>
    : std::integral_constant<bool, std::is_floating_point<typename node_t<X>::value_type>::value> {};

template <class X, class Y, class = void>
struct float_binary : std::false_type {};
template <class X, class Y>
struct float_binary<X, Y, typename std::enable_if<binary_ok_v<X, Y> >::type>
    : std::integral_constant<bool, std::is_floating_point<typename binary_t<op_add, X, Y>::value_type>::value> {};

/* ------------------------------------------------------------------------ */
/* Evaluation                                                                 */
/* ------------------------------------------------------------------------ */

inline bool log_on()
{
    static const bool on = [] {
        for (const char* name : {"STDCL_LOG_AUTOKERN", "COPRTHR_LOG_AUTOKERN"}) {
            const char* v = std::getenv(name);
            if (v && *v && std::strcmp(v, "0") != 0) return true;
        }
        return false;
    }();
    return on;
}

inline std::string& reason_slot()
{
    static thread_local std::string r;
    return r;
}

/* Why the last assignment of this thread ran on the host ("" if it ran a
 * kernel or FULLAUTO was off). */
inline const char* last_reason() { return reason_slot().c_str(); }

struct target {
    CLCONTEXT* cp;
    unsigned devnum;
    unsigned epoch;
};

struct context_choice {
    std::mutex mu;
    bool set = false;
    CLCONTEXT* cp = nullptr;
    unsigned devnum = 0;
    unsigned epoch = 0;
};
inline context_choice& choice()
{
    static context_choice c;
    return c;
}

/* Runs FULLAUTO kernels on device devnum of cp (NULL: the default, stdgpu
 * else stdcpu, or STDCL_CLETE).  Kernels built for earlier choices are
 * forgotten.  Thread safe. */
inline void set_context(CLCONTEXT* cp, unsigned devnum = 0)
{
    context_choice& c = choice();
    std::lock_guard<std::mutex> lock(c.mu);
    c.set = cp != nullptr;
    c.cp = cp;
    c.devnum = devnum;
    ++c.epoch;
}

inline const char* context_name(CLCONTEXT* cp)
{
    if (cp && cp == stdgpu) return "stdgpu";
    if (cp && cp == stdcpu) return "stdcpu";
    if (cp && cp == stddev) return "stddev";
    if (cp && cp == stdacc) return "stdacc";
    return "the context of set_context";
}

/* The context and device to run on, or cp NULL with the reason. */
inline target pick(std::string& why)
{
    context_choice& c = choice();
    std::lock_guard<std::mutex> lock(c.mu);
    if (c.set) return target{c.cp, c.devnum, c.epoch};
    const char* v = std::getenv("STDCL_CLETE");
    std::string want = v ? v : "";
    CLCONTEXT* cp = nullptr;
    if (want == "host") {
        why = "STDCL_CLETE=host";
    } else if (want == "gpu" || want == "cpu" || want == "dev" || want == "acc") {
        cp = want == "gpu" ? stdgpu : want == "cpu" ? stdcpu : want == "dev" ? stddev : stdacc;
        if (!cp) why = "STDCL_CLETE=" + want + ", and std" + want + " is NULL";
    } else {
        if (!want.empty())
            why = "STDCL_CLETE='" + want + "' is not gpu, cpu, dev, acc or host; ";
        cp = stdgpu ? stdgpu : stdcpu;
        if (!cp) why += "there is no context: stdgpu and stdcpu are NULL";
        else why.clear();
    }
    return target{cp, 0, c.epoch};
}

inline std::atomic<bool>& wide_slot()
{
    static std::atomic<bool> w{false};
    return w;
}

/* With true, FULLAUTO kernels index with ulong even where every index fits in
 * 32 bits (as they must past 2^32 elements): to test or compare that form.
 * Thread safe. */
inline void force_wide_indices(bool on) { wide_slot().store(on); }

/* The built kernel of one expression type in one context. */
struct kernel_entry {
    CLCONTEXT* cp;
    unsigned epoch;
    bool narrow;       /* idx_t is uint */
    cl_kernel krn;     /* NULL: the build failed, why says why */
    std::string why;
};

template <class Key>
struct kernel_cache {
    static inline std::mutex mu; /* held while the kernel's arguments are set and it runs */
    static inline std::vector<kernel_entry> entries;
};

/* The kernel of an expression.  Its indices are idx_t: uint when narrow (every
 * index fits in 32 bits: the divisions that map an index of the result to one
 * of a lower-rank operand cost a fraction of 64-bit ones, on GPUs and in
 * PoCL's vectorised code), else ulong. */
template <class T, std::size_t RR, class E>
inline std::string kernel_source(bool narrow)
{
    gen g;
    std::string body = E::template code<RR>(g);
    const char* t = g.type<T>();
    std::string s;
    if (g.fp64) s += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
    s += narrow ? "typedef uint idx_t;\n" : "typedef ulong idx_t;\n";
    s += "__kernel void clete_kernel(__global ";
    s += t;
    s += "* r, idx_t n";
    s += g.params;
    s += ")\n{\n    idx_t i = (idx_t)get_global_id(0);\n    if (i < n) r[i] = (";
    s += t;
    s += ")";
    s += body;
    s += ";\n}\n";
    return s;
}

template <std::size_t RR>
inline void tails(const extents_t<RR>& ext, std::size_t* tail)
{
    tail[RR] = 1;
    for (std::size_t k = RR; k-- > 0;) tail[k] = tail[k + 1] * ext[k];
}

template <class T, std::size_t RR, class E>
inline void eval_host(T* out, const E& e, const std::size_t* tail)
{
    const std::size_t n = tail[0];
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<T>(e.template at<RR>(i, tail));
}

/* Records why the host evaluates, for clerror() and the log. */
inline void host_because(const std::string& why)
{
    reason_slot() = why;
    std::string msg = "CLETE: evaluated on the host: " + why;
    stdcl_seterror(msg.c_str());
    if (log_on()) std::fprintf(stderr, "clete: host evaluation: %s\n", why.c_str());
}

inline std::string clerror_text(const char* what)
{
    const char* e = clerror();
    return std::string(what) + (e ? ": " + std::string(e) : std::string());
}

/* The FULLAUTO path: true when the kernel ran and the result is back on the
 * host, false (with the reason recorded) when the host must evaluate. */
template <class T, std::size_t RR, class E>
inline bool eval_device(T* out, stdcl_detail::clmem_state* out_st, const E& e, const std::size_t* tail)
{
    const std::size_t n = tail[0];
    std::string why;
    target tg = pick(why);
    if (!tg.cp) {
        host_because(why);
        return false;
    }
    std::vector<operand_ref> ops;
    e.operands(ops);
    bool aliased = false;
    for (const operand_ref& o : ops) aliased = aliased || o.data == (void*)out;
    ops.push_back(operand_ref{(void*)out, n * sizeof(T), out_st});
    for (const operand_ref& o : ops) {
        if (o.st->cp == tg.cp) continue;
        if (o.st->cp) {
            host_because("an operand is attached to another context than " + std::string(context_name(tg.cp)));
            return false;
        }
        if (stdcl_detail::attach(*o.st, o.data, tg.cp) < 0) {
            host_because(clerror_text("clmattach of an operand failed"));
            return false;
        }
    }

    typedef kernel_cache<E (*)(T, std::integral_constant<std::size_t, RR>)> cache;
    std::lock_guard<std::mutex> lock(cache::mu);
    const bool narrow = n <= 0xffffffffu && !wide_slot().load(); /* every index and tail is at most n */
    kernel_entry* ke = nullptr;
    for (kernel_entry& k : cache::entries)
        if (k.cp == tg.cp && k.epoch == tg.epoch && k.narrow == narrow) ke = &k;
    if (!ke) {
        std::string src = kernel_source<T, RR, E>(narrow);
        if (log_on())
            std::fprintf(stderr, "clete: building kernel for %s:\n%sclete: end of kernel\n", context_name(tg.cp),
                         src.c_str());
        kernel_entry k{tg.cp, tg.epoch, narrow, nullptr, std::string()};
        void* h = clsopen_named(tg.cp, src.c_str(), "clete_kernel", CLLD_NOW);
        if (!h) k.why = clerror_text("building the kernel failed");
        else if (!(k.krn = clsym(tg.cp, h, "clete_kernel", 0))) k.why = clerror_text("clsym of the kernel failed");
        cache::entries.push_back(k);
        ke = &cache::entries.back();
    }
    if (!ke->krn) {
        host_because(ke->why);
        return false;
    }

    ops.pop_back(); /* the result: written whole by the kernel */
    for (std::size_t k = 0; k < ops.size(); ++k) {
        bool seen = false; /* an operand used twice is synced once */
        for (std::size_t j = 0; j < k; ++j) seen = seen || ops[j].data == ops[k].data;
        if (!seen && !clmsyncn(tg.cp, tg.devnum, ops[k].data, ops[k].bytes, CL_MEM_DEVICE | CL_EVENT_WAIT)) {
            host_because(clerror_text("clmsync of an operand to the device failed"));
            return false;
        }
    }
    args_t a;
    a.narrow = narrow;
    a.push((const void*)out);
    a.push_index(n);
    e.template args<RR>(a, tail);
    const std::size_t group = 64;
    clndrange_t ndr = clndrange_init1d(0, (n + group - 1) / group * group, 0);
    if (!stdcl_forkv(tg.cp, tg.devnum, ke->krn, &ndr, CL_EVENT_WAIT, (int)a.sizes.size(), a.sizes.data(),
                     a.values.data())) {
        host_because(clerror_text("the kernel did not run"));
        return false;
    }
    if (!clmsyncn(tg.cp, tg.devnum, out, n * sizeof(T), CL_MEM_HOST | CL_EVENT_WAIT)) {
        std::string why2 = clerror_text("clmsync of the result to the host failed");
        if (aliased) {
            stdcl_seterror(("CLETE: " + why2).c_str());
            throw std::runtime_error("CLETE: " + why2 + " (the result is an operand: its old values may be gone)");
        }
        host_because(why2);
        return false;
    }
    reason_slot().clear();
    if (log_on())
        std::fprintf(stderr, "clete: ran kernel on %s device %u (%zu elements)\n", context_name(tg.cp), tg.devnum,
                     n);
    return true;
}

/* Evaluates e into out (tail[0] elements, the result's shape). */
template <bool Auto, class T, std::size_t RR, class E>
inline void evaluate(T* out, stdcl_detail::clmem_state* out_st, const E& e, const std::size_t* tail)
{
    if (tail[0] == 0) return;
    if constexpr (Auto) {
        if (eval_device<T, RR, E>(out, out_st, e, tail)) return;
    } else {
        (void)out_st;
    }
    eval_host<T, RR, E>(out, e, tail);
}

/* clvector = expression. */
template <bool Auto, class T, class A, class X>
inline void assign(clvector<T, A>& v, const X& x)
{
    typedef node_t<X> E;
    static_assert(E::rank == 1, "CLETE: a clvector is assigned an expression of rank 1");
    E e = to_node(x); /* copies the leaves: their data pointers are read before v changes */
    if (v.size() != e.ext[0]) v.resize(e.ext[0]);
    std::size_t tail[2];
    tails<1>(e.ext, tail);
    evaluate<Auto, T, 1, E>(v.data(), access::make(v).st, e, tail);
}

/* clmulti_array = expression. */
template <bool Auto, class T, std::size_t D, class X>
inline void assign(clmulti_array<T, D>& m, const X& x)
{
    typedef node_t<X> E;
    static_assert(E::rank == D, "CLETE: a clmulti_array<T, D> is assigned an expression of rank D");
    E e = to_node(x);
    extents_t<D> have;
    for (std::size_t k = 0; k < D; ++k) have[k] = m.shape()[k];
    if (m.num_elements() == 0) {
        std::array<std::size_t, D> want;
        for (std::size_t k = 0; k < D; ++k) want[k] = e.ext[k];
        m.resize(want);
    } else if (have != e.ext) {
        throw std::invalid_argument("CLETE: a clmulti_array of extents " + shape_str<D>(have) +
                                    " is assigned an expression of extents " + shape_str<D>(e.ext));
    }
    leaf<T, D> out = access::make(m); /* checks the storage order */
    std::size_t tail[D + 1];
    tails<D>(e.ext, tail);
    evaluate<Auto, T, D, E>(m.data(), out.st, e, tail);
}

} /* namespace stdcl_clete */

/* ------------------------------------------------------------------------ */
/* The operators and functions, for CLETE operands only                       */
/* ------------------------------------------------------------------------ */

#define STDCL_CLETE_BINARY(opname, tag)                                                              \
    template <class X, class Y, typename std::enable_if<stdcl_clete::binary_ok_v<X, Y>, int>::type = 0> \
    inline stdcl_clete::binary_t<stdcl_clete::tag, X, Y> opname(const X& x, const Y& y)              \
    {                                                                                                \
        return stdcl_clete::make_binary<stdcl_clete::tag>(x, y);                                     \
    }
STDCL_CLETE_BINARY(operator+, op_add)
STDCL_CLETE_BINARY(operator-, op_sub)
STDCL_CLETE_BINARY(operator*, op_mul)
STDCL_CLETE_BINARY(operator/, op_div)
#undef STDCL_CLETE_BINARY

#define STDCL_CLETE_BINARY_FN(fn)                                                                         \
    template <class X, class Y, typename std::enable_if<stdcl_clete::float_binary<X, Y>::value, int>::type = 0> \
    inline stdcl_clete::binary_t<stdcl_clete::fn2_##fn, X, Y> fn(const X& x, const Y& y)                  \
    {                                                                                                     \
        return stdcl_clete::make_binary<stdcl_clete::fn2_##fn>(x, y);                                     \
    }
STDCL_CLETE_BINARY_FN(pow)
STDCL_CLETE_BINARY_FN(fmin)
STDCL_CLETE_BINARY_FN(fmax)
STDCL_CLETE_BINARY_FN(atan2)
STDCL_CLETE_BINARY_FN(fmod)
STDCL_CLETE_BINARY_FN(hypot)
#undef STDCL_CLETE_BINARY_FN

template <class X, typename std::enable_if<stdcl_clete::is_operand_v<X>, int>::type = 0>
inline stdcl_clete::unary<stdcl_clete::op_neg, stdcl_clete::node_t<X> > operator-(const X& x)
{
    return stdcl_clete::unary<stdcl_clete::op_neg, stdcl_clete::node_t<X> >(stdcl_clete::to_node(x));
}
template <class X, typename std::enable_if<stdcl_clete::is_operand_v<X>, int>::type = 0>
inline stdcl_clete::unary<stdcl_clete::op_pos, stdcl_clete::node_t<X> > operator+(const X& x)
{
    return stdcl_clete::unary<stdcl_clete::op_pos, stdcl_clete::node_t<X> >(stdcl_clete::to_node(x));
}

#define STDCL_CLETE_UNARY_FN(name, clname, cxxfn)                                                     \
    template <class X, typename std::enable_if<stdcl_clete::float_unary<X>::value, int>::type = 0>    \
    inline stdcl_clete::unary<stdcl_clete::fn1_##name, stdcl_clete::node_t<X> > name(const X& x)     \
    {                                                                                                 \
        return stdcl_clete::unary<stdcl_clete::fn1_##name, stdcl_clete::node_t<X> >(stdcl_clete::to_node(x)); \
    }
STDCL_CLETE_FN1_LIST(STDCL_CLETE_UNARY_FN)
#undef STDCL_CLETE_UNARY_FN
#undef STDCL_CLETE_FN1_LIST

#endif /* STDCL_CLETE_H */
