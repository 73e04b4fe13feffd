/* SPDX-License-Identifier: MIT */
/* bench_stats.h: the medians and quantiles of the benchmark programs
 * (bench_core, bench_overlap, bench_reduce), one rule for all of them;
 * stats_quantile in gpu_common.sh applies the same rule to the scripts'
 * figures.
 *
 * The rule: the n values sorted ascending, the p-quantile (0 <= p <= 1) lies
 * at 0-based position h = p (n - 1), linearly interpolated between the two
 * values around it (R's and NumPy's default).  So the median (p = 0.5) of an
 * odd count is the middle value, of an even count the mean of the two middle
 * values.  Header only. */
#ifndef BENCH_STATS_H
#define BENCH_STATS_H

#include <stdlib.h>

static inline int bench_cmp_double(const void* a, const void* b)
{
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

/* The p-quantile of v[0..n-1], by the rule above; sorts v in place.  0 when
 * n is 0. */
static inline double bench_quantile(double* v, int n, double p)
{
    if (n <= 0) return 0;
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    double h = p * (n - 1);
    int i = (int)h;
    if (i >= n - 1) return v[n - 1];
    return v[i] + (h - i) * (v[i + 1] - v[i]);
}

/* The median of v[0..n-1] (the 0.5-quantile); sorts v in place. */
static inline double bench_median(double* v, int n) { return bench_quantile(v, n, 0.5); }

#endif /* BENCH_STATS_H */
