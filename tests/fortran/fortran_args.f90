! SPDX-License-Identifier: MIT
! fortran_args.f90: kernel arguments of each kind from Fortran.  A kernel
! of char, short, int, long, float, double, float2, double2 and float4
! parameters gets integer(int8..int64), real(real32/real64), complex and
! cl_float4 values through clforka and through the generic clarg_set, and
! writes them back; values of another arithmetic kind are converted to the
! parameter's type; a pointer for an int is refused, naming both types;
! __local memory through cllocal_per_item, cllocal, cllocal_fn and
! clarg_set_local;
! clptr for a type(c_ptr).  Run by test_fortran in zero-copy and copy mode.
program fortran_args
  use stdcl
  use fortran_checks
  use, intrinsic :: iso_fortran_env, only: int8, int16, int32, int64, real32, real64
  implicit none
  type(c_ptr) :: cp, clh, kargs, kconv, ksum, ev, pout
  type(c_funptr) :: scratch_fn  ! a variable: a constant c_funloc makes a text relocation
  type(clndrange_struct) :: ndr
  real(real64), pointer :: out(:)
  real(real32), pointer :: x(:), sums(:)
  type(cl_float4) :: v
  character(len=:), allocatable :: msg
  real(real64), parameter :: want(11) = [-7d0, 3000d0, -123456d0, 5000000000d0, 0.25d0, &
      1d0 / 3d0, 1.5d0, -2.5d0, 1d0 / 7d0, -9d0, 4321d0]
  integer :: k, g
  integer(c_int) :: rc
  interface
    function scratch_bytes(local, dim, user) bind(C, name="fortran_args_scratch_bytes") result(bytes)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: local, user
      integer(c_size_t), value :: dim
      integer(c_size_t) :: bytes
    end function
  end interface

  cp = stdcpu
  if (c_associated(stdgpu)) cp = stdgpu
  clh = clopen(cp, "fortran_kernels.cl")
  call check(c_associated(clh), "clopen: " // clerror())
  kargs = clsym(cp, clh, "args_kern")
  kconv = clsym(cp, clh, "convert_kern")
  ksum = clsym(cp, clh, "group_sum")
  v%s = [1.0, 2.0, 3.0, 4.0]

  call clallocate(cp, out, [11])
  out = 0
  ev = clmsync(cp, 0, out, CL_MEM_DEVICE)
  ndr = clndrange_init1d(0, 1, 1)
  ev = clforka(cp, 0, kargs, ndr, CL_EVENT_WAIT, -7_int8, 3000_int16, -123456_int32, &
               5000000000_int64, 0.25_real32, 1d0 / 3d0, cmplx(1.5, -2.5, real32), &
               cmplx(1d0 / 7d0, -9d0, real64), v, out)
  call check(c_associated(ev), "clforka with every kind: " // clerror())
  ev = clmsync(cp, 0, out, CL_MEM_HOST)
  call check(all(out == want), "clforka: each value reaches the kernel")

  out = 0
  ev = clmsync(cp, 0, out, CL_MEM_DEVICE)
  rc = 0
  rc = rc + abs(clarg_set(cp, kargs, 0, -7_int8))
  rc = rc + abs(clarg_set(cp, kargs, 1, 3000_int16))
  rc = rc + abs(clarg_set(cp, kargs, 2, -123456_int32))
  rc = rc + abs(clarg_set(cp, kargs, 3, 5000000000_int64))
  rc = rc + abs(clarg_set(cp, kargs, 4, 0.25_real32))
  rc = rc + abs(clarg_set(cp, kargs, 5, 1d0 / 3d0))
  rc = rc + abs(clarg_set(kargs, 6, cmplx(1.5, -2.5, real32)))
  rc = rc + abs(clarg_set(kargs, 7, cmplx(1d0 / 7d0, -9d0, real64)))
  rc = rc + abs(clarg_set(cp, kargs, 8, v))
  rc = rc + abs(clarg_set_global(cp, kargs, 9, out))
  call check(rc == 0, "clarg_set of every kind: " // clerror())
  ev = clfork(cp, 0, kargs, ndr, CL_EVENT_WAIT)
  ev = clmsync(cp, 0, out, CL_MEM_HOST)
  call check(all(out == want), "clarg_set: each value reaches the kernel")

  ! Conversions: a real for an int, an int64 for a float.
  out = 0
  ev = clmsync(cp, 0, out, CL_MEM_DEVICE)
  ev = clforka(cp, 0, kconv, ndr, CL_EVENT_WAIT, 41.75_real64, 3_int64, out)
  call check(c_associated(ev), "clforka converting: " // clerror())
  ev = clmsync(cp, 0, out, CL_MEM_HOST)
  call check(out(1) == 41d0 .and. out(2) == 3d0, "values converted as a C prototype converts them")

  ! A pointer for an int parameter is refused, with both types named.
  pout = c_loc(out)
  ev = clforka(cp, 0, kconv, ndr, CL_EVENT_WAIT, clptr(pout), 1.0, out)
  msg = clerror()
  call check(.not. c_associated(ev), "a pointer for an int is refused")
  call check(index(msg, "int") > 0, "the refusal names the parameter's type: " // msg)
  ! clptr for a __global parameter works.
  ev = clforka(cp, 0, kconv, ndr, CL_EVENT_WAIT, 5, 6.0, clptr(pout))
  call check(c_associated(ev), "clptr for a __global parameter: " // clerror())
  rc = clarg_set(cp, kconv, 2, clptr(pout))
  call check(rc == 0, "clarg_set of clptr(p): " // clerror())
  rc = clarg_set(cp, kconv, 0, clptr(pout))
  call check(rc /= 0, "clarg_set of clptr(p) for an int is refused")
  ! A type clforka does not take.
  ev = clforka(cp, 0, kconv, ndr, CL_EVENT_WAIT, .true., 1.0, out)
  msg = clerror()
  call check(.not. c_associated(ev) .and. index(msg, "argument 1") > 0, &
             "a logical is refused naming the argument: " // msg)

  ! __local scratch: per work-item, for the whole group, and clarg_set_local.
  call clallocate(cp, x, [256])
  call clallocate(cp, sums, [256])
  x = [(real(k, real32), k = 1, 256)]
  ev = clmsync(cp, 0, x, CL_MEM_DEVICE)
  ndr = clndrange_init1d(0, 256, 32)
  ev = clforka(cp, 0, ksum, ndr, CL_EVENT_WAIT, x, cllocal_per_item(4), sums)
  call check(c_associated(ev), "clforka with cllocal_per_item: " // clerror())
  ev = clmsync(cp, 0, sums, CL_MEM_HOST)
  call check(all([(sums(g) == sum(x((g - 1) * 32 + 1:g * 32)), g = 1, 8)]), &
             "group sums through __local memory per work-item")
  sums = 0
  ev = clmsync(cp, 0, sums, CL_MEM_DEVICE)
  ev = clforka(cp, 0, ksum, ndr, CL_EVENT_WAIT, x, cllocal(32 * 4), sums)
  ev = clmsync(cp, 0, sums, CL_MEM_HOST)
  call check(sums(8) == sum(x(225:256)), "group sums through cllocal")
  sums = 0
  ev = clmsync(cp, 0, sums, CL_MEM_DEVICE)
  scratch_fn = c_funloc(scratch_bytes)
  ev = clforka(cp, 0, ksum, ndr, CL_EVENT_WAIT, x, cllocal_fn(scratch_fn), sums)
  call check(c_associated(ev), "clforka with cllocal_fn: " // clerror())
  ev = clmsync(cp, 0, sums, CL_MEM_HOST)
  call check(sums(3) == sum(x(65:96)), "group sums through cllocal_fn")
  sums = 0
  ev = clmsync(cp, 0, sums, CL_MEM_DEVICE)
  rc = clarg_set_global(cp, ksum, 0, x) + clarg_set_local(cp, ksum, 1, 32 * 4) + &
       clarg_set_global(cp, ksum, 2, sums)
  call check(rc == 0, "clarg_set_local")
  ev = clfork(cp, 0, ksum, ndr, CL_EVENT_WAIT)
  ev = clmsync(cp, 0, sums, CL_MEM_HOST)
  call check(sums(1) == sum(x(1:32)), "group sums through clarg_set_local")

  call cldeallocate(x)
  call cldeallocate(sums)
  call cldeallocate(out)
  call check(clclose(cp, clh) == 0, "clclose")
  call finish("fortran_args")

end program fortran_args

! cllocal_fn's function (an external bind(C) function: gfortran 12 cannot
! take c_funloc of an internal one): one float per work-item of the group.
function scratch_bytes(local, dim, user) bind(C, name="fortran_args_scratch_bytes") result(bytes)
  use, intrinsic :: iso_c_binding, only: c_ptr, c_size_t, c_f_pointer, c_associated
  implicit none
  type(c_ptr), value :: local, user
  integer(c_size_t), value :: dim
  integer(c_size_t) :: bytes
  integer(c_size_t), pointer :: sizes(:)
  call c_f_pointer(local, sizes, [dim])
  bytes = 4 * product(sizes)
  if (c_associated(user)) bytes = 0
end function scratch_bytes
