/* SPDX-License-Identifier: MIT */
/* argtypes_types.h: included by argtypes.cl; its typedefs are found by the
 * library only by following the #include. */
typedef float DATA_TYPE; /* as the PolyBench programs declare their data */
typedef DATA_TYPE SCALE_TYPE; /* a typedef of a typedef */
typedef unsigned int count_t;
