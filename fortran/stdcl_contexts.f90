! SPDX-License-Identifier: MIT
! stdcl_contexts.f90: the default contexts, libstdcl's CLCONTEXT* variables,
! for the module stdcl (which re-exports them).  Only its module file is
! built (gfortran -fsyntax-only): gfortran would make the bind(C) variables
! common symbols of an object file, and a library holding them could stand
! in for libstdcl's own.  Programs reference libstdcl's variables directly.
! A context is c_null_ptr when it has no device: test with c_associated.
module stdcl_contexts
  use, intrinsic :: iso_c_binding, only: c_ptr
  implicit none
  type(c_ptr), bind(C, name="stddev") :: stddev
  type(c_ptr), bind(C, name="stdcpu") :: stdcpu
  type(c_ptr), bind(C, name="stdgpu") :: stdgpu
  type(c_ptr), bind(C, name="stdacc") :: stdacc
  type(c_ptr), bind(C, name="stdrpu") :: stdrpu
  type(c_ptr), bind(C, name="stdnpu") :: stdnpu

end module stdcl_contexts
