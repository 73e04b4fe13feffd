! SPDX-License-Identifier: MIT
! fortran_constants.f90: prints every constant of the module stdcl by its
! name, one per line (NAME VALUE), and the sizes of its C-layout types;
! test_fortran compares each with the value C gives the same name.
program fortran_constants
  use stdcl
  implicit none
  type(clndrange_struct) :: ndr
  type(clstat_info) :: st
  type(cldev_info) :: di
  type(stdcl_kernel_limits_t) :: kl
  type(clforeign_use) :: fu
  type(stdcl_local) :: lm
  type(cl_float4) :: f4
  type(cl_double2) :: d2
  character(len=*), parameter :: f = '(a, 1x, i0)'
  print f, "STDCL_EINVAL", STDCL_EINVAL
  print f, "STDCL_ENOMEM", STDCL_ENOMEM
  print f, "STDCL_ENOENT", STDCL_ENOENT
  print f, "STDCL_EBUILD", STDCL_EBUILD
  print f, "STDCL_ESTATE", STDCL_ESTATE
  print f, "STDCL_ECL", STDCL_ECL
  print f, "STDCL_EOVERRUN", STDCL_EOVERRUN
  print f, "STDCL_ESYNC", STDCL_ESYNC
  print f, "STDCL_VERSION_MAJOR", STDCL_VERSION_MAJOR
  print f, "STDCL_VERSION_MINOR", STDCL_VERSION_MINOR
  print f, "STDCL_VERSION_PATCH", STDCL_VERSION_PATCH
  print f, "CLLD_NOW", CLLD_NOW
  print f, "CLLD_DEFAULT", CLLD_DEFAULT
  print f, "CLLD_LAZY", CLLD_LAZY
  print f, "CLLD_NOBUILD", CLLD_NOBUILD
  print f, "CLLD_GLOBAL", CLLD_GLOBAL
  print f, "CL_MEM_RW", CL_MEM_RW
  print f, "CL_MEM_RO", CL_MEM_RO
  print f, "CL_MEM_WO", CL_MEM_WO
  print f, "CL_MEM_DETACHED", CL_MEM_DETACHED
  print f, "CL_MEM_NOCOPY", CL_MEM_NOCOPY
  print f, "CL_MEM_IMAGE2D", CL_MEM_IMAGE2D
  print f, "CL_MEM_NOFORCE", CL_MEM_NOFORCE
  print f, "CL_MEM_DEVONLY", CL_MEM_DEVONLY
  print f, "CL_MEM_ZERO", CL_MEM_ZERO
  print f, "CL_MEM_CLBUF", CL_MEM_CLBUF
  print f, "CL_MEM_GLBUF", CL_MEM_GLBUF
  print f, "CL_MEM_GLTEX2D", CL_MEM_GLTEX2D
  print f, "CL_MEM_GLTEX3D", CL_MEM_GLTEX3D
  print f, "CL_MEM_GLRBUF", CL_MEM_GLRBUF
  print f, "CL_MEM_HOST", CL_MEM_HOST
  print f, "CL_MEM_DEVICE", CL_MEM_DEVICE
  print f, "CL_FOREIGN_WAITLIST", CL_FOREIGN_WAITLIST
  print f, "CL_EVENT_WAIT", CL_EVENT_WAIT
  print f, "CL_EVENT_NOWAIT", CL_EVENT_NOWAIT
  print f, "CL_EVENT_RELEASE", CL_EVENT_RELEASE
  print f, "CL_EVENT_NORELEASE", CL_EVENT_NORELEASE
  print f, "CL_EVENT_NOEVENT", CL_EVENT_NOEVENT
  print f, "CL_KERNEL_EVENT", CL_KERNEL_EVENT
  print f, "CL_MEM_EVENT", CL_MEM_EVENT
  print f, "CL_ALL_EVENT", CL_ALL_EVENT
  print f, "CL_MCTL_GET_STATUS", CL_MCTL_GET_STATUS
  print f, "CL_MCTL_GET_DEVNUM", CL_MCTL_GET_DEVNUM
  print f, "CL_MCTL_SET_DEVNUM", CL_MCTL_SET_DEVNUM
  print f, "CL_MCTL_MARK_CLEAN", CL_MCTL_MARK_CLEAN
  print f, "CL_MCTL_SET_IMAGE2D", CL_MCTL_SET_IMAGE2D
  print f, "CL_MCTL_SET_USRFLAGS", CL_MCTL_SET_USRFLAGS
  print f, "CL_MCTL_CLR_USRFLAGS", CL_MCTL_CLR_USRFLAGS
  print f, "STDCL_TYPE_UNKNOWN", STDCL_TYPE_UNKNOWN
  print f, "STDCL_TYPE_INT", STDCL_TYPE_INT
  print f, "STDCL_TYPE_UINT", STDCL_TYPE_UINT
  print f, "STDCL_TYPE_FLOAT", STDCL_TYPE_FLOAT
  print f, "STDCL_TYPE_POINTER", STDCL_TYPE_POINTER
  print f, "STDCL_TYPE_OTHER", STDCL_TYPE_OTHER
  print f, "CL_REDUCE_SUM", CL_REDUCE_SUM
  print f, "CL_REDUCE_MIN", CL_REDUCE_MIN
  print f, "CL_REDUCE_MAX", CL_REDUCE_MAX
  print f, "CL_REDUCE_FLOAT", CL_REDUCE_FLOAT
  print f, "CL_REDUCE_DOUBLE", CL_REDUCE_DOUBLE
  print f, "CL_REDUCE_INT", CL_REDUCE_INT
  print f, "CL_REDUCE_LONG", CL_REDUCE_LONG
  print f, "CL_REDUCE_UINT", CL_REDUCE_UINT
  print f, "CL_REDUCE_ULONG", CL_REDUCE_ULONG
  print f, "CL_SORT_DESCENDING", CL_SORT_DESCENDING
  print f, "CL_SCAN_EXCLUSIVE", CL_SCAN_EXCLUSIVE
  print f, "CL_ALL_DEVICES", CL_ALL_DEVICES
  print f, "STDCL_LOCAL_SIZE_DRIVER", STDCL_LOCAL_SIZE_DRIVER
  print f, "STDCL_LOCAL_TAG", STDCL_LOCAL_TAG
  print f, "CL_DEVICE_TYPE_DEFAULT", CL_DEVICE_TYPE_DEFAULT
  print f, "CL_DEVICE_TYPE_CPU", CL_DEVICE_TYPE_CPU
  print f, "CL_DEVICE_TYPE_GPU", CL_DEVICE_TYPE_GPU
  print f, "CL_DEVICE_TYPE_ACCELERATOR", CL_DEVICE_TYPE_ACCELERATOR
  print f, "CL_DEVICE_TYPE_ALL", CL_DEVICE_TYPE_ALL
  print f, "CL_SUCCESS", CL_SUCCESS
  print f, "CL_INT", storage_size(0_CL_INT) / 8
  print f, "CL_FLOAT", storage_size(0.0_CL_FLOAT) / 8
  print f, "CL_DOUBLE", storage_size(0.0_CL_DOUBLE) / 8
  print f, "sizeof(clndrange_t)", c_sizeof(ndr)
  print f, "sizeof(struct clstat_info)", c_sizeof(st)
  print f, "sizeof(struct cldev_info)", c_sizeof(di)
  print f, "sizeof(struct stdcl_kernel_limits)", c_sizeof(kl)
  print f, "sizeof(struct clforeign_use)", c_sizeof(fu)
  print f, "sizeof(stdcl_local_t)", storage_size(lm) / 8
  print f, "sizeof(cl_float4)", storage_size(f4) / 8
  print f, "sizeof(cl_double2)", storage_size(d2) / 8
  print '(a, 1x, a)', "STDCL_VERSION_STRING", STDCL_VERSION_STRING
end program fortran_constants
