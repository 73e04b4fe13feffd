/* SPDX-License-Identifier: MIT */
/* saxpy_params.h: shared by the kernel and the host code. */
#ifndef SAXPY_PARAMS_H
#define SAXPY_PARAMS_H
#define SAXPY_PER_ITEM 4 /* elements per work-item */
#endif
