! SPDX-License-Identifier: MIT
! fortran_checks.f90: what the Fortran test programs share: a check that counts
! passes and failures (naming each failure on standard error), and the summary
! line with which a program ends ("NAME: N checks passed, M failed"; error
! stop 1 after a failure).
module fortran_checks
  use, intrinsic :: iso_fortran_env, only: error_unit
  implicit none
  private
  public :: check, finish
  integer, save :: nok = 0, nfail = 0

contains

  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    if (cond) then
      nok = nok + 1
    else
      nfail = nfail + 1
      write (error_unit, '(a)') "FAILED: " // what
    end if
  end subroutine

  subroutine finish(name)
    character(len=*), intent(in) :: name
    print '(a, i0, a, i0, a)', name // ": ", nok, " checks passed, ", nfail, " failed"
    if (nfail > 0) error stop 1
  end subroutine

end module fortran_checks
