! SPDX-License-Identifier: MIT
! fortran_stop.f90: a failing subroutine without stat stops the program
! (error stop) with clerror()'s message; test_fortran checks the exit
! status and the message.
program fortran_stop
  use stdcl
  use, intrinsic :: iso_fortran_env, only: real64
  implicit none
  real(real64), pointer :: a(:)
  call clallocate(stdcpu, a, [0])
  print '(a)', "not reached"
end program fortran_stop
