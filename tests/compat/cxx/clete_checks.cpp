// SPDX-License-Identifier: MIT
// clete_checks.cpp: checks of the CLETE expression templates (<clete.h>
// through <clvector.h> and <clmulti_array.h>), printing one "ok <what>" line
// per check that holds, "FAILED <what>" otherwise (test_compat.c compares
// the lines).  clete_checks_auto.cpp is this program with both FULLAUTO
// defines: every assignment then runs a generated kernel (or, when it
// cannot, the host: the same lines either way).  Last, one line
// "reason <why>": why the last assignment ran on the host ("" if it did not).
#include <stdcl.h>
#include <clvector.h>
#include <clmulti_array.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

static int bad = 0;

static void check(bool ok, const char* what)
{
    std::printf("%s %s\n", ok ? "ok" : "FAILED", what);
    if (!ok) ++bad;
}

// |got - want| <= rel * max(|want|, 1): float results of the device's
// built-ins (at most 16 ulp for pow, 4 or fewer for the others in OpenCL
// 1.2) against <cmath>'s, for results of magnitude up to a few hundred.
template <class V, class F>
static bool all_close(const V& got, F want, double rel)
{
    for (size_t i = 0; i < got.size(); ++i) {
        double w = want(i);
        if (!(std::fabs(got[i] - w) <= rel * std::max(std::fabs(w), 1.0))) {
            std::printf("  element %zu: %.9g, want %.9g\n", i, (double)got[i], w);
            return false;
        }
    }
    return true;
}

// Detection of an operator for two types (to show the operators do not
// apply to other types).
template <class X, class Y, class = void>
struct can_add : std::false_type {};
template <class X, class Y>
struct can_add<X, Y, decltype((void)(std::declval<const X&>() + std::declval<const Y&>()))> : std::true_type {};
template <class X, class = void>
struct can_sqrt : std::false_type {};
template <class X>
struct can_sqrt<X, decltype((void)sqrt(std::declval<const X&>()))> : std::true_type {};

struct point {
    float x, y;
};
static_assert(can_add<clvector<float>, clvector<float> >::value, "clvector + clvector");
static_assert(can_add<float, clvector<float> >::value, "scalar + clvector");
static_assert(!can_add<std::vector<float>, float>::value, "std::vector is left alone");
static_assert(!can_add<clvector<point>, clvector<point> >::value, "clvector of a struct is left alone");
static_assert(!can_add<std::string, clvector<float> >::value, "a string is not a scalar");
static_assert(can_add<std::string, std::string>::value, "string + string still works");
static_assert(!can_sqrt<clvector<int> >::value, "sqrt needs floating-point elements");
static_assert(can_sqrt<clvector<double> >::value, "sqrt of clvector<double>");

