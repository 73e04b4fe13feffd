! SPDX-License-Identifier: MIT
! matvec16.f90: a Fortran program in STDCL 1.6's forms (type(c_ptr) memory
! from clmalloc with C_F_POINTER, strings ending in C_NULL_CHAR, clarg_set
! and clarg_set_global, clfork with C_LOC(ndr), clmsync, clflush, clwait,
! clfree, clclose), as COPRTHR's Fortran example writes them, with a matrix
! that is not symmetric: c = A b on each device of the context, checked
! against the host's product.  Also clsopen, clbuild of a CLLD_NOBUILD
! handle, clmrealloc, clsizeofmem, clmdetach/clmattach and the default
! contexts.  Prints "device D: ok" per device; exits 1 on a wrong result.
program matvec16
  use iso_c_binding
  use stdcl
  implicit none
  integer(C_INT) :: n = 48
  type(C_PTR) :: cp, clh, krn, p_aa, p_b, p_c, ev, h2, p_d
  real(C_FLOAT), pointer :: aa(:,:), b(:), c(:)
  real(C_DOUBLE), allocatable :: want(:)
  type(clndrange_struct), target :: ndr
  integer(C_INT) :: rc, devnum
  integer :: i, j, bad
  character(len=*), parameter :: src = "__kernel void twice(__global int* a) " // &
      "{ a[get_global_id(0)] *= 2; }" // C_NULL_CHAR

  if (C_ASSOCIATED(stdgpu)) then
    cp = stdgpu
  else
    cp = stdcpu
  endif
  if (C_ASSOCIATED(stdrpu) .or. C_ASSOCIATED(stdnpu)) stop "stdrpu and stdnpu are null"

  clh = clopen(cp, "matvecmult.cl"//C_NULL_CHAR, CLLD_NOW)
  krn = clsym(cp, clh, "matvecmult_kern"//C_NULL_CHAR, 0)
  if (.not. C_ASSOCIATED(krn)) stop "clsym matvecmult_kern"

  p_aa = clmalloc(cp, int8(n*n*4), 0)
  call C_F_POINTER(p_aa, aa, [n, n])
  p_b = clmalloc(cp, int8(n*4), 0)
  call C_F_POINTER(p_b, b, [n])
  p_c = clmalloc(cp, int8(n*4), 0)
  call C_F_POINTER(p_c, c, [n])
  if (clsizeofmem(p_aa) /= n*n*4) stop "clsizeofmem"

  ! A(i,j) = i + 2 j: A(i,j) /= A(j,i), so a row/column mix-up shows.
  do j = 1, n
    do i = 1, n
      aa(i,j) = real(i + 2*j, C_FLOAT)
    end do
  end do
  do i = 1, n
    b(i) = real(mod(i, 7) - 3, C_FLOAT)
  end do
  allocate(want(n))
  do i = 1, n
    want(i) = 0
    do j = 1, n
      want(i) = want(i) + real(aa(i,j), C_DOUBLE) * b(j)
    end do
  end do

  bad = 0
  do devnum = 0, clgetndev(cp) - 1
    c = 0.0
    ndr = clndrange_init1d(0, n, 16)
    ev = clmsync(cp, devnum, p_aa, CL_MEM_DEVICE+CL_EVENT_NOWAIT)
    ev = clmsync(cp, devnum, p_b, CL_MEM_DEVICE+CL_EVENT_NOWAIT)
    ev = clmsync(cp, devnum, p_c, CL_MEM_DEVICE+CL_EVENT_NOWAIT)
    rc = clarg_set(cp, krn, 0, n)
    rc = clarg_set_global(cp, krn, 1, p_aa)
    rc = clarg_set_global(cp, krn, 2, p_b)
    rc = clarg_set_global(cp, krn, 3, p_c)
    ev = clfork(cp, devnum, krn, C_LOC(ndr), CL_EVENT_NOWAIT)
    ev = clmsync(cp, devnum, p_c, CL_MEM_HOST+CL_EVENT_NOWAIT)
    rc = clflush(cp, devnum, 0)
    ev = clwait(cp, devnum, CL_ALL_EVENT)
    if (any(abs(c - want) > 1e-5 * maxval(abs(want)))) then
      write(*,*) "device", devnum, ": wrong product, c(1:4) =", c(1:4), " want", want(1:4)
      bad = bad + 1
    else
      write(*,'(a,i0,a)') "device ", devnum, ": ok"
    end if
  end do

  ! clsopen with CLLD_NOBUILD, then clbuild; clmrealloc keeps the contents.
  h2 = clsopen(cp, src, CLLD_NOBUILD)
  h2 = clbuild(cp, h2, "-D UNUSED=1"//C_NULL_CHAR, 0)
  if (.not. C_ASSOCIATED(clsym(cp, h2, "twice"//C_NULL_CHAR, 0))) stop "clbuild"
  p_d = clmrealloc(cp, p_b, int8(2*n*4), 0)
  if (.not. C_ASSOCIATED(p_d) .or. clsizeofmem(p_d) /= 2*n*4) stop "clmrealloc"
  call C_F_POINTER(p_d, b, [2*n])
  if (b(5) /= real(mod(5, 7) - 3, C_FLOAT)) stop "clmrealloc kept the contents"
  if (clmdetach(p_d) /= 0 .or. clmattach(cp, p_d) /= 0) stop "clmdetach/clmattach"

  rc = clfree(p_aa)
  rc = clfree(p_d)
  rc = clfree(p_c)
  rc = clclose(cp, h2)
  rc = clclose(cp, clh)
  if (bad /= 0) error stop 1
end program matvec16
