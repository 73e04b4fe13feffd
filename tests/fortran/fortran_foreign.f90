! SPDX-License-Identifier: MIT
! fortran_foreign.f90: plain OpenCL commands on clallocate arrays, announced
! with clforeign_begin/clforeign_end, as a program that hands its arrays to
! an OpenCL library does: the program's own interface blocks to OpenCL
! (clEnqueueFillBuffer stands for the library's call) on stdcl_mem's
! buffers, each after a transfer to the device that it must follow.  On the
! kernel queue with a barrier, ended with the command's event; on a queue of
! the program's own with CL_FOREIGN_WAITLIST and the events
! clforeign_waitlist hands out, ended with two events; a ticket ended with
! no events (a marker); cldeallocate and clfree refused with
! STDCL_ESTATE while a ticket is open; a bad access, a bad event and a null
! ticket refused with their messages.  Run by test_fortran in zero-copy and
! copy mode.
program fortran_foreign
  use stdcl
  use fortran_checks
  use, intrinsic :: iso_fortran_env, only: real32
  implicit none

  ! The OpenCL calls the program makes itself (linked with -lOpenCL).
  interface
    function clEnqueueFillBuffer(queue, buffer, pattern, pattern_size, offset, size, &
                                 nwait, wait_list, event) bind(C, name="clEnqueueFillBuffer")
      import :: c_ptr, c_size_t, c_int32_t
      type(c_ptr), value :: queue, buffer, pattern, wait_list
      integer(c_size_t), value :: pattern_size, offset, size
      integer(c_int32_t), value :: nwait
      type(c_ptr), intent(out) :: event
      integer(c_int32_t) :: clEnqueueFillBuffer
    end function
    function clCreateCommandQueue(context, device, properties, errcode) &
        bind(C, name="clCreateCommandQueue")
      import :: c_ptr, c_int64_t, c_int32_t
      type(c_ptr), value :: context, device
      integer(c_int64_t), value :: properties
      integer(c_int32_t), intent(out) :: errcode
      type(c_ptr) :: clCreateCommandQueue
    end function
    function clFinish(queue) bind(C, name="clFinish")
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: queue
      integer(c_int32_t) :: clFinish
    end function
    function clReleaseCommandQueue(queue) bind(C, name="clReleaseCommandQueue")
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: queue
      integer(c_int32_t) :: clReleaseCommandQueue
    end function
    function clReleaseEvent(event) bind(C, name="clReleaseEvent")
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: event
      integer(c_int32_t) :: clReleaseEvent
    end function
  end interface

  integer, parameter :: n = 1024
  type(c_ptr) :: cp, f, q, kq, myq, ev, evs(2), list
  type(c_ptr), pointer :: waits(:)
  type(clforeign_use) :: uses(2)
  real(real32), pointer :: x(:), y(:)
  real(real32), target :: five, seven
  integer(c_int32_t) :: err
  integer(c_int) :: rc, nw
  integer :: stat
  character(len=200) :: errmsg
  character(len=:), allocatable :: msg

  cp = stdcpu
  if (c_associated(stdgpu)) cp = stdgpu
  call check(c_associated(cp), "a default context with devices")
  call clallocate(cp, x, [n])
  call clallocate(cp, y, [n])
  five = 5
  seven = 7

  ! The kernel queue, with a barrier: the fill of x's first half waits for
  ! the transfer of x to the device; y is only read.
  x = 1
  y = 2
  ev = clmsync(cp, 0, x, CL_MEM_DEVICE + CL_EVENT_NOWAIT)
  ev = clmsync(cp, 0, y, CL_MEM_DEVICE + CL_EVENT_NOWAIT)
  uses = [clforeign_use(c_loc(x), CL_MEM_RW), clforeign_use(c_loc(y), CL_MEM_RO)]
  f = clforeign_begin(cp, 0, c_null_ptr, uses)
  call check(c_associated(f), "clforeign_begin on the kernel queue: " // clerror())
  kq = clforeign_queue(f)
  call check(c_associated(kq), "clforeign_queue gives the kernel queue")
  call check(clforeign_waitlist(f, list) == 0 .and. .not. c_associated(list), &
             "clforeign_waitlist without CL_FOREIGN_WAITLIST: no events")
  err = clEnqueueFillBuffer(kq, stdcl_mem(cp, 0, x), c_loc(five), 4_c_size_t, 0_c_size_t, &
                            int(n / 2 * 4, c_size_t), 0, c_null_ptr, ev)
  call check(err == CL_SUCCESS, "clEnqueueFillBuffer on the kernel queue")

  ! While the ticket is open, its arrays cannot be freed.
  call cldeallocate(x, stat=stat, errmsg=errmsg)
  call check(stat == STDCL_ESTATE .and. associated(x) .and. &
             index(errmsg, "in use by foreign commands") > 0, &
             "cldeallocate of an array a ticket names is refused: " // trim(errmsg))
  rc = clfree(c_loc(y))
  msg = clerror()
  call check(rc == STDCL_ESTATE .and. index(msg, "clforeign_end") > 0, &
             "clfree of an array a ticket names is refused: " // msg)

  rc = clforeign_end(f, 1, [ev])
  call check(rc == 0, "clforeign_end with the fill's event: " // clerror())
  call check(clReleaseEvent(ev) == CL_SUCCESS, "clReleaseEvent")
  ev = clmsync(cp, 0, x, CL_MEM_HOST)
  call check(all(x(1:n/2) == 5) .and. all(x(n/2+1:) == 1), &
             "the fill wrote x's first half on the device, after the transfer")

  ! A queue of the program's own, with the wait list instead of a barrier.
  myq = clCreateCommandQueue(stdcl_clcontext(cp), stdcl_device(cp, 0), 0_c_int64_t, err)
  call check(err == CL_SUCCESS .and. c_associated(myq), "clCreateCommandQueue")
  y = 2
  ev = clmsync(cp, 0, y, CL_MEM_DEVICE + CL_EVENT_NOWAIT)
  f = clforeign_begin(cp, 0, myq, clforeign_use(c_loc(y), CL_MEM_RW), CL_FOREIGN_WAITLIST)
  call check(c_associated(f), "clforeign_begin with CL_FOREIGN_WAITLIST: " // clerror())
  q = clforeign_queue(f)
  call check(c_associated(q, myq), "clforeign_queue gives the queue given")
  nw = clforeign_waitlist(f, list)
  call check(nw >= 0 .and. (nw == 0 .neqv. c_associated(list)), &
             "clforeign_waitlist: a list when there are events")
  call check(clforeign_waitlist(f) == nw, "clforeign_waitlist without list")
  if (nw > 0) then
    call c_f_pointer(list, waits, [nw])
    call check(all(c_associated_each(waits)), "the events of the wait list")
  end if
  ! Two commands, each given the wait list; their two events end the ticket.
  err = clEnqueueFillBuffer(myq, stdcl_mem(cp, 0, y), c_loc(seven), 4_c_size_t, 0_c_size_t, &
                            int(n / 4 * 4, c_size_t), nw, list, evs(1))
  call check(err == CL_SUCCESS, "clEnqueueFillBuffer with the wait list")
  err = clEnqueueFillBuffer(myq, stdcl_mem(cp, 0, y), c_loc(seven), 4_c_size_t, &
                            int(n / 4 * 4, c_size_t), int(n / 4 * 4, c_size_t), nw, list, evs(2))
  call check(err == CL_SUCCESS, "clEnqueueFillBuffer with the wait list")
  rc = clforeign_end(f, 2, evs)
  call check(rc == 0, "clforeign_end with two events: " // clerror())
  call check(clReleaseEvent(evs(1)) == CL_SUCCESS .and. clReleaseEvent(evs(2)) == CL_SUCCESS, &
             "clReleaseEvent")
  ev = clmsync(cp, 0, y, CL_MEM_HOST)
  call check(all(y(1:n/2) == 7) .and. all(y(n/2+1:) == 2), &
             "the fill on the program's queue wrote y's first half, after the transfer")
  call check(clFinish(myq) == CL_SUCCESS .and. clReleaseCommandQueue(myq) == CL_SUCCESS, &
             "the program's queue released")

  ! No events: a marker after everything on the ticket's queue.  A bad event
  ! first: refused, the ticket stays open.
  f = clforeign_begin(cp, 0, c_null_ptr, uses, 0)
  call check(c_associated(f), "clforeign_begin with flags 0: " // clerror())
  rc = clforeign_end(f, 1, [c_null_ptr])
  msg = clerror()
  call check(rc == STDCL_EINVAL .and. index(msg, "clforeign_end: events[0] is NULL") > 0, &
             "clforeign_end with a null event is refused: " // msg)
  call check(clforeign_end(f, 0) == 0, "clforeign_end with no events, after a refusal: " // clerror())
  f = clforeign_begin(cp, 0, c_null_ptr, [clforeign_use ::])
  call check(c_associated(f), "clforeign_begin of no arrays: " // clerror())
  call check(clforeign_end(f, 0, [c_ptr ::]) == 0, "clforeign_end of an empty array of events")

  ! Refused: a bad access (nothing changes: the arrays stay free to free),
  ! unknown flags, a null ticket.
  uses(2)%access = 0
  f = clforeign_begin(cp, 0, c_null_ptr, uses)
  msg = clerror()
  call check(.not. c_associated(f) .and. index(msg, "clforeign_begin: uses[1].access is 0x0: " // &
             "give one of CL_MEM_RO, CL_MEM_WO and CL_MEM_RW") > 0, &
             "clforeign_begin with a bad access is refused: " // msg)
  f = clforeign_begin(cp, 0, c_null_ptr, uses(1), CL_FOREIGN_WAITLIST * 4)
  msg = clerror()
  call check(.not. c_associated(f) .and. index(msg, "clforeign_begin: unknown flags 0x4") > 0, &
             "clforeign_begin with unknown flags is refused: " // msg)
  rc = clforeign_end(c_null_ptr, 0)
  msg = clerror()
  call check(rc == STDCL_EINVAL .and. index(msg, "clforeign_end: the ticket is NULL") > 0, &
             "clforeign_end of a null ticket is refused: " // msg)
  call check(.not. c_associated(clforeign_queue(c_null_ptr)) .and. &
             clforeign_waitlist(c_null_ptr) == 0, "clforeign_queue and clforeign_waitlist of a null ticket")

  ! stdcl_queue is the queue a null queue gave (taken last: it moves the
  ! device's transfers onto it).
  call check(c_associated(stdcl_queue(cp, 0), kq), "the kernel queue is stdcl_queue's")
  call cldeallocate(x, stat=stat)
  call check(stat == 0, "cldeallocate once the tickets are ended")
  call cldeallocate(y, stat=stat)
  call check(stat == 0, "cldeallocate once the tickets are ended")
  call finish("fortran_foreign")

contains

  elemental logical function c_associated_each(p)
    type(c_ptr), intent(in) :: p
    c_associated_each = c_associated(p)
  end function

end program fortran_foreign
