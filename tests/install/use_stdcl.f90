! SPDX-License-Identifier: MIT
! use_stdcl.f90: a user's Fortran program against an installed libstdcl
! (check_install.sh): a kernel that includes <stdcl.h> adds two arrays on
! the first device of stddev; prints "sum ok <version>".
program use_stdcl
  use stdcl
  use, intrinsic :: iso_fortran_env, only: int32, error_unit
  implicit none
  integer, parameter :: n = 256
  character(len=*), parameter :: src = "#include <stdcl.h>" // new_line("a") // &
      "__kernel void add(__global const int* a, __global const int* b, __global int* c)" // &
      "{ int i = get_global_id(0); c[i] = a[i] + b[i]; }"
  type(c_ptr) :: cp, h, k, ev
  type(clndrange_struct) :: ndr
  integer(int32), pointer :: a(:), b(:), c(:)
  integer :: i

  cp = stddev
  if (.not. c_associated(cp)) cp = stdcpu
  h = clsopen(cp, src)
  k = clsym(cp, h, "add")
  if (.not. c_associated(k)) then
    write (error_unit, '(a)') clerror()
    error stop 1
  end if
  call clallocate(cp, a, [n])
  call clallocate(cp, b, [n])
  call clallocate(cp, c, [n])
  a = [(i - 1, i = 1, n)]
  b = 2 * a
  c = -1
  ndr = clndrange_init1d(0, n, 64)
  ev = clmsync(cp, 0, a, CL_MEM_DEVICE + CL_EVENT_NOWAIT)
  ev = clmsync(cp, 0, b, CL_MEM_DEVICE + CL_EVENT_NOWAIT)
  ev = clforka(cp, 0, k, ndr, CL_EVENT_NOWAIT, a, b, c)
  ev = clmsync(cp, 0, c, CL_MEM_HOST + CL_EVENT_NOWAIT)
  if (stdcl_wait(cp, 0, CL_ALL_EVENT) /= 0) then
    write (error_unit, '(a)') clerror()
    error stop 1
  end if
  if (any(c /= 3 * a)) error stop "wrong sums"
  print '(a)', "sum ok " // stdcl_version()
  call cldeallocate(a)
  call cldeallocate(b)
  call cldeallocate(c)
end program use_stdcl
