! SPDX-License-Identifier: MIT
! stdcl.F90: the Fortran module stdcl, libstdcl for Fortran programs
! (libstdcl_fortran; `use stdcl`, link with pkg-config stdcl-fortran).
!
! Two ways to write the same calls:
! - STDCL 1.6's: type(c_ptr) handles and memory, strings ending in
!   //C_NULL_CHAR, clfork(cp, devnum, krn, c_loc(ndr), flags), the kind
!   parameters CL_INT, CL_FLOAT, CL_DOUBLE and the type clndrange_struct.
!   COPRTHR's Fortran programs build unchanged.
! - A Fortran programmer's: character(len=*) names (trailing blanks
!   ignored), clerror() as a Fortran string, clallocate/cldeallocate giving
!   pointer arrays of rank 1 to 7 in clmalloc memory, clmsync and friends
!   taking those arrays and their contiguous sections, clforka with the
!   kernel's arguments in the call, and stat/errmsg as ALLOCATE has them.
!
! Every constant comes from stdcl.h (stdcl_constants.inc is written at build
! time by gen_constants.c).  Functions return what the C call returns (a
! null c_ptr or a negative code on failure, the reason in clerror());
! subroutines take optional stat and errmsg and without stat stop the
! program with clerror()'s message.  The module keeps no state: each call
! is the C library's, with its thread safety.

! stdcl_c: the types and C interfaces of the module stdcl (which re-exports
! the public ones); not meant to be used on its own.
module stdcl_c
  use, intrinsic :: iso_c_binding
  implicit none

  ! Constants of stdcl.h, generated.
