// SPDX-License-Identifier: MIT
// clete_vector.cpp: STDCL 1.6 style with CLETE expressions on <clvector.h>.
// Five clvectors of N elements are filled by push_back, then ten times
//   e = a + b + 2112.0f * b + sqrt(d) - a*b*c*d + c*sqrt(a) + a*cos(c);
//   a = a + log(fabs(e));
// and "a(i) = .. b(i) = .. c(i) = .. d(i) = .. e(i) = .." is printed for 16
// spread elements and the last 10.  The values are chosen so that every term
// of the sum matters (e stays between 1000 and 4500); test_compat recomputes
// them in double precision.  clete_vector_auto.cpp is this program with
// __CLVECTOR_FULLAUTO (a generated kernel per expression); the compute time
// goes to stderr.
#include <iostream>
#include <iomanip>
using namespace std;

#include "../clete_timer.h"

#include <stdcl.h>
#include <clvector.h>

int main()
{
    const int n = 262144;
    clvector<float> a, b, c, d, e;
    for (int i = 0; i < n; ++i) {
        a.push_back(1.0f + (i % 97) * 0.01f);
        b.push_back(0.5f + (i % 89) * 0.01f);
        c.push_back(0.25f + (i % 83) * 0.01f);
        d.push_back(2.0f + (i % 79) * 0.01f);
        e.push_back(0.0f);
    }

    clete_timer t;
    t.start();
    for (int iter = 0; iter < 10; iter++) {
        e = a + b + 2112.0f * b + sqrt(d) - a * b * c * d + c * sqrt(a) + a * cos(c);
        a = a + log(fabs(e));
    }
    double secs = t.seconds();

    cout << setprecision(9);
    for (int k = 0; k < 26; ++k) {
        int i = k < 16 ? k * (n / 16) + 7 * k : n - 26 + k;
        cout << " a(" << i << ") = " << a[i] << " b(" << i << ") = " << b[i] << " c(" << i << ") = " << c[i]
             << " d(" << i << ") = " << d[i] << " e(" << i << ") = " << e[i] << endl;
    }
    cerr << "compute time " << secs << " (sec)" << endl;
    return 0;
}
