! SPDX-License-Identifier: MIT
! fortran_errors.f90: strings and errors the Fortran way.  Names, paths and
! options lose their trailing blanks, source text keeps its own; clerror(),
! clbuildlog() and stdcl_version() are Fortran strings; a failing function
! returns what C returns with the reason in clerror(); a failing subroutine
! sets stat and errmsg; array sections: a contiguous one syncs exactly its
! bytes, a non-contiguous one is refused with a message.  Run by
! test_fortran in zero-copy and copy mode.
program fortran_errors
  use stdcl
  use fortran_checks
  use, intrinsic :: iso_fortran_env, only: real32
  implicit none
  type(c_ptr) :: cp, clh, krn, ev, bad
  character(len=:), allocatable :: msg, log
  character(len=200) :: errmsg
  character(len=64) :: padded
  real(real32), pointer :: a(:,:), b(:,:)
  integer :: stat, k
  type(clndrange_struct) :: ndr
  logical :: copy_mode
  character(len=8) :: zc

  cp = stdcpu
  if (c_associated(stdgpu)) cp = stdgpu

  call check(stdcl_version() == STDCL_VERSION_STRING, "stdcl_version() is the header's version")
  call check(clerror() == "", "clerror() is empty before any failure")

  ! Names with trailing blanks, as a fixed-length variable holds them.
  padded = "fortran_kernels.cl"
  clh = clopen(cp, padded)
  call check(c_associated(clh), "clopen of a blank-padded name: " // clerror())
  padded = "copy_bytes"
  krn = clsym(cp, clh, padded, CLLD_NOW)
  call check(c_associated(krn), "clsym of a blank-padded name")
  log = clbuildlog(cp, clh, 0)
  call check(clerror() == "", "clbuildlog of a built program succeeds")
  call check(clclose(cp, clh) == 0, "clclose")

  ! A missing file: a null handle, the name in the message, no blanks.
  bad = clopen(cp, "no_such_kernels.cl     ")
  msg = clerror()
  call check(.not. c_associated(bad), "clopen of a missing file returns c_null_ptr")
  call check(index(msg, "no_such_kernels.cl") > 0, "clerror() names the file: " // msg)
  call check(index(msg, "no_such_kernels.cl ") == 0, "the name lost its trailing blanks")
  call check(clerror() == "", "clerror() is cleared once read")

  ! STDCL 1.6's strings ending in C_NULL_CHAR.
  clh = clopen(cp, "fortran_kernels.cl" // C_NULL_CHAR, CLLD_NOW)
  call check(c_associated(clh), "clopen of a C_NULL_CHAR-terminated name")
  call check(clclose(cp, clh) == 0, "clclose")

  ! Source text and options: a build error gives the compiler's log.
  clh = clsopen(cp, "__kernel void k(__global int* a) { a[0] = SCALE; }" // new_line("a"))
  msg = clerror()
  call check(.not. c_associated(clh), "clsopen of a kernel that does not compile fails")
  call check(index(msg, "SCALE") > 0, "clerror() holds the compiler's log")
  clh = clsopen_opt(cp, "__kernel void k(__global int* a) { a[0] = SCALE; }", &
                    "-D SCALE=3        ")
  call check(c_associated(clh), "clsopen_opt with blank-padded options: " // clerror())
  call check(clclose(cp, clh) == 0, "clclose")

  ! Subroutines: stat and errmsg.
  call clallocate(cp, a, [4, -1], stat=stat, errmsg=errmsg)
  call check(stat == STDCL_EINVAL, "clallocate of a negative extent sets stat")
  call check(index(errmsg, "positive") > 0, "errmsg says why: " // trim(errmsg))
  call check(.not. associated(a), "the array stays unassociated")
  call clallocate(cp, a, [4, 4, 4], stat=stat, errmsg=errmsg)
  call check(stat == STDCL_EINVAL .and. index(errmsg, "rank") > 0, &
             "a shape of the wrong size: " // trim(errmsg))
  call cldeallocate(a, stat=stat)
  call check(stat /= 0, "cldeallocate of an unassociated pointer sets stat")
  allocate(b(3, 3))
  call cldeallocate(b, stat=stat, errmsg=errmsg)
  call check(stat /= 0 .and. index(errmsg, "clallocate") > 0, &
             "cldeallocate of an ALLOCATEd array is refused: " // trim(errmsg))
  deallocate(b)

  ! Sections.
  call get_environment_variable("STDCL_ZERO_COPY", zc)
  copy_mode = zc == "0"
  call clallocate(cp, a, [8, 5])
  call clallocate(cp, b, [8, 5])
  a = reshape([(real(k, real32), k = 1, 40)], [8, 5])
  ev = clmsync(cp, 0, a, CL_MEM_DEVICE)
  ev = clmsync(cp, 0, a(2, :), CL_MEM_DEVICE)
  msg = clerror()
  call check(.not. c_associated(ev), "clmsync of a non-contiguous section is refused")
  call check(index(msg, "not contiguous") > 0, "the message says so: " // msg)
  ev = clmsyncn(cp, 0, a(1:8:2, 1), CL_MEM_DEVICE)
  call check(.not. c_associated(ev), "clmsyncn of a strided section is refused")
  ! Host changes columns 2 and 3, syncs only column 3: in copy mode the
  ! device's column 2 keeps the old values.
  a(:, 2) = -a(:, 2)
  a(:, 3) = -a(:, 3)
  ev = clmsync(cp, 0, a(:, 3), CL_MEM_DEVICE)
  call check(c_associated(ev), "clmsync of a contiguous section: " // clerror())
  b = 0
  ev = clmsync(cp, 0, b, CL_MEM_DEVICE)
  krn = clsym(cp, clopen(cp, "fortran_kernels.cl"), "copy_bytes")
  ndr = clndrange_init1d(0, 32, 0)
  ev = clforka(cp, 0, krn, ndr, CL_EVENT_WAIT, a, b, 160)
  ev = clmsync(cp, 0, b, CL_MEM_HOST)
  call check(all(b(:, 3) == a(:, 3)) .and. all(b(:, 1) == a(:, 1)), &
             "the synced section reached the device")
  if (copy_mode) then
    call check(all(b(:, 2) == -a(:, 2)), "copy mode: the column not synced kept its old values")
  end if
  call cldeallocate(a)
  call cldeallocate(b)
  call finish("fortran_errors")

end program fortran_errors