#include "stdcl_constants.inc"

  ! clndrange_t (104 bytes): dimensions, global offset, global size, local
  ! size, with STDCL 1.6's component names.  A local size of 0 is chosen by
  ! clfork/clforka and written back.
  type, bind(C) :: clndrange_struct
    integer(c_size_t) :: dim
    integer(c_size_t) :: gtid_offset(4)
    integer(c_size_t) :: gtid(4)
    integer(c_size_t) :: ltid(4)
  end type

  ! struct clstat_info, struct cldev_info, struct stdcl_kernel_limits.
  type, bind(C) :: clstat_info
    integer(c_int32_t) :: impid, ndev, nprg, nkrn
  end type

  type, bind(C) :: cldev_info
    integer(c_int64_t) :: dev_type
    integer(c_int32_t) :: dev_vendor_id, dev_max_core, dev_max_wi_dim
    integer(c_size_t) :: dev_max_wi_sz(4)
    integer(c_int32_t) :: dev_max_wi_sz_is_symmetric
    integer(c_size_t) :: dev_max_wg_sz
    integer(c_int32_t) :: dev_pref_vec_char, dev_pref_vec_short, dev_pref_vec_int, &
                          dev_pref_vec_long, dev_pref_vec_float, dev_pref_vec_double
    integer(c_int32_t) :: dev_max_freq
    integer(c_int64_t) :: dev_addr_bits, dev_global_mem_sz, dev_max_mem_alloc_sz
    integer(c_int32_t) :: dev_img_sup, dev_max_img_args_r, dev_max_img_args_w
    integer(c_size_t) :: dev_img2d_max_width, dev_img2d_max_height, dev_img3d_max_width, &
                         dev_img3d_max_height, dev_img3d_max_depth
    integer(c_int32_t) :: dev_max_samplers
    integer(c_size_t) :: dev_max_param_sz
    integer(c_int32_t) :: dev_mem_base_addr_align
    character(kind=c_char) :: dev_name(256), dev_vendor(256), dev_version(256), &
                              dev_drv_version(256)
    integer(c_int64_t) :: dev_local_mem_sz
  end type

  type, bind(C) :: stdcl_kernel_limits_t
    integer(c_size_t) :: work_group_size, group_size_multiple
    integer(c_int64_t) :: local_mem_size, private_mem_size
    integer(c_size_t) :: reqd_work_group_size(3), max_work_item_sizes(3)
    integer(c_int64_t) :: device_local_mem_size
  end type

  ! struct clforeign_use: one allocation that foreign commands use, ptr
  ! anywhere in it (c_loc of a clallocate array, or of an element of one),
  ! access CL_MEM_RO, CL_MEM_WO or CL_MEM_RW, and size the bytes used from
  ! ptr (0, the default: to the end of the allocation).
  type, bind(C) :: clforeign_use
    type(c_ptr) :: ptr
    integer(c_int) :: access
    integer(c_size_t) :: size = 0
  end type

  ! ------------------------------------------------------------------
  ! The C calls, as they are (the public ones keep their C names).
  ! ------------------------------------------------------------------
  interface
    function clgetndev(cp) bind(C, name="clgetndev")
      import :: c_ptr, c_int
      type(c_ptr), value :: cp
      integer(c_int) :: clgetndev
    end function
    subroutine stdcl_init() bind(C, name="stdcl_init")
    end subroutine
    function clcontext_destroy(cp) bind(C, name="clcontext_destroy")
      import :: c_ptr, c_int
      type(c_ptr), value :: cp
      integer(c_int) :: clcontext_destroy
    end function
    function clclose(cp, handle) bind(C, name="clclose")
      import :: c_ptr, c_int
      type(c_ptr), value :: cp, handle
      integer(c_int) :: clclose
    end function
    function clfree(ptr) bind(C, name="clfree")
      import :: c_ptr, c_int
      type(c_ptr), value :: ptr
      integer(c_int) :: clfree
    end function
    function clsizeofmem(ptr) bind(C, name="clsizeofmem")
      import :: c_ptr, c_size_t
      type(c_ptr), value :: ptr
      integer(c_size_t) :: clsizeofmem
    end function
    function stdcl_mem_base(ptr, offset) bind(C, name="stdcl_mem_base")
      import :: c_ptr, c_size_t
      type(c_ptr), value :: ptr
      integer(c_size_t), intent(out) :: offset
      type(c_ptr) :: stdcl_mem_base
    end function
    function clmemptr(cp, ptr) bind(C, name="clmemptr")
      import :: c_ptr
      type(c_ptr), value :: cp, ptr
      type(c_ptr) :: clmemptr
    end function
    function clmattach(cp, ptr) bind(C, name="clmattach")
      import :: c_ptr, c_int
      type(c_ptr), value :: cp, ptr
      integer(c_int) :: clmattach
    end function
    function clmdetach(ptr) bind(C, name="clmdetach")
      import :: c_ptr, c_int
      type(c_ptr), value :: ptr
      integer(c_int) :: clmdetach
    end function
    function clflush(cp, devnum, flags) bind(C, name="clflush")
      import :: c_ptr, c_int
      type(c_ptr), value :: cp
      integer(c_int), value :: devnum, flags
      integer(c_int) :: clflush
    end function
    function clwait(cp, devnum, flags) bind(C, name="clwait")
      import :: c_ptr, c_int
      type(c_ptr), value :: cp
      integer(c_int), value :: devnum, flags
      type(c_ptr) :: clwait
    end function
    function stdcl_wait(cp, devnum, flags) bind(C, name="stdcl_wait")
      import :: c_ptr, c_int
      type(c_ptr), value :: cp
      integer(c_int), value :: devnum, flags
      integer(c_int) :: stdcl_wait
    end function
    function clwaitev(cp, devnum, ev, flags) bind(C, name="clwaitev")
      import :: c_ptr, c_int
      type(c_ptr), value :: cp, ev
      integer(c_int), value :: devnum, flags
      type(c_ptr) :: clwaitev
    end function
    function clevent_times(ev, start, end) bind(C, name="clevent_times")
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: ev
      integer(c_int64_t), intent(out) :: start, end
      integer(c_int) :: clevent_times
    end function
    function stdcl_mem_align(cp) bind(C, name="stdcl_mem_align")
      import :: c_ptr, c_size_t
      type(c_ptr), value :: cp
      integer(c_size_t) :: stdcl_mem_align
    end function
    function stdcl_platform(cp) bind(C, name="stdcl_platform")
      import :: c_ptr
      type(c_ptr), value :: cp
      type(c_ptr) :: stdcl_platform
    end function
    function stdcl_clcontext(cp) bind(C, name="stdcl_clcontext")
      import :: c_ptr
      type(c_ptr), value :: cp
      type(c_ptr) :: stdcl_clcontext
    end function
    function stdcl_device(cp, devnum) bind(C, name="stdcl_device")
      import :: c_ptr, c_int
      type(c_ptr), value :: cp
      integer(c_int), value :: devnum
      type(c_ptr) :: stdcl_device
    end function
    function stdcl_queue(cp, devnum) bind(C, name="stdcl_queue")
      import :: c_ptr, c_int
      type(c_ptr), value :: cp
      integer(c_int), value :: devnum
      type(c_ptr) :: stdcl_queue
    end function
    function clstat(cp, info) bind(C, name="clstat")
      import :: c_ptr, c_int, clstat_info
      type(c_ptr), value :: cp
      type(clstat_info), intent(out) :: info
      integer(c_int) :: clstat
    end function
    function stdcl_kernel_limits(cp, devnum, krn, limits) bind(C, name="stdcl_kernel_limits")
      import :: c_ptr, c_int, stdcl_kernel_limits_t
      type(c_ptr), value :: cp, krn
      integer(c_int), value :: devnum
      type(stdcl_kernel_limits_t), intent(out) :: limits
      integer(c_int) :: stdcl_kernel_limits
    end function
    function clforeign_queue(f) bind(C, name="clforeign_queue")
      import :: c_ptr
      type(c_ptr), value :: f
      type(c_ptr) :: clforeign_queue
    end function
    ! n = clforeign_waitlist(f [, list]): list gets the address of the n
    ! events (a const cl_event*, to pass on as a wait list; c_f_pointer
    ! makes it an array), c_null_ptr when there are none.
    function clforeign_waitlist(f, list) bind(C, name="clforeign_waitlist")
      import :: c_ptr, c_int
      type(c_ptr), value :: f
      type(c_ptr), intent(out), optional :: list
      integer(c_int) :: clforeign_waitlist
    end function
    ! rc = clforeign_end(f, nevents [, events]): events holds the nevents
    ! events of the foreign commands ([ev] for one); nevents 0 without
    ! events: a marker after everything enqueued on the ticket's queue so
    ! far.  C's form as it is, not a Fortran one taking size(events):
    ! gfortran (12 at least) checks the rank of type(c_ptr) arguments
    ! neither in calls nor in generic resolution, and an assumed-shape
    ! events given a lone ev would read a descriptor that is not there;
    ! here a lone ev is passed by its address, as C's &ev.
    function clforeign_end(f, nevents, events) bind(C, name="clforeign_end")
      import :: c_ptr, c_int
      type(c_ptr), value :: f
      integer(c_int), value :: nevents
      type(c_ptr), intent(in), optional :: events(*)
      integer(c_int) :: clforeign_end
    end function
  end interface

  ! The C calls behind the module's own procedures (private).
  interface
    function c_clerror() bind(C, name="clerror")
      import :: c_ptr
      type(c_ptr) :: c_clerror
    end function
    subroutine c_stdcl_seterror(msg) bind(C, name="stdcl_seterror")
      import :: c_char
      character(kind=c_char), intent(in), optional :: msg(*)
    end subroutine
    function c_stdcl_version() bind(C, name="stdcl_version")
      import :: c_ptr
      type(c_ptr) :: c_stdcl_version
    end function
    function c_stdcl_context_why(cp) bind(C, name="stdcl_context_why")
      import :: c_ptr
      type(c_ptr), value :: cp
      type(c_ptr) :: c_stdcl_context_why
    end function
    function c_clbuildlog(cp, handle, devnum) bind(C, name="clbuildlog")
      import :: c_ptr, c_int
      type(c_ptr), value :: cp, handle
      integer(c_int), value :: devnum
      type(c_ptr) :: c_clbuildlog
    end function
    function c_strlen(s) bind(C, name="strlen")
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: c_strlen
    end function
    function c_clcontext_create(names, devtype, max_ndev, ctxprop, flags) &
        bind(C, name="clcontext_create")
      import :: c_ptr, c_char, c_int64_t, c_size_t, c_int
      character(kind=c_char), intent(in), optional :: names(*)
      integer(c_int64_t), value :: devtype
      integer(c_size_t), value :: max_ndev
      type(c_ptr), value :: ctxprop
      integer(c_int), value :: flags
      type(c_ptr) :: c_clcontext_create
    end function
    function c_clopen(cp, file, flags) bind(C, name="clopen")
      import :: c_ptr, c_char, c_int
      type(c_ptr), value :: cp
      character(kind=c_char), intent(in), optional :: file(*)
      integer(c_int), value :: flags
      type(c_ptr) :: c_clopen
    end function
    function c_clsopen(cp, source, flags) bind(C, name="clsopen")
      import :: c_ptr, c_char, c_int
      type(c_ptr), value :: cp
      character(kind=c_char), intent(in) :: source(*)
      integer(c_int), value :: flags
      type(c_ptr) :: c_clsopen
    end function
    function c_clsopen_named(cp, source, name, flags) bind(C, name="clsopen_named")
      import :: c_ptr, c_char, c_int
      type(c_ptr), value :: cp
      character(kind=c_char), intent(in) :: source(*), name(*)
      integer(c_int), value :: flags
      type(c_ptr) :: c_clsopen_named
    end function
    function c_clopen_opt(cp, file, options, flags) bind(C, name="clopen_opt")
      import :: c_ptr, c_char, c_int
      type(c_ptr), value :: cp
      character(kind=c_char), intent(in) :: file(*), options(*)
      integer(c_int), value :: flags
      type(c_ptr) :: c_clopen_opt
    end function
    function c_clsopen_opt(cp, source, options, flags) bind(C, name="clsopen_opt")
      import :: c_ptr, c_char, c_int
      type(c_ptr), value :: cp
      character(kind=c_char), intent(in) :: source(*), options(*)
      integer(c_int), value :: flags
      type(c_ptr) :: c_clsopen_opt
    end function
    function c_clbuild(cp, handle, options, flags) bind(C, name="clbuild")
      import :: c_ptr, c_char, c_int
      type(c_ptr), value :: cp, handle
      character(kind=c_char), intent(in), optional :: options(*)
      integer(c_int), value :: flags
      type(c_ptr) :: c_clbuild
    end function
    function c_clsym(cp, handle, name, flags) bind(C, name="clsym")
      import :: c_ptr, c_char, c_int
      type(c_ptr), value :: cp, handle
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), value :: flags
      type(c_ptr) :: c_clsym
    end function
    function c_clmalloc(cp, size, flags) bind(C, name="clmalloc")
      import :: c_ptr, c_size_t, c_int
      type(c_ptr), value :: cp
      integer(c_size_t), value :: size
      integer(c_int), value :: flags
      type(c_ptr) :: c_clmalloc
    end function
    function c_clmrealloc(cp, ptr, size, flags) bind(C, name="clmrealloc")
      import :: c_ptr, c_size_t, c_int
      type(c_ptr), value :: cp, ptr
      integer(c_size_t), value :: size
      integer(c_int), value :: flags
      type(c_ptr) :: c_clmrealloc
    end function
    function c_clmadopt(cp, ptr, size, flags) bind(C, name="clmadopt")
      import :: c_ptr, c_size_t, c_int
      type(c_ptr), value :: cp, ptr
      integer(c_size_t), value :: size
      integer(c_int), value :: flags
      integer(c_int) :: c_clmadopt
    end function
    function c_clmsync(cp, devnum, ptr, flags) bind(C, name="clmsync")
      import :: c_ptr, c_int
      type(c_ptr), value :: cp, ptr
      integer(c_int), value :: devnum, flags
      type(c_ptr) :: c_clmsync
    end function
    function c_clmsyncn(cp, devnum, ptr, nbytes, flags) bind(C, name="clmsyncn")
      import :: c_ptr, c_int, c_size_t
      type(c_ptr), value :: cp, ptr
      integer(c_int), value :: devnum, flags
      integer(c_size_t), value :: nbytes
      type(c_ptr) :: c_clmsyncn
    end function
    function c_clmcopy(cp, devnum, src, dst, flags) bind(C, name="clmcopy")
      import :: c_ptr, c_int
      type(c_ptr), value :: cp, src, dst
      integer(c_int), value :: devnum, flags
      type(c_ptr) :: c_clmcopy
    end function
    function c_stdcl_mem(cp, devnum, ptr) bind(C, name="stdcl_mem")
      import :: c_ptr, c_int
      type(c_ptr), value :: cp, ptr
      integer(c_int), value :: devnum
      type(c_ptr) :: c_stdcl_mem
    end function
    function c_clforeign_begin(cp, devnum, queue, uses, nuses, flags) bind(C, name="clforeign_begin")
      import :: c_ptr, c_int, c_size_t, clforeign_use
      type(c_ptr), value :: cp, queue
      integer(c_int), value :: devnum, flags
      type(clforeign_use), intent(in), optional :: uses(*)
      integer(c_size_t), value :: nuses
      type(c_ptr) :: c_clforeign_begin
    end function
    function c_stdcl_arg_set_global(cp, krn, argnum, ptr) bind(C, name="stdcl_arg_set_global")
      import :: c_ptr, c_int
      type(c_ptr), value :: cp, krn, ptr
      integer(c_int), value :: argnum
      integer(c_int) :: c_stdcl_arg_set_global
    end function
    function c_stdcl_arg_set_local(cp, krn, argnum, size) bind(C, name="stdcl_arg_set_local")
      import :: c_ptr, c_int, c_size_t
      type(c_ptr), value :: cp, krn
      integer(c_int), value :: argnum
      integer(c_size_t), value :: size
      integer(c_int) :: c_stdcl_arg_set_local
    end function
    function c_stdcl_arg_sett(cp, krn, argnum, size, type, value) bind(C, name="stdcl_arg_sett")
      import :: c_ptr, c_int, c_size_t
      type(c_ptr), value :: cp, krn, value
      integer(c_int), value :: argnum, type
      integer(c_size_t), value :: size
      integer(c_int) :: c_stdcl_arg_sett
    end function
    function c_clfork(cp, devnum, krn, ndr, flags) bind(C, name="clfork")
      import :: c_ptr, c_int
      type(c_ptr), value :: cp, krn, ndr
      integer(c_int), value :: devnum, flags
      type(c_ptr) :: c_clfork
    end function
    function c_clndrange_fit(cp, devnum, krn, ndr) bind(C, name="clndrange_fit")
      import :: c_ptr, c_int, clndrange_struct
      type(c_ptr), value :: cp, krn
      integer(c_int), value :: devnum
      type(clndrange_struct), intent(inout) :: ndr
      integer(c_int) :: c_clndrange_fit
    end function
    function c_stdcl_forktv(cp, devnum, krn, ndr, flags, nargs, sizes, types, values) &
        bind(C, name="stdcl_forktv")
      import :: c_ptr, c_int, c_size_t
      type(c_ptr), value :: cp, krn, ndr
      integer(c_int), value :: devnum, flags, nargs
      integer(c_size_t), intent(in) :: sizes(*)
      integer(c_int), intent(in) :: types(*)
      type(c_ptr), intent(in) :: values(*)
      type(c_ptr) :: c_stdcl_forktv
    end function
    function c_clgetdevinfo(cp, info) bind(C, name="clgetdevinfo")
      import :: c_ptr, c_int, cldev_info
      type(c_ptr), value :: cp
      type(cldev_info), intent(out) :: info(*)
      integer(c_int) :: c_clgetdevinfo
    end function
    function c_clreduce(cp, devnum, ptr, n, type, op, result) bind(C, name="clreduce")
      import :: c_ptr, c_int, c_size_t
      type(c_ptr), value :: cp, ptr, result
      integer(c_int), value :: devnum, type, op
      integer(c_size_t), value :: n
      integer(c_int) :: c_clreduce
    end function
    function c_clsort(cp, devnum, keys, n, type, flags) bind(C, name="clsort")
      import :: c_ptr, c_int, c_size_t
      type(c_ptr), value :: cp, keys
      integer(c_int), value :: devnum, type, flags
      integer(c_size_t), value :: n
      integer(c_int) :: c_clsort
    end function
    function c_clsort_by_key(cp, devnum, keys, values, n, type, value_size, flags) &
        bind(C, name="clsort_by_key")
      import :: c_ptr, c_int, c_size_t
      type(c_ptr), value :: cp, keys, values
      integer(c_int), value :: devnum, type, flags
      integer(c_size_t), value :: n, value_size
      integer(c_int) :: c_clsort_by_key
    end function
    function c_clscan(cp, devnum, in, out, n, type, op, flags) bind(C, name="clscan")
      import :: c_ptr, c_int, c_size_t
      type(c_ptr), value :: cp, in, out
      integer(c_int), value :: devnum, type, op, flags
      integer(c_size_t), value :: n
      integer(c_int) :: c_clscan
    end function
    function c_stdcl_f_span(a, base, nbytes) bind(C, name="stdcl_f_span")
      import :: c_ptr, c_int, c_size_t
      type(*), intent(in) :: a(..)
      type(c_ptr), intent(out) :: base
      integer(c_size_t), intent(out) :: nbytes
      integer(c_int) :: c_stdcl_f_span
    end function
    function c_stdcl_f_mctl(ptr, op, iarg, w, h, fmt) bind(C, name="stdcl_f_mctl")
      import :: c_ptr, c_int, c_size_t
      type(c_ptr), value :: ptr, fmt
      integer(c_int), value :: op, iarg
      integer(c_size_t), value :: w, h
      integer(c_int) :: c_stdcl_f_mctl
    end function
  end interface

