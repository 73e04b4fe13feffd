! SPDX-License-Identifier: MIT
! fortran_misc.f90: the rest of stdcl.h from Fortran.  Contexts (the
! default ones, clcontext_create/destroy, how they were chosen), device
! and context information (clgetdevinfo, clstat, kernel limits, memory
! alignment, the OpenCL objects), clndrange_fit, event times (with
! STDCL_PROFILE=1: clevent_times of a kept event; without: STDCL_ESTATE),
! clmadopt of an ALLOCATEd array, clmctl, stdcl_mem_base, clmcopy of
! arrays and sections, and the type(c_ptr) forms of clmsyncn and clreduce.
! Run by test_fortran in zero-copy and copy mode.
program fortran_misc
  use stdcl
  use fortran_checks
  use, intrinsic :: iso_fortran_env, only: int64, real32
  implicit none
  type(c_ptr) :: cp, clh, krn, ev, cp1, p, base
  type(cldev_info), allocatable :: info(:)
  type(clstat_info) :: st
  type(stdcl_kernel_limits_t) :: lim
  type(clndrange_struct) :: ndr
  real(real32), pointer :: x(:), y(:)
  real(real32), allocatable, target :: h(:)
  real(real32), target :: total
  integer(c_int64_t) :: t0, t1
  integer(c_size_t) :: off, align
  integer(c_int) :: ndev, rc, d
  integer :: k
  character(len=8) :: prof
  character(len=:), allocatable :: msg

  msg = ""
  cp = stdcpu
  if (c_associated(stdgpu)) cp = stdgpu
  ndev = clgetndev(cp)
  call check(ndev >= 1, "clgetndev")
  call check(.not. c_associated(stdrpu) .and. .not. c_associated(stdnpu), "stdrpu and stdnpu are null")
  call check(len(stdcl_context_why(cp)) > 0, "stdcl_context_why says how the context was chosen")

  ! Devices.
  allocate(info(ndev))
  call check(clgetdevinfo(cp, info) == 0, "clgetdevinfo")
  do d = 1, ndev
    call check(len(cldev_string(info(d)%dev_name)) > 0, "a device name")
    call check(info(d)%dev_max_wg_sz >= 1 .and. info(d)%dev_global_mem_sz > 0, "device sizes")
    call check(iand(info(d)%dev_type, CL_DEVICE_TYPE_ALL) /= 0, "a device type")
  end do
  if (ndev > 1) then
    rc = clgetdevinfo(cp, info(1:1))
    msg = clerror()
    call check(rc == STDCL_EINVAL .and. index(msg, "fewer entries") > 0, &
               "clgetdevinfo with too small an array is refused: " // msg)
  end if
  call check(c_associated(stdcl_platform(cp)) .and. c_associated(stdcl_clcontext(cp)) .and. &
             c_associated(stdcl_device(cp, 0)) .and. c_associated(stdcl_queue(cp, 0)), &
             "the OpenCL objects of the context")
  call check(.not. c_associated(stdcl_device(cp, ndev)), "no device past the last")
  align = stdcl_mem_align(cp)
  call check(align >= 1 .and. iand(align, align - 1) == 0, "stdcl_mem_align is a power of two")

  clh = clopen(cp, "fortran_kernels.cl")
  krn = clsym(cp, clh, "saxpy")
  call check(c_associated(krn), "clsym saxpy")
  call check(clstat(cp, st) == 0 .and. st%ndev == ndev .and. st%nprg >= 1 .and. st%nkrn >= 1, &
             "clstat counts devices, programs and kernels")
  call check(stdcl_kernel_limits(cp, 0, krn, lim) == 0 .and. lim%work_group_size >= 1 .and. &
             lim%max_work_item_sizes(1) >= 1, "stdcl_kernel_limits")
  ndr = clndrange_init1d(0, 1024, 0)
  call check(clndrange_fit(cp, 0, krn, ndr) == 0 .and. ndr%ltid(1) >= 1 .and. &
             mod(1024_c_size_t, ndr%ltid(1)) == 0, "clndrange_fit chooses a local size")

  ! Event times.
  call clallocate(cp, x, [1024], flags=CL_MEM_RO)
  call clallocate(cp, y, [1024])
  x = [(real(k, real32), k = 1, 1024)]
  y = 1
  ev = clmsync(cp, 0, x, CL_MEM_DEVICE)
  ev = clmsync(cp, 0, y, CL_MEM_DEVICE)
  ndr = clndrange_init1d(0, 1024, 0)
  ev = clforka(cp, 0, krn, ndr, CL_EVENT_WAIT + CL_EVENT_NORELEASE, 2.0_real32, x, y)
  call check(c_associated(ev), "clforka keeping its event")
  rc = clevent_times(ev, t0, t1)
  call get_environment_variable("STDCL_PROFILE", prof)
  if (prof == "1") then
    call check(rc == 0 .and. t1 >= t0, "clevent_times of a profiled launch")
  else
    call check(rc == STDCL_ESTATE .and. index(clerror(), "STDCL_PROFILE") > 0, &
               "clevent_times without profiling says to set STDCL_PROFILE")
  end if
  call check(c_associated(clwaitev(cp, 0, ev, 0)), "clwaitev releases the kept event")
  ev = clmsync(cp, 0, y, CL_MEM_HOST)
  call check(all(y == 2 * x + 1), "the launch's results")

  ! clmctl, stdcl_mem_base, clmemptr.
  rc = clmctl(c_loc(x), CL_MCTL_GET_STATUS)
  call check(rc >= 0 .and. iand(rc, CL_MEM_RO) /= 0, "clmctl CL_MCTL_GET_STATUS has CL_MEM_RO")
  p = c_loc(x)
  base = stdcl_mem_base(c_loc(x(10)), off)
  call check(c_associated(base, p) .and. off == 36, "stdcl_mem_base of an element")
  base = clmemptr(cp, c_loc(x(1000)))
  call check(c_associated(base, p), "clmemptr of an element")

  ! The type(c_ptr) forms of clmsyncn and clreduce.
  x(5:8) = -x(5:8)
  ev = clmsyncn(cp, 0, c_loc(x(5)), 16_c_size_t, CL_MEM_DEVICE)
  call check(c_associated(ev), "clmsyncn of a c_ptr: " // clerror())
  rc = clreduce(cp, 0, c_loc(x), 1024_c_size_t, CL_REDUCE_FLOAT, CL_REDUCE_SUM, c_loc(total))
  call check(rc == 0 .and. total == sum(x), "clreduce of a c_ptr")

  ! clmcopy: whole arrays; sections that end with their allocation; a
  ! section that does not is refused.
  y = 0
  ev = clmsync(cp, 0, y, CL_MEM_DEVICE)
  ev = clmcopy(cp, 0, x(901:1024), y(901:1024), CL_EVENT_WAIT)
  call check(c_associated(ev), "clmcopy of sections that end their allocations: " // clerror())
  ev = clmsync(cp, 0, y, CL_MEM_HOST)
  call check(all(y(901:1024) == x(901:1024)) .and. all(y(1:900) == 0), &
             "clmcopy copied exactly the sections")
  ev = clmcopy(cp, 0, x(1:100), y(1:100), CL_EVENT_WAIT)
  msg = clerror()
  call check(.not. c_associated(ev) .and. index(msg, "clmcopy") > 0, &
             "clmcopy of sections shorter than C would copy is refused: " // msg)
  ev = clmcopy(cp, 0, x, y, CL_EVENT_WAIT)
  ev = clmsync(cp, 0, y, CL_MEM_HOST)
  call check(all(y == x), "clmcopy of whole arrays")

  ! clmadopt of an ALLOCATEd array, used by a kernel, then unregistered.
  allocate(h(1024))
  h = 3
  call check(clmadopt(cp, h, CL_MEM_RW) == 0, "clmadopt of an ALLOCATEd array: " // clerror())
  ev = clmsync(cp, 0, h, CL_MEM_DEVICE)
  ev = clforka(cp, 0, krn, ndr, CL_EVENT_WAIT, 0.5_real32, x, h)
  call check(c_associated(ev), "clforka with the adopted array: " // clerror())
  ev = clmsync(cp, 0, h, CL_MEM_HOST)
  call check(all(h == 0.5_real32 * x + 3), "the kernel wrote the adopted array")
  call check(clfree(c_loc(h)) == 0, "clfree unregisters it")
  deallocate(h)

  ! A context of our own: one CPU device.
  cp1 = clcontext_create("", CL_DEVICE_TYPE_CPU, max_ndev=1)
  call check(c_associated(cp1) .and. clgetndev(cp1) == 1, "clcontext_create of one CPU device")
  if (c_associated(cp1)) then
    p = clsopen(cp1, "__kernel void one(__global int* a) { a[get_global_id(0)] = 1; }")
    call check(c_associated(clsym(cp1, p, "one")), "a program in the new context")
    call check(clcontext_destroy(cp1) == 0, "clcontext_destroy")
  end if
  cp1 = clcontext_create("no such platform", CL_DEVICE_TYPE_ALL)
  call check(.not. c_associated(cp1), "clcontext_create of an unknown platform gives c_null_ptr")
  call check(clcontext_destroy(stdcpu) == STDCL_EINVAL, "the default contexts cannot be destroyed")

  call cldeallocate(x)
  call cldeallocate(y)
  call check(clclose(cp, clh) == 0, "clclose")
  call finish("fortran_misc")

end program fortran_misc