int main()
{
    const size_t n = 1000;
    clvector<float> a, b, r;
    for (size_t i = 0; i < n; ++i) {
        a.push_back(0.5f + 0.01f * float(i));
        b.push_back(3.0f - 0.002f * float(i));
    }
    const double tol = 2e-6;

    r = 2.0f - a;
    check(r.size() == n && all_close(r, [&](size_t i) { return 2.0 - a[i]; }, tol), "scalar on the left");
    r = a - 2.0f;
    check(all_close(r, [&](size_t i) { return a[i] - 2.0; }, tol), "scalar on the right");
    r = 3 / a + b * 0.5;  // an int and a double scalar beside float expressions: float
    check(all_close(r, [&](size_t i) { return 3.0 / a[i] + b[i] * 0.5; }, tol), "int and double scalars");
    r = -a + +b;
    check(all_close(r, [&](size_t i) { return -double(a[i]) + b[i]; }, tol), "unary minus and plus");

    bool fns = true;
#define CHECK_FN(f, x)                                                                       \
    r = f(x);                                                                               \
    if (!all_close(r, [&](size_t i) { return std::f((double)x[i]); }, tol)) {               \
        std::printf("  function %s\n", #f);                                                  \
        fns = false;                                                                         \
    }
    clvector<float> u(n);  // in (-1, 1) for asin, acos
    for (size_t i = 0; i < n; ++i) u[i] = -0.99f + 1.98f * float(i) / float(n);
    CHECK_FN(sqrt, a) CHECK_FN(cbrt, u) CHECK_FN(exp, a) CHECK_FN(exp2, a) CHECK_FN(expm1, u) CHECK_FN(log, a)
    CHECK_FN(log2, a) CHECK_FN(log10, a) CHECK_FN(log1p, a) CHECK_FN(fabs, u) CHECK_FN(abs, u) CHECK_FN(sin, b)
    CHECK_FN(cos, b) CHECK_FN(tan, u) CHECK_FN(asin, u) CHECK_FN(acos, u) CHECK_FN(atan, b) CHECK_FN(sinh, u)
    CHECK_FN(cosh, u) CHECK_FN(tanh, b) CHECK_FN(floor, a) CHECK_FN(ceil, a) CHECK_FN(round, a) CHECK_FN(trunc, a)
#undef CHECK_FN
    check(fns, "one-operand functions match <cmath>");
    bool fn2 = true;
    r = pow(a, b);
    fn2 = fn2 && all_close(r, [&](size_t i) { return std::pow((double)a[i], (double)b[i]); }, tol);
    r = pow(a, 0.33f);
    fn2 = fn2 && all_close(r, [&](size_t i) { return std::pow((double)a[i], (double)0.33f); }, tol);
    r = pow(2.0f, u);
    fn2 = fn2 && all_close(r, [&](size_t i) { return std::pow(2.0, (double)u[i]); }, tol);
    r = fmin(a, b) + fmax(1.5f, a) + fmin(a, 2.0f);
    fn2 = fn2 && all_close(r, [&](size_t i) {
        return std::fmin((double)a[i], (double)b[i]) + std::fmax(1.5, (double)a[i]) + std::fmin((double)a[i], 2.0);
    }, tol);
    r = atan2(u, b) + fmod(a, b) + hypot(a, u);
    fn2 = fn2 && all_close(r, [&](size_t i) {
        return std::atan2((double)u[i], (double)b[i]) + std::fmod((double)a[i], (double)b[i]) +
               std::hypot((double)a[i], (double)u[i]);
    }, tol);
    check(fn2, "two-operand functions with operands and scalars");

    clvector<float> al(a);
    al = al * al + al;  // the result is an operand, three times
    check(all_close(al, [&](size_t i) { return (double)a[i] * a[i] + a[i]; }, tol), "aliased result a = a*a + a");
    clvector<float> bl(b);
    bl = a - bl;
    check(all_close(bl, [&](size_t i) { return (double)a[i] - b[i]; }, tol), "aliased result b = a - b");

    clvector<double> da, db;
    for (size_t i = 0; i < n; ++i) da.push_back(0.1 + 1e-3 * double(i)), db.push_back(1.0 / (1.0 + double(i)));
    clvector<double> dr;
    dr = exp(da) * db + sqrt(da) / 3.0 - pow(db, da);
    check(dr.size() == n && all_close(dr, [&](size_t i) {
        return std::exp(da[i]) * db[i] + std::sqrt(da[i]) / 3.0 - std::pow(db[i], da[i]);
    }, 1e-13), "double elements");
    clvector<float> mixed;
    mixed = a + db;  // float + double elements: a double expression, stored as float
    check(all_close(mixed, [&](size_t i) { return (double)a[i] + db[i]; }, tol), "float and double operands");

    clvector<int> ia, ib, ir;
    for (int i = 0; i < (int)n; ++i) ia.push_back(i - 500), ib.push_back(3 * i + 1);
    ir = ia * 3 - ib / 2 + (-ia) + 7;
    bool iok = ir.size() == n;
    for (size_t i = 0; iok && i < n; ++i) iok = ir[i] == ia[i] * 3 - ib[i] / 2 + (-ia[i]) + 7;
    check(iok, "int elements, exact");

    clvector<float> fresh = a * b;  // constructed from an expression
    check(fresh.size() == n && all_close(fresh, [&](size_t i) { return (double)a[i] * b[i]; }, tol),
          "clvector constructed from an expression");
    clvector<float> small(10, 1.0f);
    small = a + 1.0f;  // takes the expression's size
    check(small.size() == n && all_close(small, [&](size_t i) { return a[i] + 1.0; }, tol),
          "assignment takes the expression's size");

    {
        clvector<float> shorter(n - 1, 1.0f);
        std::string what;
        try {
            r = a + shorter;
        } catch (const std::invalid_argument& e) {
            what = e.what();
        }
        check(what == "CLETE: operand sizes 1000 and 999 differ", "operands of different sizes throw invalid_argument");
        check(r.size() == n, "the failed assignment left the result alone");
    }

    // Still a std::vector: growth, comparison, algorithms after the assignments.
    clvector<float> g;
    g = a + b;
    std::vector<float, clmalloc_allocator<float> > copy(g.begin(), g.end());
    for (int i = 0; i < 5000; ++i) g.push_back(float(i));
    bool same = std::equal(copy.begin(), copy.end(), g.begin()) && g.size() == n + 5000;
    clvector<float> h(g);
    same = same && h == g && !(h != g);
    std::sort(h.begin(), h.end());
    g = g * 2.0f;  // grown storage, evaluated again
    same = same && g.size() == n + 5000 && g[n + 4999] == 9998.0f && std::fabs(g[3] - 2.0 * copy[3]) < 1e-5;
    check(same, "std::vector operations before and after assignments");
    check(g.clmdetach() == 0 && (g = g + 1.0f, g[n] == 1.0f), "clmdetach, then assigned again");

    // clmulti_array: lower ranks repeat over the trailing indices.
    clmulti_array<float, 1> m1(boost::extents[6]);
    clmulti_array<float, 2> m2(boost::extents[6][5]);
    clmulti_array<float, 3> m3(boost::extents[6][5][4]), mr(boost::extents[6][5][4]);
    for (int i = 0; i < 6; ++i) {
        m1[i] = 1.0f + i;
        for (int j = 0; j < 5; ++j) {
            m2[i][j] = 0.5f * j - i;
            for (int k = 0; k < 4; ++k) m3[i][j][k] = 0.25f * k + j + 10 * i;
        }
    }
    mr = m3 * m1 + m2 - 2.0f * sqrt(m3);
    bool bc = true;
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 5; ++j)
            for (int k = 0; k < 4; ++k) {
                double want = (double)m3[i][j][k] * m1[i] + m2[i][j] - 2.0 * std::sqrt((double)m3[i][j][k]);
                bc = bc && std::fabs(mr[i][j][k] - want) <= tol * std::max(std::fabs(want), 1.0);
            }
    check(bc, "clmulti_array ranks 1, 2, 3 in one expression");
    // The same with 64-bit indices, the form past 2^32 elements (FULLAUTO;
    // the host loop has only one form).
    stdcl_clete::force_wide_indices(true);
    clmulti_array<float, 3> mw(boost::extents[6][5][4]);
    mw = m3 * m1 + m2 - 2.0f * sqrt(m3);
    stdcl_clete::force_wide_indices(false);
    bool same_wide = true;
    for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 5; ++j)
            for (int k = 0; k < 4; ++k) same_wide = same_wide && mw[i][j][k] == mr[i][j][k];
    check(same_wide, "64-bit indices give the same elements");
    mr = mr - m1;  // aliased
    check(std::fabs(mr[5][4][3] - ((double)m3[5][4][3] * 6 + m2[5][4] - 2.0 * std::sqrt((double)m3[5][4][3]) - 6)) <
              1e-4, "clmulti_array aliased result");
    clmulti_array<float, 2> empty2;
    empty2 = m2 * m1;
    check(empty2.shape()[0] == 6 && empty2.shape()[1] == 5 && empty2[3][4] == m2[3][4] * m1[3],
          "empty clmulti_array takes the expression's extents");
    {
        clmulti_array<float, 1> m1b(boost::extents[7]);
        std::string what;
        try {
            mr = m3 + m1b;
        } catch (const std::invalid_argument& e) {
            what = e.what();
        }
        check(what == "CLETE: operand extents [6][5][4] and [7] disagree in dimension 0",
              "disagreeing leading extents throw invalid_argument");
        clmulti_array<float, 2> wrong(boost::extents[5][6]);
        what.clear();
        try {
            wrong = m2 + 1.0f;
        } catch (const std::invalid_argument& e) {
            what = e.what();
        }
        check(what == "CLETE: a clmulti_array of extents [5][6] is assigned an expression of extents [6][5]",
              "assignment to other extents throws invalid_argument");
        clmulti_array<float, 2> fortran(boost::extents[6][5], boost::fortran_storage_order());
        what.clear();
        try {
            mr = m3 + fortran;
        } catch (const std::invalid_argument& e) {
            what = e.what();
        }
        check(what == "CLETE: a clmulti_array operand is not in C storage order", "Fortran order throws invalid_argument");
    }

    // The reason for a host evaluation, also in clerror().
    clerror();
    r = a + b;
    std::string reason = stdcl_clete::last_reason();
    const char* e = clerror();
    check(reason.empty() ? e == nullptr : (e && std::strstr(e, reason.c_str()) != nullptr),
          "clerror() says why the host evaluated");
    std::printf("reason %s\n", reason.c_str());
    return bad ? 1 : 0;
}