end module stdcl_c

module stdcl
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: int8, int16, int32, int64, real32, real64
  use stdcl_c
  use stdcl_contexts
  implicit none


  ! STDCL 1.6's kind parameters.
  integer, parameter, public :: CL_INT = c_int
  integer, parameter, public :: CL_FLOAT = c_float
  integer, parameter, public :: CL_DOUBLE = c_double

  ! A __local argument sized at launch (stdcl_local_t, whose layout it has;
  ! not bind(C), so that clforka can tell it by its type): make it with
  ! cllocal, cllocal_per_item or cllocal_fn only.
  type :: stdcl_local
    integer(c_int64_t), private :: tag = 0
    integer(c_size_t), private :: bytes = 0
    integer(c_size_t), private :: per_item = 0
    type(c_funptr), private :: fn = c_null_funptr
    type(c_ptr), private :: user = c_null_ptr
  end type

  ! A type(c_ptr) given to clforka: clptr(p).
  type :: clptr_arg
    type(c_ptr) :: p = c_null_ptr
  end type

  ! OpenCL vector types for kernel arguments (clforka, clarg_set), laid out
  ! as cl_int2 ... cl_double4 (not bind(C), so that clforka can tell them).
  type :: cl_int2
    integer(c_int32_t) :: s(2)
  end type
  type :: cl_int4
    integer(c_int32_t) :: s(4)
  end type
  type :: cl_float2
    real(c_float) :: s(2)
  end type
  type :: cl_float4
    real(c_float) :: s(4)
  end type
  type :: cl_double2
    real(c_double) :: s(2)
  end type
  type :: cl_double4
    real(c_double) :: s(4)
  end type

  ! iso_fortran_env's kinds stay the module's own: a program's int8(x) is
  ! then still the intrinsic (STDCL 1.6 programs write clmalloc(cp, int8(n), 0)).
  private :: int8, int16, int32, int64, real32, real64

  ! The most arguments clforka takes, as C's clforka.
  integer, parameter, public :: STDCL_MAX_FORKA_ARGS = 32

  private :: c_clerror, c_stdcl_seterror, c_stdcl_version, c_stdcl_context_why, &
             c_clbuildlog, c_strlen, c_clcontext_create, c_clopen, c_clsopen, &
             c_clsopen_named, c_clopen_opt, c_clsopen_opt, c_clbuild, c_clsym, &
             c_clmalloc, c_clmrealloc, c_clmadopt, c_clmsync, c_clmsyncn, c_clmcopy, &
             c_stdcl_mem, c_stdcl_arg_set_global, c_stdcl_arg_set_local, c_stdcl_arg_sett, &
             c_clfork, c_clndrange_fit, c_stdcl_forktv, c_clgetdevinfo, c_clreduce, &
             c_clsort, c_clsort_by_key, c_clscan, &
             c_stdcl_f_span, c_stdcl_f_mctl, c_clforeign_begin

  ! ------------------------------------------------------------------
  ! Generic names: STDCL 1.6's type(c_ptr) forms and the array forms.
  ! ------------------------------------------------------------------
  interface clopen
    module procedure clopen_f
  end interface
  interface clsopen
    module procedure clsopen_f
  end interface
  interface clsym
    module procedure clsym_f
  end interface
  interface clbuild
    module procedure clbuild_f
  end interface
  interface clmalloc
    procedure :: c_clmalloc
    module procedure clmalloc_i32
  end interface
  interface clmrealloc
    procedure :: c_clmrealloc
    module procedure clmrealloc_i32
  end interface
  interface clmadopt
    procedure :: c_clmadopt
  end interface
  interface clmsync
    procedure :: c_clmsync
  end interface
  interface clmsyncn
    procedure :: c_clmsyncn
  end interface
  interface clmcopy
    procedure :: c_clmcopy
  end interface
  interface stdcl_mem
    procedure :: c_stdcl_mem
  end interface
  interface clarg_set_global
    procedure :: c_stdcl_arg_set_global
  end interface
  interface clarg_set
    module procedure clarg_set_marker, clarg_set_ptr, clarg_set_int2, clarg_set_int4, &
                     clarg_set_float2, clarg_set_float4, clarg_set_double2, clarg_set_double4
  end interface
  interface clarg_set_local
    module procedure clarg_set_local_i32, clarg_set_local_i64
  end interface
  interface clfork
    procedure :: c_clfork
    module procedure clfork_ndr
  end interface
  interface clreduce
    procedure :: c_clreduce
  end interface
  ! clsort, clsort_by_key and clscan: C's form (type(c_ptr), n and a
  ! CL_REDUCE_* type, the only form for unsigned elements) and the array
  ! forms of stdcl_reduce_spec.inc.
  interface clsort
    procedure :: c_clsort
  end interface
  interface clsort_by_key
    procedure :: c_clsort_by_key
  end interface
  interface clscan
    procedure :: c_clscan
  end interface
  interface clndrange_init1d
    module procedure ndr_init1d_i32, ndr_init1d_i64
  end interface
  interface clndrange_init2d
    module procedure ndr_init2d_i32, ndr_init2d_i64
  end interface
  interface clndrange_init3d
    module procedure ndr_init3d_i32, ndr_init3d_i64
  end interface
  interface cllocal
    module procedure cllocal_i32, cllocal_i64
  end interface
  interface cllocal_per_item
    module procedure cllocal_per_item_i32, cllocal_per_item_i64
  end interface
  interface clforeign_begin
    module procedure clforeign_begin_uses, clforeign_begin_use
  end interface

  ! The generic names of each element kind.
