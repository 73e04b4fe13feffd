/* SPDX-License-Identifier: MIT */
/* stdcl_fortran_shim.c: the two things the module stdcl cannot do in
 * Fortran.  stdcl_f_span reads an array's descriptor (ISO_Fortran_binding.h):
 * its first element, its size in bytes, and whether it is contiguous, which
 * gfortran's is_contiguous does not tell reliably for every actual argument.
 * stdcl_f_mctl calls the variadic clmctl with its arguments in the right C
 * types.  Part of libstdcl_fortran only; not exported. */
#include <ISO_Fortran_binding.h>
#include <stddef.h>

#include <stdcl.h>

/* Fills *base and *nbytes for the array (or scalar) a; returns 1 when its
 * elements are contiguous in memory, 0 when not, -1 for an unallocated or
 * disassociated array. */
int stdcl_f_span(const CFI_cdesc_t* a, void** base, size_t* nbytes)
{
    *base = NULL;
    *nbytes = 0;
    if (a->base_addr == NULL)
        return -1;
    size_t n = a->elem_len;
    for (CFI_rank_t i = 0; i < a->rank; i++)
        n *= (size_t)a->dim[i].extent;
    *base = a->base_addr;
    *nbytes = n;
    return a->rank == 0 || CFI_is_contiguous(a) ? 1 : 0;
}

/* clmctl(ptr, op, ...) with the arguments each operation takes: an int
 * (CL_MCTL_SET_USRFLAGS, CL_MCTL_CLR_USRFLAGS), two sizes and an image
 * format (CL_MCTL_SET_IMAGE2D), or none. */
int stdcl_f_mctl(void* ptr, int op, int iarg, size_t w, size_t h, const cl_image_format* fmt)
{
    switch (op) {
    case CL_MCTL_SET_USRFLAGS:
    case CL_MCTL_CLR_USRFLAGS:
        return clmctl(ptr, op, iarg);
    case CL_MCTL_SET_IMAGE2D:
        return clmctl(ptr, op, w, h, fmt);
    default:
        return clmctl(ptr, op);
    }
}
