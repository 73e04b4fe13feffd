// SPDX-License-Identifier: MIT
// clete_array.cpp: STDCL 1.6 style with CLETE expressions on
// <clmulti_array.h>, arrays of ranks 1 to 4 in one expression: a(i), b(i,j),
// c(i,j,k), d(i,j,k,l) and x(i,j,k,l); ten times
//   x = a*b*c*d + sqrt(d) - 0.5f + pow(c*d, 0.33f);
//   for i: a[i] = cos(x[i][0][0][0]);
// then "i x[i][i%12][2i%9][3i%15] a[i]" for every i.  The values keep every
// term in play and the iteration contracting (b*c*d < 0.04 at [i][0][0][0]);
// test_compat recomputes them in double precision.  clete_array_auto.cpp is
// this program with __CLMULTI_ARRAY_FULLAUTO; the compute time goes to stderr.
#include <iostream>
#include <iomanip>
using namespace std;

#include "../clete_timer.h"

#include <stdcl.h>
#include <clmulti_array.h>

int main()
{
    typedef clmulti_array<float, 1> array1_t;
    typedef clmulti_array<float, 2> array2_t;
    typedef clmulti_array<float, 3> array3_t;
    typedef clmulti_array<float, 4> array4_t;
    const int ni = 20, nj = 12, nk = 9, nl = 15;

    array1_t a(boost::extents[ni]);
    array2_t b(boost::extents[ni][nj]);
    array3_t c(boost::extents[ni][nj][nk]);
    array4_t d(boost::extents[ni][nj][nk][nl]);
    array4_t x(boost::extents[ni][nj][nk][nl]);

    for (int i = 0; i < ni; i++) {
        a[i] = 1.0f + 0.05f * i;
        for (int j = 0; j < nj; j++) {
            b[i][j] = 0.5f + 0.02f * i + 0.1f * j;
            for (int k = 0; k < nk; k++) {
                c[i][j][k] = 0.75f + 0.01f * (i + j) + 0.05f * k;
                for (int l = 0; l < nl; l++) d[i][j][k][l] = 0.02f * (1 + j + k + l) + 0.001f * i;
            }
        }
    }

    clete_timer t;
    t.start();
    for (int iter = 0; iter < 10; iter++) {
        x = a * b * c * d + sqrt(d) - 0.5f + pow(c * d, 0.33f);
        for (int i = 0; i < ni; i++) a[i] = cos(x[i][0][0][0]);
    }
    double secs = t.seconds();

    cout << setprecision(9);
    for (int i = 0; i < ni; i++) cout << i << " " << x[i][i % nj][2 * i % nk][3 * i % nl] << " " << a[i] << endl;
    cerr << "compute time " << secs << " (sec)" << endl;
    return 0;
}
