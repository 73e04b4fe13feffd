! SPDX-License-Identifier: MIT
! fortran_threads.f90: OpenMP threads using the module at once.  Each of 8
! iterations, spread over the threads, allocates its own arrays with
! clallocate, launches one kernel object shared by all (clforka) on a
! device chosen by the iteration, brings the result back and checks it;
! one iteration also fails on purpose and reads its own message (clerror
! is per thread).  The module keeps no state, so this is the C library's
! thread safety.  Built with OpenMP when configure found it (otherwise the
! iterations run one after the other).  Run by test_fortran in zero-copy
! and copy mode.
program fortran_threads
  use stdcl
  use, intrinsic :: iso_fortran_env, only: real32, error_unit
  implicit none
  integer, parameter :: iters = 8, n = 4096
  type(c_ptr) :: cp, clh, krn
  integer :: it, nbad, ndev

  cp = stdcpu
  if (c_associated(stdgpu)) cp = stdgpu
  ndev = clgetndev(cp)
  clh = clopen(cp, "fortran_kernels.cl")
  krn = clsym(cp, clh, "saxpy")
  if (.not. c_associated(krn)) then
    write (error_unit, '(a)') "FAILED: clsym saxpy: " // clerror()
    error stop 1
  end if
  nbad = 0
  !$omp parallel do schedule(dynamic) reduction(+:nbad)
  do it = 1, iters
    nbad = nbad + one(it)
  end do
  !$omp end parallel do
  if (clclose(cp, clh) /= 0) nbad = nbad + 1
  print '(a, i0, a, i0, a)', "fortran_threads: ", iters - nbad, " checks passed, ", nbad, " failed"
  if (nbad > 0) error stop 1

contains

  ! One iteration: 0 when its results are right, else 1 (with a message).
  integer function one(it)
    integer, intent(in) :: it
    real(real32), pointer :: x(:), y(:)
    type(clndrange_struct) :: ndr
    type(c_ptr) :: ev
    integer(c_int) :: dev
    integer :: k, stat
    character(len=200) :: errmsg
    character(len=:), allocatable :: msg
    one = 0
    dev = mod(it, ndev)
    call clallocate(cp, x, [n], stat=stat, errmsg=errmsg)
    call clallocate(cp, y, [n], stat=stat, errmsg=errmsg)
    if (stat /= 0) then
      write (error_unit, '(a)') "FAILED: clallocate: " // trim(errmsg)
      one = 1
      return
    end if
    x = [(real(k + it, real32), k = 1, n)]
    y = real(it, real32)
    ev = clmsync(cp, dev, x, CL_MEM_DEVICE)
    ev = clmsync(cp, dev, y, CL_MEM_DEVICE)
    ndr = clndrange_init1d(0, n, 0)
    ev = clforka(cp, dev, krn, ndr, CL_EVENT_WAIT, real(it, real32), x, y)
    ev = clmsync(cp, dev, y, CL_MEM_HOST)
    if (any(y /= it * x + it)) then
      write (error_unit, '(a, i0)') "FAILED: wrong results in iteration ", it
      one = 1
    end if
    if (it == 3) then
      ! A failure of this thread's own: its message, not another thread's.
      ev = clforka(cp, dev, krn, ndr, CL_EVENT_WAIT, 1.0_real32, x)
      msg = clerror()
      if (c_associated(ev) .or. index(msg, "takes 3") == 0) then
        write (error_unit, '(a)') "FAILED: the thread's own message: " // msg
        one = 1
      end if
    end if
    call cldeallocate(x)
    call cldeallocate(y)
  end function

end program fortran_threads
