! SPDX-License-Identifier: MIT
! matvec.f90: y = A x with libstdcl from Fortran, A an n x m matrix that is
! neither square nor symmetric (so a row/column mix-up shows), on every
! device of the context: device d computes a slice of the rows (a launch
! with a global offset) and brings back exactly its slice of y (clmsync of
! a section).  The result is checked against the host's matmul.
!
!   matvec [-c gpu|cpu|dev] [n m]      (default 1000 x 700)
!
! Exit status: 0 right, 1 wrong, 2 bad command line, 3 OpenCL failure.
program matvec
  use stdcl
  use, intrinsic :: iso_fortran_env, only: real32, real64, error_unit
  implicit none
  integer :: n = 1000, m = 700, i, j, first, count, dev, ndev
  type(c_ptr) :: cp, clh, krn, ev
  type(clndrange_struct) :: ndr
  real(real32), pointer :: a(:,:), x(:), y(:)
  real(real64), allocatable :: want(:)
  real(real64) :: err
  character(len=16) :: arg1

  cp = stdcpu
  if (c_associated(stdgpu)) cp = stdgpu
  call parse_args()
  if (.not. c_associated(cp)) call die("no device in the context", 3)
  ndev = clgetndev(cp)

  clh = clopen(cp, "matvec_colmajor.cl")
  if (.not. c_associated(clh)) call die(clerror(), 3)
  krn = clsym(cp, clh, "matvec")

  ! Arrays in memory the devices share with the host.
  call clallocate(cp, a, [n, m])
  call clallocate(cp, x, [m])
  call clallocate(cp, y, [n])
  do j = 1, m
    do i = 1, n
      a(i, j) = real(mod(i * 7 + j * 3, 19) - 9, real32) / 8 + real(i, real32) / n
    end do
  end do
  x = [(real(mod(j, 5) - 2, real32) / 4, j = 1, m)]
  y = 0
  allocate(want(n))
  do i = 1, n
    want(i) = sum(real(a(i, :), real64) * x)
  end do

  ! Each device: the whole A and x, its rows of y.
  ev = clmsync(cp, CL_ALL_DEVICES, a, CL_MEM_DEVICE)
  ev = clmsync(cp, CL_ALL_DEVICES, x, CL_MEM_DEVICE)
  do dev = 0, ndev - 1
    call rows(dev, first, count)
    ndr = clndrange_init1d(first, count, 0)
    ev = clforka(cp, dev, krn, ndr, CL_EVENT_NOWAIT, n, m, a, x, y)
    if (.not. c_associated(ev)) call die("clforka: " // clerror(), 3)
  end do
  do dev = 0, ndev - 1
    call rows(dev, first, count)
    ev = clmsync(cp, dev, y(first + 1:first + count), CL_MEM_HOST)
    if (.not. c_associated(ev)) call die("clmsync: " // clerror(), 3)
    print '(a, i0, a, i0, a, i0)', "device ", dev, ": rows ", first + 1, " to ", first + count
  end do

  err = maxval(abs(y - want)) / max(maxval(abs(want)), 1d-30)
  print '(a, i0, a, i0, a, es9.2, a)', "matvec: ", n, " x ", m, ", max relative error ", err, &
      trim(merge(": PASS", ": FAIL", err <= 1d-5))
  call cldeallocate(a)
  call cldeallocate(x)
  call cldeallocate(y)
  if (clclose(cp, clh) /= 0) call die(clerror(), 3)
  if (err > 1d-5) stop 1, quiet=.true.

contains

  ! The rows of device d: an even share, from index first (from 0).
  subroutine rows(d, first, count)
    integer, intent(in) :: d
    integer, intent(out) :: first, count
    first = d * (n / ndev) + min(d, mod(n, ndev))
    count = n / ndev
    if (d < mod(n, ndev)) count = count + 1
  end subroutine

  subroutine parse_args()
    integer :: k, nargs, ios, pos
    nargs = command_argument_count()
    k = 1
    pos = 0
    do while (k <= nargs)
      call get_command_argument(k, arg1)
      k = k + 1
      if (arg1 == "-c") then
        call get_command_argument(k, arg1)
        k = k + 1
        select case (arg1)
        case ("gpu")
          cp = stdgpu
        case ("cpu")
          cp = stdcpu
        case ("dev")
          cp = stddev
        case default
          call die("-c expects gpu, cpu or dev", 2)
        end select
      else
        pos = pos + 1
        if (pos == 1) read (arg1, *, iostat=ios) n
        if (pos == 2) read (arg1, *, iostat=ios) m
        if (pos > 2 .or. ios /= 0 .or. n < 1 .or. m < 1) &
          call die("usage: matvec [-c gpu|cpu|dev] [n m]", 2)
      end if
    end do
  end subroutine

  subroutine die(msg, status)
    character(len=*), intent(in) :: msg
    integer, intent(in) :: status
    write (error_unit, '(a)') "matvec: " // msg
    stop status, quiet=.true.
  end subroutine

end program matvec