#include "stdcl_kinds_spec.inc"
#include "stdcl_ranks_spec.inc"
#include "stdcl_reduce_spec.inc"

  private :: clopen_f, clsopen_f, clsym_f, clbuild_f, clmalloc_i32, clmrealloc_i32, &
             clarg_set_marker, clarg_set_ptr, clarg_set_int2, clarg_set_int4, clarg_set_float2, &
             clarg_set_float4, clarg_set_double2, clarg_set_double4, &
             clarg_set_local_i32, clarg_set_local_i64, clfork_ndr, &
             ndr_init1d_i32, ndr_init1d_i64, ndr_init2d_i32, ndr_init2d_i64, &
             ndr_init3d_i32, ndr_init3d_i64, cllocal_i32, cllocal_i64, &
             cllocal_per_item_i32, cllocal_per_item_i64, &
             clforeign_begin_uses, clforeign_begin_use, &
             c_string, cname, csource, fail, alloc_shape, free_array, array_span, &
             array_span_or_empty, put_arg, copy_fits, opt_flags

contains

  ! ------------------------------------------------------------------
  ! Strings
  ! ------------------------------------------------------------------

  ! A C string (NULL: "") as a Fortran string.
  function c_string(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer(c_size_t) :: n, i
    if (.not. c_associated(p)) then
      s = ""
      return
    end if
    n = c_strlen(p)
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function

  ! A name, path or option string for C: up to its first C_NULL_CHAR
  ! (STDCL 1.6's form) or else without its trailing blanks.
  pure function cname(s) result(c)
    character(len=*), intent(in) :: s
    character(kind=c_char, len=:), allocatable :: c
    integer :: n
    n = index(s, c_null_char) - 1
    if (n < 0) n = len_trim(s)
    c = s(1:n) // c_null_char
  end function

  ! Source text for C: up to its first C_NULL_CHAR, or all of it.
  pure function csource(s) result(c)
    character(len=*), intent(in) :: s
    character(kind=c_char, len=:), allocatable :: c
    integer :: n
    n = index(s, c_null_char) - 1
    if (n < 0) n = len(s)
    c = s(1:n) // c_null_char
  end function

  ! The message of the last failure in this thread (clerror), "" if none;
  ! reading it clears it, as in C.
  function clerror() result(msg)
    character(len=:), allocatable :: msg
    msg = c_string(c_clerror())
  end function

  ! Sets the message the next clerror() returns (stdcl_seterror).
  subroutine stdcl_seterror(msg)
    character(len=*), intent(in) :: msg
    call c_stdcl_seterror(csource(msg))
  end subroutine

  ! The version of the library loaded, "MAJOR.MINOR.PATCH".
  function stdcl_version() result(v)
    character(len=:), allocatable :: v
    v = c_string(c_stdcl_version())
  end function

  ! How a context was chosen (stdcl_context_why); "" for a null cp.
  function stdcl_context_why(cp) result(why)
    type(c_ptr), intent(in) :: cp
    character(len=:), allocatable :: why
    why = c_string(c_stdcl_context_why(cp))
  end function

  ! The compiler's log of a built handle on device devnum ("" when the
  ! compiler said nothing, or on failure: then clerror() says why).
  function clbuildlog(cp, handle, devnum) result(log)
    type(c_ptr), intent(in) :: cp, handle
    integer(c_int), intent(in) :: devnum
    character(len=:), allocatable :: log
    log = c_string(c_clbuildlog(cp, handle, devnum))
  end function

  ! ------------------------------------------------------------------
  ! Errors: stat and errmsg as ALLOCATE has them
  ! ------------------------------------------------------------------

  ! A failed subroutine: stat gets code (and errmsg clerror()'s message);
  ! without stat the program stops with the message.
  subroutine fail(code, stat, errmsg)
    integer, intent(in) :: code
    integer, intent(out), optional :: stat
    character(len=*), intent(inout), optional :: errmsg
    character(len=:), allocatable :: msg
    msg = clerror()
    if (len(msg) == 0) then
      allocate(character(len=32) :: msg)
      write (msg, '(a, i0)') "libstdcl error ", code
      msg = trim(msg)
    end if
    if (present(stat)) then
      stat = code
      if (present(errmsg)) errmsg = msg
      call stdcl_seterror(msg)
    else
      error stop msg
    end if
  end subroutine

  ! ------------------------------------------------------------------
  ! Contexts and devices
  ! ------------------------------------------------------------------

  ! A context of the devices of type devtype (CL_DEVICE_TYPE_*) of the
  ! first platform in the comma-separated list platform_names ("": the
  ! platform with the most such devices), at most max_ndev of them (0: all).
  function clcontext_create(platform_names, devtype, max_ndev, flags) result(cp)
    character(len=*), intent(in) :: platform_names
    integer(c_int64_t), intent(in) :: devtype
    integer, intent(in), optional :: max_ndev, flags
    type(c_ptr) :: cp
    integer(c_size_t) :: n
    integer(c_int) :: f
    n = 0
    f = 0
    if (present(max_ndev)) n = int(max_ndev, c_size_t)
    if (present(flags)) f = flags
    if (len_trim(platform_names) == 0) then
      cp = c_clcontext_create(devtype=devtype, max_ndev=n, ctxprop=c_null_ptr, flags=f)
    else
      cp = c_clcontext_create(cname(platform_names), devtype, n, c_null_ptr, f)
    end if
  end function

  ! Fills info(1:clgetndev(cp)), one entry per device.
  function clgetdevinfo(cp, info) result(rc)
    type(c_ptr), intent(in) :: cp
    type(cldev_info), intent(out) :: info(:)
    integer(c_int) :: rc
    if (size(info) < clgetndev(cp)) then
      call stdcl_seterror("clgetdevinfo: info has room for fewer entries than the context has devices")
      rc = STDCL_EINVAL
      return
    end if
    rc = c_clgetdevinfo(cp, info)
  end function

  ! A field of cldev_info (dev_name, dev_vendor...) as a Fortran string.
  function cldev_string(chars) result(s)
    character(kind=c_char), intent(in) :: chars(:)
    character(len=:), allocatable :: s
    integer :: i, n
    n = size(chars)
    do i = 1, size(chars)
      if (chars(i) == c_null_char) then
        n = i - 1
        exit
      end if
    end do
    allocate(character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function

  ! ------------------------------------------------------------------
  ! Loader: names, paths and options as Fortran strings
  ! ------------------------------------------------------------------

  ! clopen(cp, file [, flags]): file "" opens the programs embedded with clcc.
  function clopen_f(cp, file, flags) result(handle)
    type(c_ptr), intent(in) :: cp
    character(len=*), intent(in) :: file
    integer, intent(in), optional :: flags
    type(c_ptr) :: handle
    character(kind=c_char, len=:), allocatable :: f
    f = cname(file)
    if (len(f) == 1) then
      handle = c_clopen(cp, flags=opt_flags(flags))
    else
      handle = c_clopen(cp, f, opt_flags(flags))
    end if
  end function

  ! clsopen(cp, source [, flags]): source is kept whole (trailing blanks too).
  function clsopen_f(cp, source, flags) result(handle)
    type(c_ptr), intent(in) :: cp
    character(len=*), intent(in) :: source
    integer, intent(in), optional :: flags
    type(c_ptr) :: handle
    handle = c_clsopen(cp, csource(source), opt_flags(flags))
  end function

  ! clsopen_named(cp, source, name [, flags])
  function clsopen_named(cp, source, name, flags) result(handle)
    type(c_ptr), intent(in) :: cp
    character(len=*), intent(in) :: source, name
    integer, intent(in), optional :: flags
    type(c_ptr) :: handle
    handle = c_clsopen_named(cp, csource(source), cname(name), opt_flags(flags))
  end function

  ! clopen_opt(cp, file, options [, flags])
  function clopen_opt(cp, file, options, flags) result(handle)
    type(c_ptr), intent(in) :: cp
    character(len=*), intent(in) :: file, options
    integer, intent(in), optional :: flags
    type(c_ptr) :: handle
    handle = c_clopen_opt(cp, cname(file), cname(options), opt_flags(flags))
  end function

  ! clsopen_opt(cp, source, options [, flags])
  function clsopen_opt(cp, source, options, flags) result(handle)
    type(c_ptr), intent(in) :: cp
    character(len=*), intent(in) :: source, options
    integer, intent(in), optional :: flags
    type(c_ptr) :: handle
    handle = c_clsopen_opt(cp, csource(source), cname(options), opt_flags(flags))
  end function

  ! clbuild(cp, handle, options [, flags])
  function clbuild_f(cp, handle, options, flags) result(built)
    type(c_ptr), intent(in) :: cp, handle
    character(len=*), intent(in) :: options
    integer, intent(in), optional :: flags
    type(c_ptr) :: built
    built = c_clbuild(cp, handle, cname(options), opt_flags(flags))
  end function

  ! clsym(cp, handle, name [, flags]): handle c_null_ptr searches every
  ! program open in cp.
  function clsym_f(cp, handle, name, flags) result(krn)
    type(c_ptr), intent(in) :: cp, handle
    character(len=*), intent(in) :: name
    integer, intent(in), optional :: flags
    type(c_ptr) :: krn
    krn = c_clsym(cp, handle, cname(name), opt_flags(flags))
  end function

  pure integer(c_int) function opt_flags(flags)
    integer, intent(in), optional :: flags
    opt_flags = 0
    if (present(flags)) opt_flags = flags
  end function

  ! ------------------------------------------------------------------
  ! Memory
  ! ------------------------------------------------------------------

  ! clmalloc(cp, size, flags) with a default integer size.
  function clmalloc_i32(cp, size, flags) result(p)
    type(c_ptr), intent(in) :: cp
    integer(int32), intent(in) :: size
    integer(c_int), intent(in) :: flags
    type(c_ptr) :: p
    p = c_null_ptr
    if (size < 0) then
      call stdcl_seterror("clmalloc: negative size")
      return
    end if
    p = c_clmalloc(cp, int(size, c_size_t), flags)
  end function

  ! clmrealloc(cp, ptr, size, flags) with a default integer size.
  function clmrealloc_i32(cp, ptr, size, flags) result(p)
    type(c_ptr), intent(in) :: cp, ptr
    integer(int32), intent(in) :: size
    integer(c_int), intent(in) :: flags
    type(c_ptr) :: p
    p = c_null_ptr
    if (size < 0) then
      call stdcl_seterror("clmrealloc: negative size")
      return
    end if
    p = c_clmrealloc(cp, ptr, int(size, c_size_t), flags)
  end function

  ! clmctl(ptr, op [, flags, width, height, format]): flags for
  ! CL_MCTL_SET_USRFLAGS and CL_MCTL_CLR_USRFLAGS; width, height and format
  ! (a cl_image_format, c_null_ptr: RGBA float) for CL_MCTL_SET_IMAGE2D.
  function clmctl(ptr, op, flags, width, height, format) result(rc)
    type(c_ptr), intent(in) :: ptr
    integer(c_int), intent(in) :: op
    integer(c_int), intent(in), optional :: flags
    integer(c_size_t), intent(in), optional :: width, height
    type(c_ptr), intent(in), optional :: format
    integer(c_int) :: rc
    integer(c_int) :: f
    integer(c_size_t) :: w, h
    type(c_ptr) :: fmt
    f = 0
    w = 0
    h = 0
    fmt = c_null_ptr
    if (present(flags)) f = flags
    if (present(width)) w = width
    if (present(height)) h = height
    if (present(format)) fmt = format
    rc = c_stdcl_f_mctl(ptr, op, f, w, h, fmt)
  end function

  ! The first element and byte size of a, refused (with clerror()'s
  ! message naming call) when a is not contiguous or not associated.
  function array_span(a, call, base, nbytes) result(ok)
    type(*), intent(in) :: a(..)
    character(len=*), intent(in) :: call
    type(c_ptr), intent(out) :: base
    integer(c_size_t), intent(out) :: nbytes
    logical :: ok
    integer(c_int) :: contiguous
    contiguous = c_stdcl_f_span(a, base, nbytes)
    ok = contiguous == 1 .and. nbytes > 0
    if (contiguous < 0) then
      call stdcl_seterror(call // ": the array is not allocated or not associated")
    else if (contiguous == 0) then
      call stdcl_seterror(call // ": the array section is not contiguous " // &
                          "(its elements are not one block of memory); " // &
                          "pass a contiguous section or the whole array")
    else if (nbytes == 0) then
      call stdcl_seterror(call // ": the array has no elements")
    end if
  end function

  ! As array_span, for the calls to which an array of no elements is
  ! nothing to do (clsort, clsort_by_key, clscan, as n == 0 in C): ok with
  ! nbytes 0 for it, without a message.
  function array_span_or_empty(a, call, base, nbytes) result(ok)
    type(*), intent(in) :: a(..)
    character(len=*), intent(in) :: call
    type(c_ptr), intent(out) :: base
    integer(c_size_t), intent(out) :: nbytes
    logical :: ok
    integer(c_int) :: contiguous
    contiguous = c_stdcl_f_span(a, base, nbytes)
    ok = contiguous == 1 .and. nbytes == 0
    if (.not. ok) ok = array_span(a, call, base, nbytes)
  end function

  ! Whether C's clmcopy, which copies from src to the end of the shorter of
  ! the two allocations, copies exactly min(sbytes, dbytes): else the
  ! message says why the arrays are refused.
  function copy_fits(src, sbytes, dst, dbytes) result(ok)
    type(c_ptr), intent(in) :: src, dst
    integer(c_size_t), intent(in) :: sbytes, dbytes
    logical :: ok
    integer(c_size_t) :: soff, doff, srest, drest
    type(c_ptr) :: sbase, dbase
    ok = .true.
    sbase = stdcl_mem_base(src, soff)
    dbase = stdcl_mem_base(dst, doff)
    if (.not. c_associated(sbase) .or. .not. c_associated(dbase)) return
    srest = clsizeofmem(sbase) - soff
    drest = clsizeofmem(dbase) - doff
    ok = min(srest, drest) == min(sbytes, dbytes)
    if (.not. ok) call stdcl_seterror("clmcopy: it copies from each array to the end of " // &
        "the shorter allocation, more than the smaller array (or section) holds; " // &
        "copy whole arrays, or sections that end where their allocation ends")
  end function

  ! clmalloc of product(shape) elements of elem_bytes; rc 0 or a code.
  function alloc_shape(cp, r, shape, elem_bytes, flags, rc) result(p)
    type(c_ptr), intent(in) :: cp
    integer, intent(in) :: r, elem_bytes
    integer(int64), intent(in) :: shape(:)
    integer, intent(in), optional :: flags
    integer, intent(out) :: rc
    type(c_ptr) :: p
    character(len=96) :: msg
    p = c_null_ptr
    rc = STDCL_EINVAL
    if (size(shape) /= r) then
      write (msg, '(a, i0, a, i0, a)') "clallocate: shape has ", size(shape), &
          " extents for an array of rank ", r, ""
      call stdcl_seterror(trim(msg))
      return
    end if
    if (any(shape <= 0)) then
      call stdcl_seterror("clallocate: every extent of shape must be positive")
      return
    end if
    if (any(shape > huge(0_int64) / product(max(shape, 1_int64)) + 1)) then
      call stdcl_seterror("clallocate: the array's size overflows")
      return
    end if
    p = c_clmalloc(cp, int(product(shape), c_size_t) * int(elem_bytes, c_size_t), &
                   opt_flags(flags))
    if (.not. c_associated(p)) then
      rc = STDCL_ENOMEM
      return
    end if
    rc = 0
  end function

  ! clfree of the allocation a starts; 0 or a code.
  function free_array(a) result(rc)
    type(*), intent(in) :: a(..)
    integer :: rc
    type(c_ptr) :: base
    integer(c_size_t) :: nbytes
    rc = STDCL_EINVAL
    if (c_stdcl_f_span(a, base, nbytes) /= 1 .or. clsizeofmem(base) == 0) then
      call stdcl_seterror("cldeallocate: the array was not made by clallocate " // &
                          "(or is a section of one)")
      return
    end if
    rc = clfree(base)
  end function

  ! ------------------------------------------------------------------
  ! Foreign commands: plain OpenCL commands on clmalloc memory
  ! ------------------------------------------------------------------

  ! f = clforeign_begin(cp, devnum, queue, uses [, flags]): the ticket of
  ! foreign commands on queue (c_null_ptr: the device's kernel queue) that
  ! use the allocations of uses (an array of clforeign_use, all of it, or
  ! one clforeign_use), or c_null_ptr (clerror() says why).
  function clforeign_begin_uses(cp, devnum, queue, uses, flags) result(f)
    type(c_ptr), intent(in) :: cp, queue
    integer(c_int), intent(in) :: devnum
    type(clforeign_use), intent(in) :: uses(:)
    integer, intent(in), optional :: flags
    type(c_ptr) :: f
    if (size(uses) == 0) then
      f = c_clforeign_begin(cp, devnum, queue, nuses=0_c_size_t, flags=opt_flags(flags))
    else
      f = c_clforeign_begin(cp, devnum, queue, uses, size(uses, kind=c_size_t), opt_flags(flags))
    end if
  end function
  function clforeign_begin_use(cp, devnum, queue, uses, flags) result(f)
    type(c_ptr), intent(in) :: cp, queue
    integer(c_int), intent(in) :: devnum
    type(clforeign_use), intent(in) :: uses
    integer, intent(in), optional :: flags
    type(c_ptr) :: f
    f = c_clforeign_begin(cp, devnum, queue, [uses], 1_c_size_t, opt_flags(flags))
  end function

  ! ------------------------------------------------------------------
  ! Kernel arguments
  ! ------------------------------------------------------------------

  ! clarg_set_local(cp, krn, argnum, nbytes): argnum gets nbytes of __local.
  function clarg_set_local_i32(cp, krn, argnum, nbytes) result(rc)
    type(c_ptr), intent(in) :: cp, krn
    integer(c_int), intent(in) :: argnum
    integer(int32), intent(in) :: nbytes
    integer(c_int) :: rc
    rc = clarg_set_local_i64(cp, krn, argnum, int(nbytes, int64))
  end function

  function clarg_set_local_i64(cp, krn, argnum, nbytes) result(rc)
    type(c_ptr), intent(in) :: cp, krn
    integer(c_int), intent(in) :: argnum
    integer(int64), intent(in) :: nbytes
    integer(c_int) :: rc
    if (nbytes <= 0) then
      call stdcl_seterror("clarg_set_local: the size must be positive")
      rc = STDCL_EINVAL
      return
    end if
    rc = c_stdcl_arg_set_local(cp, krn, argnum, int(nbytes, c_size_t))
  end function

  ! __local markers for clforka and clarg_set: nbytes for the whole group,
  ! nbytes per work-item, or fn(local, dim, user) bytes at each launch
  ! (fn: a bind(C) function of (c_ptr to the local sizes, c_size_t, c_ptr)
  ! returning c_size_t).
  function cllocal_i64(nbytes) result(m)
    integer(int64), intent(in) :: nbytes
    type(stdcl_local) :: m
    m%tag = STDCL_LOCAL_TAG
    m%bytes = int(nbytes, c_size_t)
  end function
  function cllocal_i32(nbytes) result(m)
    integer(int32), intent(in) :: nbytes
    type(stdcl_local) :: m
    m = cllocal_i64(int(nbytes, int64))
  end function
  function cllocal_per_item_i64(nbytes) result(m)
    integer(int64), intent(in) :: nbytes
    type(stdcl_local) :: m
    m%tag = STDCL_LOCAL_TAG
    m%per_item = int(nbytes, c_size_t)
  end function
  function cllocal_per_item_i32(nbytes) result(m)
    integer(int32), intent(in) :: nbytes
    type(stdcl_local) :: m
    m = cllocal_per_item_i64(int(nbytes, int64))
  end function
  function cllocal_fn(fn, user) result(m)
    type(c_funptr), intent(in) :: fn
    type(c_ptr), intent(in), optional :: user
    type(stdcl_local) :: m
    m%tag = STDCL_LOCAL_TAG
    m%fn = fn
    if (present(user)) m%user = user
  end function

  ! clptr(p): a type(c_ptr) for clforka (a clmalloc pointer, bound as
  ! __global, or c_null_ptr).
  function clptr(p) result(w)
    type(c_ptr), intent(in) :: p
    type(clptr_arg) :: w
    w%p = p
  end function

  ! clarg_set(cp, krn, argnum, x) for a __local marker, clptr(p) and the
  ! vector types.
  function clarg_set_marker(cp, krn, argnum, x) result(rc)
    type(c_ptr), intent(in) :: cp, krn
    integer(c_int), intent(in) :: argnum
    type(stdcl_local), intent(in), target :: x
    integer(c_int) :: rc
    rc = c_stdcl_arg_sett(cp, krn, argnum, int(storage_size(x) / 8, c_size_t), &
                          STDCL_TYPE_OTHER, c_loc(x))
  end function
  function clarg_set_ptr(cp, krn, argnum, x) result(rc)
    type(c_ptr), intent(in) :: cp, krn
    integer(c_int), intent(in) :: argnum
    type(clptr_arg), intent(in) :: x
    integer(c_int) :: rc
    type(c_ptr), target :: p
    p = x%p
    rc = c_stdcl_arg_sett(cp, krn, argnum, c_sizeof(p), STDCL_TYPE_POINTER, c_loc(p))
  end function
  function clarg_set_int2(cp, krn, argnum, x) result(rc)
    type(c_ptr), intent(in) :: cp, krn
    integer(c_int), intent(in) :: argnum
    type(cl_int2), intent(in), target :: x
    integer(c_int) :: rc
    rc = c_stdcl_arg_sett(cp, krn, argnum, int(storage_size(x) / 8, c_size_t), &
                          STDCL_TYPE_OTHER, c_loc(x))
  end function
  function clarg_set_int4(cp, krn, argnum, x) result(rc)
    type(c_ptr), intent(in) :: cp, krn
    integer(c_int), intent(in) :: argnum
    type(cl_int4), intent(in), target :: x
    integer(c_int) :: rc
    rc = c_stdcl_arg_sett(cp, krn, argnum, int(storage_size(x) / 8, c_size_t), &
                          STDCL_TYPE_OTHER, c_loc(x))
  end function
  function clarg_set_float2(cp, krn, argnum, x) result(rc)
    type(c_ptr), intent(in) :: cp, krn
    integer(c_int), intent(in) :: argnum
    type(cl_float2), intent(in), target :: x
    integer(c_int) :: rc
    rc = c_stdcl_arg_sett(cp, krn, argnum, int(storage_size(x) / 8, c_size_t), &
                          STDCL_TYPE_OTHER, c_loc(x))
  end function
  function clarg_set_float4(cp, krn, argnum, x) result(rc)
    type(c_ptr), intent(in) :: cp, krn
    integer(c_int), intent(in) :: argnum
    type(cl_float4), intent(in), target :: x
    integer(c_int) :: rc
    rc = c_stdcl_arg_sett(cp, krn, argnum, int(storage_size(x) / 8, c_size_t), &
                          STDCL_TYPE_OTHER, c_loc(x))
  end function
  function clarg_set_double2(cp, krn, argnum, x) result(rc)
    type(c_ptr), intent(in) :: cp, krn
    integer(c_int), intent(in) :: argnum
    type(cl_double2), intent(in), target :: x
    integer(c_int) :: rc
    rc = c_stdcl_arg_sett(cp, krn, argnum, int(storage_size(x) / 8, c_size_t), &
                          STDCL_TYPE_OTHER, c_loc(x))
  end function
  function clarg_set_double4(cp, krn, argnum, x) result(rc)
    type(c_ptr), intent(in) :: cp, krn
    integer(c_int), intent(in) :: argnum
    type(cl_double4), intent(in), target :: x
    integer(c_int) :: rc
    rc = c_stdcl_arg_sett(cp, krn, argnum, int(storage_size(x) / 8, c_size_t), &
                          STDCL_TYPE_OTHER, c_loc(x))
  end function

  ! ------------------------------------------------------------------
  ! Launch
  ! ------------------------------------------------------------------

  ! Index spaces: offset, global size and local size (0: chosen at launch)
  ! per dimension; the dimensions not given have size 1.
  function ndr_init1d_i64(o0, g0, l0) result(ndr)
    integer(int64), intent(in) :: o0, g0, l0
    type(clndrange_struct) :: ndr
    ndr%dim = 1
    ndr%gtid_offset = [o0, 0_int64, 0_int64, 0_int64]
    ndr%gtid = [g0, 1_int64, 1_int64, 1_int64]
    ndr%ltid = [l0, 1_int64, 1_int64, 1_int64]
  end function
  function ndr_init1d_i32(o0, g0, l0) result(ndr)
    integer(int32), intent(in) :: o0, g0, l0
    type(clndrange_struct) :: ndr
    ndr = ndr_init1d_i64(int(o0, int64), int(g0, int64), int(l0, int64))
  end function
  function ndr_init2d_i64(o0, g0, l0, o1, g1, l1) result(ndr)
    integer(int64), intent(in) :: o0, g0, l0, o1, g1, l1
    type(clndrange_struct) :: ndr
    ndr%dim = 2
    ndr%gtid_offset = [o0, o1, 0_int64, 0_int64]
    ndr%gtid = [g0, g1, 1_int64, 1_int64]
    ndr%ltid = [l0, l1, 1_int64, 1_int64]
  end function
  function ndr_init2d_i32(o0, g0, l0, o1, g1, l1) result(ndr)
    integer(int32), intent(in) :: o0, g0, l0, o1, g1, l1
    type(clndrange_struct) :: ndr
    ndr = ndr_init2d_i64(int(o0, int64), int(g0, int64), int(l0, int64), &
                         int(o1, int64), int(g1, int64), int(l1, int64))
  end function
  function ndr_init3d_i64(o0, g0, l0, o1, g1, l1, o2, g2, l2) result(ndr)
    integer(int64), intent(in) :: o0, g0, l0, o1, g1, l1, o2, g2, l2
    type(clndrange_struct) :: ndr
    ndr%dim = 3
    ndr%gtid_offset = [o0, o1, o2, 0_int64]
    ndr%gtid = [g0, g1, g2, 1_int64]
    ndr%ltid = [l0, l1, l2, 1_int64]
  end function
  function ndr_init3d_i32(o0, g0, l0, o1, g1, l1, o2, g2, l2) result(ndr)
    integer(int32), intent(in) :: o0, g0, l0, o1, g1, l1, o2, g2, l2
    type(clndrange_struct) :: ndr
    ndr = ndr_init3d_i64(int(o0, int64), int(g0, int64), int(l0, int64), &
                         int(o1, int64), int(g1, int64), int(l1, int64), &
                         int(o2, int64), int(g2, int64), int(l2, int64))
  end function

  ! clndrange_fit(cp, devnum, krn, ndr): fills ndr's 0 local sizes.
  function clndrange_fit(cp, devnum, krn, ndr) result(rc)
    type(c_ptr), intent(in) :: cp, krn
    integer(c_int), intent(in) :: devnum
    type(clndrange_struct), intent(inout) :: ndr
    integer(c_int) :: rc
    rc = c_clndrange_fit(cp, devnum, krn, ndr)
  end function

  ! clfork(cp, devnum, krn, ndr, flags) with ndr itself (c_loc(ndr) is
  ! STDCL 1.6's form); ndr gets the local size chosen.
  function clfork_ndr(cp, devnum, krn, ndr, flags) result(ev)
    type(c_ptr), intent(in) :: cp, krn
    integer(c_int), intent(in) :: devnum, flags
    type(clndrange_struct), intent(inout), target :: ndr
    type(c_ptr) :: ev
    ev = c_clfork(cp, devnum, krn, c_loc(ndr), flags)
  end function

  ! ev = clforka(cp, devnum, krn, ndr, flags, a1, ..., aN): sets the
  ! kernel's arguments 0..N-1 and launches it, as C's clforka.  Each ai is
  ! a scalar of an integer, real or complex kind (converted by the library
  ! to the parameter's type, or refused naming both types), a vector type
  ! (cl_float4...), an array in clmalloc memory or a contiguous section of
  ! one (bound as __global from its first element), a __local marker
  ! (cllocal...) or clptr(p).  ndr gets the local size chosen.  Returns the
  ! event, or c_null_ptr (clerror() says which argument and why).
  function clforka(cp, devnum, krn, ndr, flags, &
                   a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, &
                   a17, a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30, &
                   a31, a32) result(ev)
    type(c_ptr), intent(in) :: cp, krn
    integer(c_int), intent(in) :: devnum, flags
    type(clndrange_struct), intent(inout), target :: ndr
    class(*), intent(in), target, optional :: a1(..), a2(..), a3(..), a4(..), a5(..), &
        a6(..), a7(..), a8(..), a9(..), a10(..), a11(..), a12(..), a13(..), a14(..), &
        a15(..), a16(..), a17(..), a18(..), a19(..), a20(..), a21(..), a22(..), a23(..), &
        a24(..), a25(..), a26(..), a27(..), a28(..), a29(..), a30(..), a31(..), a32(..)
    type(c_ptr) :: ev
    integer(c_size_t) :: sizes(STDCL_MAX_FORKA_ARGS)
    integer(c_int) :: types(STDCL_MAX_FORKA_ARGS)
    type(c_ptr) :: values(STDCL_MAX_FORKA_ARGS)
    type(c_ptr), target :: ptrs(STDCL_MAX_FORKA_ARGS)
    integer :: n
    logical :: ok, ended
    ev = c_null_ptr
    n = 0
    ok = .true.
    ended = .false.
    call take(a1); call take(a2); call take(a3); call take(a4)
    call take(a5); call take(a6); call take(a7); call take(a8)
    call take(a9); call take(a10); call take(a11); call take(a12)
    call take(a13); call take(a14); call take(a15); call take(a16)
    call take(a17); call take(a18); call take(a19); call take(a20)
    call take(a21); call take(a22); call take(a23); call take(a24)
    call take(a25); call take(a26); call take(a27); call take(a28)
    call take(a29); call take(a30); call take(a31); call take(a32)
    if (.not. ok) return
    ev = c_stdcl_forktv(cp, devnum, krn, c_loc(ndr), flags, n, sizes, types, values)
  contains
    subroutine take(a)
      class(*), intent(in), target, optional :: a(..)
      if (.not. ok) return
      if (.not. present(a)) then
        ended = .true.
        return
      end if
      if (ended) then
        call stdcl_seterror("clforka: argument after a missing one (the arguments are " // &
                            "the kernel's, in order, none left out)")
        ok = .false.
        return
      end if
      n = n + 1
      ok = put_arg(a, n, sizes(n), types(n), values(n), ptrs(n))
    end subroutine
  end function

  ! One clforka argument: its size, STDCL_TYPE_* and the address of its
  ! value (for an array, of ptr, which gets the array's first element).
  function put_arg(a, i, size, type, value, ptr) result(ok)
    class(*), intent(in), target :: a(..)
    integer, intent(in) :: i
    integer(c_size_t), intent(out) :: size
    integer(c_int), intent(out) :: type
    type(c_ptr), intent(out) :: value
    type(c_ptr), intent(inout), target :: ptr
    logical :: ok
    integer(c_size_t) :: nbytes
    character(len=24) :: what
    ok = .true.
    write (what, '(a, i0)') "clforka: argument ", i
    select rank (a)
    rank (0)
      size = int(storage_size(a) / 8, c_size_t)
      type = STDCL_TYPE_OTHER
      select type (a)
      type is (integer(int8))
        type = STDCL_TYPE_INT
        value = c_loc(a)
      type is (integer(int16))
        type = STDCL_TYPE_INT
        value = c_loc(a)
      type is (integer(int32))
        type = STDCL_TYPE_INT
        value = c_loc(a)
      type is (integer(int64))
        type = STDCL_TYPE_INT
        value = c_loc(a)
      type is (real(real32))
        type = STDCL_TYPE_FLOAT
        value = c_loc(a)
      type is (real(real64))
        type = STDCL_TYPE_FLOAT
        value = c_loc(a)
      type is (complex(real32))
        value = c_loc(a)
      type is (complex(real64))
        value = c_loc(a)
      type is (cl_int2)
        value = c_loc(a)
      type is (cl_int4)
        value = c_loc(a)
      type is (cl_float2)
        value = c_loc(a)
      type is (cl_float4)
        value = c_loc(a)
      type is (cl_double2)
        value = c_loc(a)
      type is (cl_double4)
        value = c_loc(a)
      type is (stdcl_local)
        value = c_loc(a)
      type is (clptr_arg)
        ptr = a%p
        size = c_sizeof(ptr)
        type = STDCL_TYPE_POINTER
        value = c_loc(ptr)
      class default
        call stdcl_seterror(trim(what) // ": a type clforka does not take (integer, " // &
            "real and complex kinds, cl_int2..cl_double4, arrays, cllocal markers, clptr)")
        ok = .false.
      end select
    rank default
      ok = array_span(a, trim(what), ptr, nbytes)
      size = c_sizeof(ptr)
      type = STDCL_TYPE_POINTER
      value = c_loc(ptr)
    end select
  end function

  ! The procedures of each element kind (arrays, scalars, reductions,
  ! sorts and scans).
#include "stdcl_kinds_body.inc"
#include "stdcl_ranks_body.inc"
#include "stdcl_reduce_body.inc"

end module stdcl
