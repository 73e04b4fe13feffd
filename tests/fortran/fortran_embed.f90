! SPDX-License-Identifier: MIT
! fortran_embed.f90: a Fortran program whose kernel is embedded by clcc
! (fortran_embed.cl, linked as an object): clopen with an empty name opens
! the embedded programs, clsym finds the kernel through the handle and
! through c_null_ptr (every open program).  Run by test_fortran from a
! folder without the .cl file.
program fortran_embed
  use stdcl
  use, intrinsic :: iso_fortran_env, only: int32, error_unit
  implicit none
  type(c_ptr) :: cp, h, k1, k2, ev
  type(clndrange_struct) :: ndr
  integer(int32), pointer :: a(:)
  integer :: i

  cp = stdcpu
  if (c_associated(stdgpu)) cp = stdgpu
  h = clopen(cp, "", CLLD_NOW)
  if (.not. c_associated(h)) call stop_with("clopen of the embedded programs: " // clerror())
  k1 = clsym(cp, h, "embed_scale")
  k2 = clsym(cp, c_null_ptr, "embed_scale")
  if (.not. c_associated(k1, k2)) call stop_with("clsym by handle and by c_null_ptr differ")
  call clallocate(cp, a, [100])
  a = 0
  ev = clmsync(cp, 0, a, CL_MEM_DEVICE)
  ndr = clndrange_init1d(0, 100, 0)
  ev = clforka(cp, 0, k1, ndr, CL_EVENT_WAIT, 7, a)
  ev = clmsync(cp, 0, a, CL_MEM_HOST)
  if (any(a /= [(7 * i, i = 1, 100)])) call stop_with("wrong results")
  call cldeallocate(a)
  if (clclose(cp, h) /= 0) call stop_with("clclose")
  print '(a)', "fortran_embed: ok"

contains

  subroutine stop_with(msg)
    character(len=*), intent(in) :: msg
    write (error_unit, '(a)') "FAILED: " // msg
    error stop 1
  end subroutine

end program fortran_embed
