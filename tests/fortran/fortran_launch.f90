! SPDX-License-Identifier: MIT
! fortran_launch.f90: launches from Fortran.  clndrange_init1d/2d/3d give
! the right dimension count; a 2-D kernel writes a(i, j) = i + 1000 j into
! a non-square array (a column-major slip shows); clforka and clfork with
! ndr and with c_loc(ndr) on each device, the chosen local size written
! back; a global offset splits one saxpy over every device, each bringing
! back its slice with clmsync of a section; NOWAIT and clwait; clreduce of
! each element kind against the host's sum.  Run by test_fortran in
! zero-copy and copy mode.
program fortran_launch
  use stdcl
  use fortran_checks
  use, intrinsic :: iso_fortran_env, only: int32, int64, real32, real64
  implicit none
  type(c_ptr) :: cp, clh, kidx, ksaxpy, ev
  type(clndrange_struct), target :: ndr
  integer(c_int) :: dev, ndev, rc
  integer(int32), pointer :: a(:,:)
  real(real32), pointer :: x(:), y(:)
  integer, parameter :: n0 = 6, n1 = 10, n = 4096
  integer :: i, j, first, count
  real(real32) :: want(n)

  cp = stdcpu
  if (c_associated(stdgpu)) cp = stdgpu
  ndev = clgetndev(cp)
  call check(ndev >= 1, "the context has devices")

  ndr = clndrange_init1d(0, 64, 16)
  call check(ndr%dim == 1 .and. ndr%gtid(1) == 64 .and. ndr%ltid(1) == 16, "clndrange_init1d")
  ndr = clndrange_init2d(0, 8, 4, 2, 6, 3)
  call check(ndr%dim == 2 .and. all(ndr%gtid == [8, 6, 1, 1]) .and. &
             all(ndr%gtid_offset == [0, 2, 0, 0]) .and. all(ndr%ltid == [4, 3, 1, 1]), &
             "clndrange_init2d sets two dimensions")
  ndr = clndrange_init3d(0_int64, 8_int64, 2_int64, 0_int64, 4_int64, 2_int64, 1_int64, &
                         2_int64, 1_int64)
  call check(ndr%dim == 3 .and. all(ndr%gtid == [8, 4, 2, 1]) .and. ndr%gtid_offset(3) == 1, &
             "clndrange_init3d sets three dimensions")
  call check(c_sizeof(ndr) == STDCL_SIZEOF_NDRANGE, "clndrange_struct has clndrange_t's size")

  clh = clopen(cp, "fortran_kernels.cl")
  call check(c_associated(clh), "clopen: " // clerror())
  kidx = clsym(cp, clh, "index2d")
  ksaxpy = clsym(cp, clh, "saxpy")
  call check(c_associated(kidx) .and. c_associated(ksaxpy), "clsym")

  call clallocate(cp, a, [n0, n1])
  do dev = 0, ndev - 1
    ! clforka, local size chosen (0) and written back.
    a = -1
    ev = clmsync(cp, dev, a, CL_MEM_DEVICE)
    ndr = clndrange_init2d(0, n0, 0, 0, n1, 0)
    ev = clforka(cp, dev, kidx, ndr, CL_EVENT_WAIT, a, n0)
    call check(c_associated(ev), "clforka index2d: " // clerror())
    call check(ndr%ltid(1) >= 1 .and. mod(n0, int(ndr%ltid(1))) == 0 .and. &
               ndr%ltid(2) >= 1 .and. mod(n1, int(ndr%ltid(2))) == 0, &
               "clforka writes back the local size it chose")
    ev = clmsync(cp, dev, a, CL_MEM_HOST)
    call check(all(a == reshape([((i + 1000 * j, i = 1, n0), j = 1, n1)], [n0, n1])), &
               "index2d: a(i, j) = i + 1000 j (column-major)")
    ! clfork with ndr, then STDCL 1.6's c_loc(ndr), NOWAIT and clwait.
    a = 0
    ev = clmsync(cp, dev, a, CL_MEM_DEVICE)
    call check(clarg_set_global(cp, kidx, 0, a) == 0, "clarg_set_global of an array")
    call check(clarg_set(cp, kidx, 1, n0) == 0, "clarg_set of an int")
    ndr = clndrange_init2d(0, n0, 0, 0, n1, 0)
    ev = clfork(cp, dev, kidx, ndr, CL_EVENT_NOWAIT)
    call check(c_associated(ev), "clfork with ndr: " // clerror())
    ev = clfork(cp, dev, kidx, c_loc(ndr), CL_EVENT_NOWAIT)
    call check(c_associated(ev), "clfork with c_loc(ndr): " // clerror())
    ev = clmsync(cp, dev, a, CL_MEM_HOST + CL_EVENT_NOWAIT)
    ev = clwait(cp, dev, CL_ALL_EVENT)
    call check(c_associated(ev), "clwait")
    call check(a(n0, n1) == n0 + 1000 * n1 .and. a(1, 2) == 2001 .and. a(2, 1) == 1002, &
               "clfork's results after clwait")
  end do
  call cldeallocate(a)

  ! One saxpy split over every device with a global offset; each device
  ! brings back its slice, a contiguous section.
  call clallocate(cp, x, [n])
  call clallocate(cp, y, [n])
  x = [(real(i, real32), i = 1, n)]
  y = [(real(2 * i, real32), i = 1, n)]
  want = 0.5_real32 * x + y
  ev = clmsync(cp, CL_ALL_DEVICES, x, CL_MEM_DEVICE)
  ev = clmsync(cp, CL_ALL_DEVICES, y, CL_MEM_DEVICE)
  do dev = 0, ndev - 1
    first = dev * (n / ndev)
    count = n / ndev
    if (dev == ndev - 1) count = n - first
    ndr = clndrange_init1d(first, count, 0)
    ev = clforka(cp, dev, ksaxpy, ndr, CL_EVENT_NOWAIT, 0.5_real32, x, y)
    call check(c_associated(ev), "clforka saxpy slice: " // clerror())
  end do
  do dev = 0, ndev - 1
    first = dev * (n / ndev)
    count = n / ndev
    if (dev == ndev - 1) count = n - first
    rc = stdcl_wait(cp, dev, CL_KERNEL_EVENT)
    ev = clmsync(cp, dev, y(first + 1:first + count), CL_MEM_HOST)
    call check(c_associated(ev), "clmsync of a section to the host: " // clerror())
  end do
  call check(all(y == want), "saxpy over every device, slices brought back")

  call reductions()
  call cldeallocate(x)
  call cldeallocate(y)
  call check(clclose(cp, clh) == 0, "clclose")
  call finish("fortran_launch")

contains

  subroutine reductions()
    integer(int32), pointer :: i4(:)
    integer(int64), pointer :: i8(:)
    real(real32), pointer :: r4(:)
    real(real64), pointer :: r8(:)
    integer(int32) :: s4
    integer(int64) :: s8
    real(real32) :: f4
    real(real64) :: f8
    integer :: k
    integer, parameter :: m = 1000
    call clallocate(cp, i4, [m])
    call clallocate(cp, i8, [m])
    call clallocate(cp, r4, [m])
    call clallocate(cp, r8, [m])
    i4 = [(k * 7 - 3000, k = 1, m)]
    i8 = [(int(k, int64) * 10000000000_int64, k = 1, m)]
    r4 = [(real(k, real32) * 0.5_real32, k = 1, m)]
    r8 = [(real(k, real64) / 8.0_real64, k = 1, m)]
    ev = clmsync(cp, 0, i4, CL_MEM_DEVICE)
    ev = clmsync(cp, 0, i8, CL_MEM_DEVICE)
    ev = clmsync(cp, 0, r4, CL_MEM_DEVICE)
    ev = clmsync(cp, 0, r8, CL_MEM_DEVICE)
    call check(clreduce(cp, 0, i4, CL_REDUCE_SUM, s4) == 0 .and. s4 == sum(i4), "clreduce int32 sum")
    call check(clreduce(cp, 0, i8, CL_REDUCE_MAX, s8) == 0 .and. s8 == maxval(i8), "clreduce int64 max")
    call check(clreduce(cp, 0, r4, CL_REDUCE_SUM, f4) == 0 .and. f4 == sum(r4), "clreduce real32 sum")
    call check(clreduce(cp, 0, r8(11:20), CL_REDUCE_MIN, f8) == 0 .and. f8 == r8(11), &
               "clreduce real64 min of a section")
    call cldeallocate(i4)
    call cldeallocate(i8)
    call cldeallocate(r4)
    call cldeallocate(r8)
  end subroutine

end program fortran_launch
