! SPDX-License-Identifier: MIT
! fortran_arrays.f90: clallocate arrays of every element kind and ranks 1 to
! 3 (and ranks 4 and 7 of one kind): each is filled on the host, synced to
! a device, copied there into a
! second array by a kernel (clforka with the arrays as __global arguments),
! brought back, and compared element by element; cldeallocate frees and
! nullifies.  On each device of the context.  Run by test_fortran in
! zero-copy and copy mode.
program fortran_arrays
  use stdcl
  use, intrinsic :: iso_fortran_env, only: int8, int16, int32, int64, real32, real64, &
                                           error_unit
  implicit none
  integer :: nok = 0, nfail = 0
  type(c_ptr) :: cp, clh, kcopy
  integer(c_int) :: dev

  cp = stdcpu
  if (c_associated(stdgpu)) cp = stdgpu
  call check(c_associated(cp), "a default context with devices")
  clh = clopen(cp, "fortran_kernels.cl", CLLD_NOW)
  call check(c_associated(clh), "clopen fortran_kernels.cl: " // clerror())
  kcopy = clsym(cp, clh, "copy_bytes")
  call check(c_associated(kcopy), "clsym copy_bytes")
  do dev = 0, clgetndev(cp) - 1
    call kind_i8()
    call kind_i16()
    call kind_i32()
    call kind_i64()
    call kind_r32()
    call kind_r64()
    call kind_c32()
    call kind_c64()
    call high_ranks()
  end do
  call check(clclose(cp, clh) == 0, "clclose")
  call finish()

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

  subroutine finish()
    print '(a, i0, a, i0, a)', "fortran_arrays: ", nok, " checks passed, ", nfail, " failed"
    if (nfail > 0) error stop 1
  end subroutine

  ! The kernel copies nbytes from a to b on device dev.
  subroutine device_copy(a, b, nbytes, what)
    class(*), intent(in), target :: a(..), b(..)
    integer(c_int), intent(in) :: nbytes
    character(len=*), intent(in) :: what
    type(clndrange_struct) :: ndr
    type(c_ptr) :: ev
    ndr = clndrange_init1d(0, 64, 0)
    ev = clforka(cp, dev, kcopy, ndr, CL_EVENT_WAIT, a, b, nbytes)
    call check(c_associated(ev), what // ": clforka: " // clerror())
  end subroutine

  subroutine kind_i8()
    integer(int8), pointer :: a1(:), b1(:)
    integer(int8), pointer :: a2(:,:), b2(:,:)
    integer(int8), pointer :: a3(:,:,:), b3(:,:,:)
    type(c_ptr) :: ev
    integer :: k, stat
    call clallocate(cp, a1, [37], stat=stat)
    call check(stat == 0 .and. associated(a1), "i8 rank 1" // ": clallocate")
    call clallocate(cp, b1, [37])
    call check(all(shape(a1) == [37]), "i8 rank 1" // ": shape")
    a1 = reshape([(int(mod(k * 37, 101) - 50, int8), k = 1, size(a1))], shape(a1))
    b1 = 0
    ev = clmsync(cp, dev, a1, CL_MEM_DEVICE)
    call check(c_associated(ev), "i8 rank 1" // ": clmsync a to the device")
    ev = clmsync(cp, dev, b1, CL_MEM_DEVICE + CL_EVENT_WAIT)
    call device_copy(a1, b1, int(size(a1) * storage_size(a1) / 8, c_int), "i8 rank 1")
    ev = clmsync(cp, dev, b1, CL_MEM_HOST)
    call check(c_associated(ev), "i8 rank 1" // ": clmsync b to the host")
    call check(all(b1 == a1), "i8 rank 1" // ": the device's copy equals the host's array")
    call check(clsizeofmem(c_loc(a1)) == int(size(a1) * storage_size(a1) / 8, c_size_t), &
               "i8 rank 1" // ": clsizeofmem is the array's size")
    call cldeallocate(a1)
    call check(.not. associated(a1), "i8 rank 1" // ": cldeallocate nullifies")
    call cldeallocate(b1, stat=stat)
    call check(stat == 0 .and. .not. associated(b1), "i8 rank 1" // ": cldeallocate with stat")
    call clallocate(cp, a2, [5, 9], stat=stat)
    call check(stat == 0 .and. associated(a2), "i8 rank 2" // ": clallocate")
    call clallocate(cp, b2, [5, 9])
    call check(all(shape(a2) == [5, 9]), "i8 rank 2" // ": shape")
    a2 = reshape([(int(mod(k * 37, 101) - 50, int8), k = 1, size(a2))], shape(a2))
    b2 = 0
    ev = clmsync(cp, dev, a2, CL_MEM_DEVICE)
    call check(c_associated(ev), "i8 rank 2" // ": clmsync a to the device")
    ev = clmsync(cp, dev, b2, CL_MEM_DEVICE + CL_EVENT_WAIT)
    call device_copy(a2, b2, int(size(a2) * storage_size(a2) / 8, c_int), "i8 rank 2")
    ev = clmsync(cp, dev, b2, CL_MEM_HOST)
    call check(c_associated(ev), "i8 rank 2" // ": clmsync b to the host")
    call check(all(b2 == a2), "i8 rank 2" // ": the device's copy equals the host's array")
    call check(clsizeofmem(c_loc(a2)) == int(size(a2) * storage_size(a2) / 8, c_size_t), &
               "i8 rank 2" // ": clsizeofmem is the array's size")
    call cldeallocate(a2)
    call check(.not. associated(a2), "i8 rank 2" // ": cldeallocate nullifies")
    call cldeallocate(b2, stat=stat)
    call check(stat == 0 .and. .not. associated(b2), "i8 rank 2" // ": cldeallocate with stat")
    call clallocate(cp, a3, [3, 4, 7], stat=stat)
    call check(stat == 0 .and. associated(a3), "i8 rank 3" // ": clallocate")
    call clallocate(cp, b3, [3, 4, 7])
    call check(all(shape(a3) == [3, 4, 7]), "i8 rank 3" // ": shape")
    a3 = reshape([(int(mod(k * 37, 101) - 50, int8), k = 1, size(a3))], shape(a3))
    b3 = 0
    ev = clmsync(cp, dev, a3, CL_MEM_DEVICE)
    call check(c_associated(ev), "i8 rank 3" // ": clmsync a to the device")
    ev = clmsync(cp, dev, b3, CL_MEM_DEVICE + CL_EVENT_WAIT)
    call device_copy(a3, b3, int(size(a3) * storage_size(a3) / 8, c_int), "i8 rank 3")
    ev = clmsync(cp, dev, b3, CL_MEM_HOST)
    call check(c_associated(ev), "i8 rank 3" // ": clmsync b to the host")
    call check(all(b3 == a3), "i8 rank 3" // ": the device's copy equals the host's array")
    call check(clsizeofmem(c_loc(a3)) == int(size(a3) * storage_size(a3) / 8, c_size_t), &
               "i8 rank 3" // ": clsizeofmem is the array's size")
    call cldeallocate(a3)
    call check(.not. associated(a3), "i8 rank 3" // ": cldeallocate nullifies")
    call cldeallocate(b3, stat=stat)
    call check(stat == 0 .and. .not. associated(b3), "i8 rank 3" // ": cldeallocate with stat")
  end subroutine

  subroutine kind_i16()
    integer(int16), pointer :: a1(:), b1(:)
    integer(int16), pointer :: a2(:,:), b2(:,:)
    integer(int16), pointer :: a3(:,:,:), b3(:,:,:)
    type(c_ptr) :: ev
    integer :: k, stat
    call clallocate(cp, a1, [37], stat=stat)
    call check(stat == 0 .and. associated(a1), "i16 rank 1" // ": clallocate")
    call clallocate(cp, b1, [37])
    call check(all(shape(a1) == [37]), "i16 rank 1" // ": shape")
    a1 = reshape([(int(k * 311 - 9000, int16), k = 1, size(a1))], shape(a1))
    b1 = 0
    ev = clmsync(cp, dev, a1, CL_MEM_DEVICE)
    call check(c_associated(ev), "i16 rank 1" // ": clmsync a to the device")
    ev = clmsync(cp, dev, b1, CL_MEM_DEVICE + CL_EVENT_WAIT)
    call device_copy(a1, b1, int(size(a1) * storage_size(a1) / 8, c_int), "i16 rank 1")
    ev = clmsync(cp, dev, b1, CL_MEM_HOST)
    call check(c_associated(ev), "i16 rank 1" // ": clmsync b to the host")
    call check(all(b1 == a1), "i16 rank 1" // ": the device's copy equals the host's array")
    call check(clsizeofmem(c_loc(a1)) == int(size(a1) * storage_size(a1) / 8, c_size_t), &
               "i16 rank 1" // ": clsizeofmem is the array's size")
    call cldeallocate(a1)
    call check(.not. associated(a1), "i16 rank 1" // ": cldeallocate nullifies")
    call cldeallocate(b1, stat=stat)
    call check(stat == 0 .and. .not. associated(b1), "i16 rank 1" // ": cldeallocate with stat")
    call clallocate(cp, a2, [5, 9], stat=stat)
    call check(stat == 0 .and. associated(a2), "i16 rank 2" // ": clallocate")
    call clallocate(cp, b2, [5, 9])
    call check(all(shape(a2) == [5, 9]), "i16 rank 2" // ": shape")
    a2 = reshape([(int(k * 311 - 9000, int16), k = 1, size(a2))], shape(a2))
    b2 = 0
    ev = clmsync(cp, dev, a2, CL_MEM_DEVICE)
    call check(c_associated(ev), "i16 rank 2" // ": clmsync a to the device")
    ev = clmsync(cp, dev, b2, CL_MEM_DEVICE + CL_EVENT_WAIT)
    call device_copy(a2, b2, int(size(a2) * storage_size(a2) / 8, c_int), "i16 rank 2")
    ev = clmsync(cp, dev, b2, CL_MEM_HOST)
    call check(c_associated(ev), "i16 rank 2" // ": clmsync b to the host")
    call check(all(b2 == a2), "i16 rank 2" // ": the device's copy equals the host's array")
    call check(clsizeofmem(c_loc(a2)) == int(size(a2) * storage_size(a2) / 8, c_size_t), &
               "i16 rank 2" // ": clsizeofmem is the array's size")
    call cldeallocate(a2)
    call check(.not. associated(a2), "i16 rank 2" // ": cldeallocate nullifies")
    call cldeallocate(b2, stat=stat)
    call check(stat == 0 .and. .not. associated(b2), "i16 rank 2" // ": cldeallocate with stat")
    call clallocate(cp, a3, [3, 4, 7], stat=stat)
    call check(stat == 0 .and. associated(a3), "i16 rank 3" // ": clallocate")
    call clallocate(cp, b3, [3, 4, 7])
    call check(all(shape(a3) == [3, 4, 7]), "i16 rank 3" // ": shape")
    a3 = reshape([(int(k * 311 - 9000, int16), k = 1, size(a3))], shape(a3))
    b3 = 0
    ev = clmsync(cp, dev, a3, CL_MEM_DEVICE)
    call check(c_associated(ev), "i16 rank 3" // ": clmsync a to the device")
    ev = clmsync(cp, dev, b3, CL_MEM_DEVICE + CL_EVENT_WAIT)
    call device_copy(a3, b3, int(size(a3) * storage_size(a3) / 8, c_int), "i16 rank 3")
    ev = clmsync(cp, dev, b3, CL_MEM_HOST)
    call check(c_associated(ev), "i16 rank 3" // ": clmsync b to the host")
    call check(all(b3 == a3), "i16 rank 3" // ": the device's copy equals the host's array")
    call check(clsizeofmem(c_loc(a3)) == int(size(a3) * storage_size(a3) / 8, c_size_t), &
               "i16 rank 3" // ": clsizeofmem is the array's size")
    call cldeallocate(a3)
    call check(.not. associated(a3), "i16 rank 3" // ": cldeallocate nullifies")
    call cldeallocate(b3, stat=stat)
    call check(stat == 0 .and. .not. associated(b3), "i16 rank 3" // ": cldeallocate with stat")
  end subroutine

  subroutine kind_i32()
    integer(int32), pointer :: a1(:), b1(:)
    integer(int32), pointer :: a2(:,:), b2(:,:)
    integer(int32), pointer :: a3(:,:,:), b3(:,:,:)
    type(c_ptr) :: ev
    integer :: k, stat
    call clallocate(cp, a1, [37], stat=stat)
    call check(stat == 0 .and. associated(a1), "i32 rank 1" // ": clallocate")
    call clallocate(cp, b1, [37])
    call check(all(shape(a1) == [37]), "i32 rank 1" // ": shape")
    a1 = reshape([(int(k * 100003 - 7, int32), k = 1, size(a1))], shape(a1))
    b1 = 0
    ev = clmsync(cp, dev, a1, CL_MEM_DEVICE)
    call check(c_associated(ev), "i32 rank 1" // ": clmsync a to the device")
    ev = clmsync(cp, dev, b1, CL_MEM_DEVICE + CL_EVENT_WAIT)
    call device_copy(a1, b1, int(size(a1) * storage_size(a1) / 8, c_int), "i32 rank 1")
    ev = clmsync(cp, dev, b1, CL_MEM_HOST)
    call check(c_associated(ev), "i32 rank 1" // ": clmsync b to the host")
    call check(all(b1 == a1), "i32 rank 1" // ": the device's copy equals the host's array")
    call check(clsizeofmem(c_loc(a1)) == int(size(a1) * storage_size(a1) / 8, c_size_t), &
               "i32 rank 1" // ": clsizeofmem is the array's size")
    call cldeallocate(a1)
    call check(.not. associated(a1), "i32 rank 1" // ": cldeallocate nullifies")
    call cldeallocate(b1, stat=stat)
    call check(stat == 0 .and. .not. associated(b1), "i32 rank 1" // ": cldeallocate with stat")
    call clallocate(cp, a2, [5, 9], stat=stat)
    call check(stat == 0 .and. associated(a2), "i32 rank 2" // ": clallocate")
    call clallocate(cp, b2, [5, 9])
    call check(all(shape(a2) == [5, 9]), "i32 rank 2" // ": shape")
    a2 = reshape([(int(k * 100003 - 7, int32), k = 1, size(a2))], shape(a2))
    b2 = 0
    ev = clmsync(cp, dev, a2, CL_MEM_DEVICE)
    call check(c_associated(ev), "i32 rank 2" // ": clmsync a to the device")
    ev = clmsync(cp, dev, b2, CL_MEM_DEVICE + CL_EVENT_WAIT)
    call device_copy(a2, b2, int(size(a2) * storage_size(a2) / 8, c_int), "i32 rank 2")
    ev = clmsync(cp, dev, b2, CL_MEM_HOST)
    call check(c_associated(ev), "i32 rank 2" // ": clmsync b to the host")
    call check(all(b2 == a2), "i32 rank 2" // ": the device's copy equals the host's array")
    call check(clsizeofmem(c_loc(a2)) == int(size(a2) * storage_size(a2) / 8, c_size_t), &
               "i32 rank 2" // ": clsizeofmem is the array's size")
    call cldeallocate(a2)
    call check(.not. associated(a2), "i32 rank 2" // ": cldeallocate nullifies")
    call cldeallocate(b2, stat=stat)
    call check(stat == 0 .and. .not. associated(b2), "i32 rank 2" // ": cldeallocate with stat")
    call clallocate(cp, a3, [3, 4, 7], stat=stat)
    call check(stat == 0 .and. associated(a3), "i32 rank 3" // ": clallocate")
    call clallocate(cp, b3, [3, 4, 7])
    call check(all(shape(a3) == [3, 4, 7]), "i32 rank 3" // ": shape")
    a3 = reshape([(int(k * 100003 - 7, int32), k = 1, size(a3))], shape(a3))
    b3 = 0
    ev = clmsync(cp, dev, a3, CL_MEM_DEVICE)
    call check(c_associated(ev), "i32 rank 3" // ": clmsync a to the device")
    ev = clmsync(cp, dev, b3, CL_MEM_DEVICE + CL_EVENT_WAIT)
    call device_copy(a3, b3, int(size(a3) * storage_size(a3) / 8, c_int), "i32 rank 3")
    ev = clmsync(cp, dev, b3, CL_MEM_HOST)
    call check(c_associated(ev), "i32 rank 3" // ": clmsync b to the host")
    call check(all(b3 == a3), "i32 rank 3" // ": the device's copy equals the host's array")
    call check(clsizeofmem(c_loc(a3)) == int(size(a3) * storage_size(a3) / 8, c_size_t), &
               "i32 rank 3" // ": clsizeofmem is the array's size")
    call cldeallocate(a3)
    call check(.not. associated(a3), "i32 rank 3" // ": cldeallocate nullifies")
    call cldeallocate(b3, stat=stat)
    call check(stat == 0 .and. .not. associated(b3), "i32 rank 3" // ": cldeallocate with stat")
  end subroutine

  subroutine kind_i64()
    integer(int64), pointer :: a1(:), b1(:)
    integer(int64), pointer :: a2(:,:), b2(:,:)
    integer(int64), pointer :: a3(:,:,:), b3(:,:,:)
    type(c_ptr) :: ev
    integer :: k, stat
    call clallocate(cp, a1, [37], stat=stat)
    call check(stat == 0 .and. associated(a1), "i64 rank 1" // ": clallocate")
    call clallocate(cp, b1, [37])
    call check(all(shape(a1) == [37]), "i64 rank 1" // ": shape")
    a1 = reshape([(int(k, int64) * 3000000007_int64 - 11_int64, k = 1, size(a1))], shape(a1))
    b1 = 0
    ev = clmsync(cp, dev, a1, CL_MEM_DEVICE)
    call check(c_associated(ev), "i64 rank 1" // ": clmsync a to the device")
    ev = clmsync(cp, dev, b1, CL_MEM_DEVICE + CL_EVENT_WAIT)
    call device_copy(a1, b1, int(size(a1) * storage_size(a1) / 8, c_int), "i64 rank 1")
    ev = clmsync(cp, dev, b1, CL_MEM_HOST)
    call check(c_associated(ev), "i64 rank 1" // ": clmsync b to the host")
    call check(all(b1 == a1), "i64 rank 1" // ": the device's copy equals the host's array")
    call check(clsizeofmem(c_loc(a1)) == int(size(a1) * storage_size(a1) / 8, c_size_t), &
               "i64 rank 1" // ": clsizeofmem is the array's size")
    call cldeallocate(a1)
    call check(.not. associated(a1), "i64 rank 1" // ": cldeallocate nullifies")
    call cldeallocate(b1, stat=stat)
    call check(stat == 0 .and. .not. associated(b1), "i64 rank 1" // ": cldeallocate with stat")
    call clallocate(cp, a2, [5, 9], stat=stat)
    call check(stat == 0 .and. associated(a2), "i64 rank 2" // ": clallocate")
    call clallocate(cp, b2, [5, 9])
    call check(all(shape(a2) == [5, 9]), "i64 rank 2" // ": shape")
    a2 = reshape([(int(k, int64) * 3000000007_int64 - 11_int64, k = 1, size(a2))], shape(a2))
    b2 = 0
    ev = clmsync(cp, dev, a2, CL_MEM_DEVICE)
    call check(c_associated(ev), "i64 rank 2" // ": clmsync a to the device")
    ev = clmsync(cp, dev, b2, CL_MEM_DEVICE + CL_EVENT_WAIT)
    call device_copy(a2, b2, int(size(a2) * storage_size(a2) / 8, c_int), "i64 rank 2")
    ev = clmsync(cp, dev, b2, CL_MEM_HOST)
    call check(c_associated(ev), "i64 rank 2" // ": clmsync b to the host")
    call check(all(b2 == a2), "i64 rank 2" // ": the device's copy equals the host's array")
    call check(clsizeofmem(c_loc(a2)) == int(size(a2) * storage_size(a2) / 8, c_size_t), &
               "i64 rank 2" // ": clsizeofmem is the array's size")
    call cldeallocate(a2)
    call check(.not. associated(a2), "i64 rank 2" // ": cldeallocate nullifies")
    call cldeallocate(b2, stat=stat)
    call check(stat == 0 .and. .not. associated(b2), "i64 rank 2" // ": cldeallocate with stat")
    call clallocate(cp, a3, [3, 4, 7], stat=stat)
    call check(stat == 0 .and. associated(a3), "i64 rank 3" // ": clallocate")
    call clallocate(cp, b3, [3, 4, 7])
    call check(all(shape(a3) == [3, 4, 7]), "i64 rank 3" // ": shape")
    a3 = reshape([(int(k, int64) * 3000000007_int64 - 11_int64, k = 1, size(a3))], shape(a3))
    b3 = 0
    ev = clmsync(cp, dev, a3, CL_MEM_DEVICE)
    call check(c_associated(ev), "i64 rank 3" // ": clmsync a to the device")
    ev = clmsync(cp, dev, b3, CL_MEM_DEVICE + CL_EVENT_WAIT)
    call device_copy(a3, b3, int(size(a3) * storage_size(a3) / 8, c_int), "i64 rank 3")
    ev = clmsync(cp, dev, b3, CL_MEM_HOST)
    call check(c_associated(ev), "i64 rank 3" // ": clmsync b to the host")
    call check(all(b3 == a3), "i64 rank 3" // ": the device's copy equals the host's array")
    call check(clsizeofmem(c_loc(a3)) == int(size(a3) * storage_size(a3) / 8, c_size_t), &
               "i64 rank 3" // ": clsizeofmem is the array's size")
    call cldeallocate(a3)
    call check(.not. associated(a3), "i64 rank 3" // ": cldeallocate nullifies")
    call cldeallocate(b3, stat=stat)
    call check(stat == 0 .and. .not. associated(b3), "i64 rank 3" // ": cldeallocate with stat")
  end subroutine

  subroutine kind_r32()
    real(real32), pointer :: a1(:), b1(:)
    real(real32), pointer :: a2(:,:), b2(:,:)
    real(real32), pointer :: a3(:,:,:), b3(:,:,:)
    type(c_ptr) :: ev
    integer :: k, stat
    call clallocate(cp, a1, [37], stat=stat)
    call check(stat == 0 .and. associated(a1), "r32 rank 1" // ": clallocate")
    call clallocate(cp, b1, [37])
    call check(all(shape(a1) == [37]), "r32 rank 1" // ": shape")
    a1 = reshape([(real(k, real32) * 0.25_real32 - 3.5_real32, k = 1, size(a1))], shape(a1))
    b1 = 0
    ev = clmsync(cp, dev, a1, CL_MEM_DEVICE)
    call check(c_associated(ev), "r32 rank 1" // ": clmsync a to the device")
    ev = clmsync(cp, dev, b1, CL_MEM_DEVICE + CL_EVENT_WAIT)
    call device_copy(a1, b1, int(size(a1) * storage_size(a1) / 8, c_int), "r32 rank 1")
    ev = clmsync(cp, dev, b1, CL_MEM_HOST)
    call check(c_associated(ev), "r32 rank 1" // ": clmsync b to the host")
    call check(all(b1 == a1), "r32 rank 1" // ": the device's copy equals the host's array")
    call check(clsizeofmem(c_loc(a1)) == int(size(a1) * storage_size(a1) / 8, c_size_t), &
               "r32 rank 1" // ": clsizeofmem is the array's size")
    call cldeallocate(a1)
    call check(.not. associated(a1), "r32 rank 1" // ": cldeallocate nullifies")
    call cldeallocate(b1, stat=stat)
    call check(stat == 0 .and. .not. associated(b1), "r32 rank 1" // ": cldeallocate with stat")
    call clallocate(cp, a2, [5, 9], stat=stat)
    call check(stat == 0 .and. associated(a2), "r32 rank 2" // ": clallocate")
    call clallocate(cp, b2, [5, 9])
    call check(all(shape(a2) == [5, 9]), "r32 rank 2" // ": shape")
    a2 = reshape([(real(k, real32) * 0.25_real32 - 3.5_real32, k = 1, size(a2))], shape(a2))
    b2 = 0
    ev = clmsync(cp, dev, a2, CL_MEM_DEVICE)
    call check(c_associated(ev), "r32 rank 2" // ": clmsync a to the device")
    ev = clmsync(cp, dev, b2, CL_MEM_DEVICE + CL_EVENT_WAIT)
    call device_copy(a2, b2, int(size(a2) * storage_size(a2) / 8, c_int), "r32 rank 2")
    ev = clmsync(cp, dev, b2, CL_MEM_HOST)
    call check(c_associated(ev), "r32 rank 2" // ": clmsync b to the host")
    call check(all(b2 == a2), "r32 rank 2" // ": the device's copy equals the host's array")
    call check(clsizeofmem(c_loc(a2)) == int(size(a2) * storage_size(a2) / 8, c_size_t), &
               "r32 rank 2" // ": clsizeofmem is the array's size")
    call cldeallocate(a2)
    call check(.not. associated(a2), "r32 rank 2" // ": cldeallocate nullifies")
    call cldeallocate(b2, stat=stat)
    call check(stat == 0 .and. .not. associated(b2), "r32 rank 2" // ": cldeallocate with stat")
    call clallocate(cp, a3, [3, 4, 7], stat=stat)
    call check(stat == 0 .and. associated(a3), "r32 rank 3" // ": clallocate")
    call clallocate(cp, b3, [3, 4, 7])
    call check(all(shape(a3) == [3, 4, 7]), "r32 rank 3" // ": shape")
    a3 = reshape([(real(k, real32) * 0.25_real32 - 3.5_real32, k = 1, size(a3))], shape(a3))
    b3 = 0
    ev = clmsync(cp, dev, a3, CL_MEM_DEVICE)
    call check(c_associated(ev), "r32 rank 3" // ": clmsync a to the device")
    ev = clmsync(cp, dev, b3, CL_MEM_DEVICE + CL_EVENT_WAIT)
    call device_copy(a3, b3, int(size(a3) * storage_size(a3) / 8, c_int), "r32 rank 3")
    ev = clmsync(cp, dev, b3, CL_MEM_HOST)
    call check(c_associated(ev), "r32 rank 3" // ": clmsync b to the host")
    call check(all(b3 == a3), "r32 rank 3" // ": the device's copy equals the host's array")
    call check(clsizeofmem(c_loc(a3)) == int(size(a3) * storage_size(a3) / 8, c_size_t), &
               "r32 rank 3" // ": clsizeofmem is the array's size")
    call cldeallocate(a3)
    call check(.not. associated(a3), "r32 rank 3" // ": cldeallocate nullifies")
    call cldeallocate(b3, stat=stat)
    call check(stat == 0 .and. .not. associated(b3), "r32 rank 3" // ": cldeallocate with stat")
  end subroutine

  subroutine kind_r64()
    real(real64), pointer :: a1(:), b1(:)
    real(real64), pointer :: a2(:,:), b2(:,:)
    real(real64), pointer :: a3(:,:,:), b3(:,:,:)
    type(c_ptr) :: ev
    integer :: k, stat
    call clallocate(cp, a1, [37], stat=stat)
    call check(stat == 0 .and. associated(a1), "r64 rank 1" // ": clallocate")
    call clallocate(cp, b1, [37])
    call check(all(shape(a1) == [37]), "r64 rank 1" // ": shape")
    a1 = reshape([(real(k, real64) / 3.0_real64 - 1.0e10_real64, k = 1, size(a1))], shape(a1))
    b1 = 0
    ev = clmsync(cp, dev, a1, CL_MEM_DEVICE)
    call check(c_associated(ev), "r64 rank 1" // ": clmsync a to the device")
    ev = clmsync(cp, dev, b1, CL_MEM_DEVICE + CL_EVENT_WAIT)
    call device_copy(a1, b1, int(size(a1) * storage_size(a1) / 8, c_int), "r64 rank 1")
    ev = clmsync(cp, dev, b1, CL_MEM_HOST)
    call check(c_associated(ev), "r64 rank 1" // ": clmsync b to the host")
    call check(all(b1 == a1), "r64 rank 1" // ": the device's copy equals the host's array")
    call check(clsizeofmem(c_loc(a1)) == int(size(a1) * storage_size(a1) / 8, c_size_t), &
               "r64 rank 1" // ": clsizeofmem is the array's size")
    call cldeallocate(a1)
    call check(.not. associated(a1), "r64 rank 1" // ": cldeallocate nullifies")
    call cldeallocate(b1, stat=stat)
    call check(stat == 0 .and. .not. associated(b1), "r64 rank 1" // ": cldeallocate with stat")
    call clallocate(cp, a2, [5, 9], stat=stat)
    call check(stat == 0 .and. associated(a2), "r64 rank 2" // ": clallocate")
    call clallocate(cp, b2, [5, 9])
    call check(all(shape(a2) == [5, 9]), "r64 rank 2" // ": shape")
    a2 = reshape([(real(k, real64) / 3.0_real64 - 1.0e10_real64, k = 1, size(a2))], shape(a2))
    b2 = 0
    ev = clmsync(cp, dev, a2, CL_MEM_DEVICE)
    call check(c_associated(ev), "r64 rank 2" // ": clmsync a to the device")
    ev = clmsync(cp, dev, b2, CL_MEM_DEVICE + CL_EVENT_WAIT)
    call device_copy(a2, b2, int(size(a2) * storage_size(a2) / 8, c_int), "r64 rank 2")
    ev = clmsync(cp, dev, b2, CL_MEM_HOST)
    call check(c_associated(ev), "r64 rank 2" // ": clmsync b to the host")
    call check(all(b2 == a2), "r64 rank 2" // ": the device's copy equals the host's array")
    call check(clsizeofmem(c_loc(a2)) == int(size(a2) * storage_size(a2) / 8, c_size_t), &
               "r64 rank 2" // ": clsizeofmem is the array's size")
    call cldeallocate(a2)
    call check(.not. associated(a2), "r64 rank 2" // ": cldeallocate nullifies")
    call cldeallocate(b2, stat=stat)
    call check(stat == 0 .and. .not. associated(b2), "r64 rank 2" // ": cldeallocate with stat")
    call clallocate(cp, a3, [3, 4, 7], stat=stat)
    call check(stat == 0 .and. associated(a3), "r64 rank 3" // ": clallocate")
    call clallocate(cp, b3, [3, 4, 7])
    call check(all(shape(a3) == [3, 4, 7]), "r64 rank 3" // ": shape")
    a3 = reshape([(real(k, real64) / 3.0_real64 - 1.0e10_real64, k = 1, size(a3))], shape(a3))
    b3 = 0
    ev = clmsync(cp, dev, a3, CL_MEM_DEVICE)
    call check(c_associated(ev), "r64 rank 3" // ": clmsync a to the device")
    ev = clmsync(cp, dev, b3, CL_MEM_DEVICE + CL_EVENT_WAIT)
    call device_copy(a3, b3, int(size(a3) * storage_size(a3) / 8, c_int), "r64 rank 3")
    ev = clmsync(cp, dev, b3, CL_MEM_HOST)
    call check(c_associated(ev), "r64 rank 3" // ": clmsync b to the host")
    call check(all(b3 == a3), "r64 rank 3" // ": the device's copy equals the host's array")
    call check(clsizeofmem(c_loc(a3)) == int(size(a3) * storage_size(a3) / 8, c_size_t), &
               "r64 rank 3" // ": clsizeofmem is the array's size")
    call cldeallocate(a3)
    call check(.not. associated(a3), "r64 rank 3" // ": cldeallocate nullifies")
    call cldeallocate(b3, stat=stat)
    call check(stat == 0 .and. .not. associated(b3), "r64 rank 3" // ": cldeallocate with stat")
  end subroutine

  subroutine kind_c32()
    complex(real32), pointer :: a1(:), b1(:)
    complex(real32), pointer :: a2(:,:), b2(:,:)
    complex(real32), pointer :: a3(:,:,:), b3(:,:,:)
    type(c_ptr) :: ev
    integer :: k, stat
    call clallocate(cp, a1, [37], stat=stat)
    call check(stat == 0 .and. associated(a1), "c32 rank 1" // ": clallocate")
    call clallocate(cp, b1, [37])
    call check(all(shape(a1) == [37]), "c32 rank 1" // ": shape")
    a1 = reshape([(cmplx(k, -2 * k, real32), k = 1, size(a1))], shape(a1))
    b1 = 0
    ev = clmsync(cp, dev, a1, CL_MEM_DEVICE)
    call check(c_associated(ev), "c32 rank 1" // ": clmsync a to the device")
    ev = clmsync(cp, dev, b1, CL_MEM_DEVICE + CL_EVENT_WAIT)
    call device_copy(a1, b1, int(size(a1) * storage_size(a1) / 8, c_int), "c32 rank 1")
    ev = clmsync(cp, dev, b1, CL_MEM_HOST)
    call check(c_associated(ev), "c32 rank 1" // ": clmsync b to the host")
    call check(all(b1 == a1), "c32 rank 1" // ": the device's copy equals the host's array")
    call check(clsizeofmem(c_loc(a1)) == int(size(a1) * storage_size(a1) / 8, c_size_t), &
               "c32 rank 1" // ": clsizeofmem is the array's size")
    call cldeallocate(a1)
    call check(.not. associated(a1), "c32 rank 1" // ": cldeallocate nullifies")
    call cldeallocate(b1, stat=stat)
    call check(stat == 0 .and. .not. associated(b1), "c32 rank 1" // ": cldeallocate with stat")
    call clallocate(cp, a2, [5, 9], stat=stat)
    call check(stat == 0 .and. associated(a2), "c32 rank 2" // ": clallocate")
    call clallocate(cp, b2, [5, 9])
    call check(all(shape(a2) == [5, 9]), "c32 rank 2" // ": shape")
    a2 = reshape([(cmplx(k, -2 * k, real32), k = 1, size(a2))], shape(a2))
    b2 = 0
    ev = clmsync(cp, dev, a2, CL_MEM_DEVICE)
    call check(c_associated(ev), "c32 rank 2" // ": clmsync a to the device")
    ev = clmsync(cp, dev, b2, CL_MEM_DEVICE + CL_EVENT_WAIT)
    call device_copy(a2, b2, int(size(a2) * storage_size(a2) / 8, c_int), "c32 rank 2")
    ev = clmsync(cp, dev, b2, CL_MEM_HOST)
    call check(c_associated(ev), "c32 rank 2" // ": clmsync b to the host")
    call check(all(b2 == a2), "c32 rank 2" // ": the device's copy equals the host's array")
    call check(clsizeofmem(c_loc(a2)) == int(size(a2) * storage_size(a2) / 8, c_size_t), &
               "c32 rank 2" // ": clsizeofmem is the array's size")
    call cldeallocate(a2)
    call check(.not. associated(a2), "c32 rank 2" // ": cldeallocate nullifies")
    call cldeallocate(b2, stat=stat)
    call check(stat == 0 .and. .not. associated(b2), "c32 rank 2" // ": cldeallocate with stat")
    call clallocate(cp, a3, [3, 4, 7], stat=stat)
    call check(stat == 0 .and. associated(a3), "c32 rank 3" // ": clallocate")
    call clallocate(cp, b3, [3, 4, 7])
    call check(all(shape(a3) == [3, 4, 7]), "c32 rank 3" // ": shape")
    a3 = reshape([(cmplx(k, -2 * k, real32), k = 1, size(a3))], shape(a3))
    b3 = 0
    ev = clmsync(cp, dev, a3, CL_MEM_DEVICE)
    call check(c_associated(ev), "c32 rank 3" // ": clmsync a to the device")
    ev = clmsync(cp, dev, b3, CL_MEM_DEVICE + CL_EVENT_WAIT)
    call device_copy(a3, b3, int(size(a3) * storage_size(a3) / 8, c_int), "c32 rank 3")
    ev = clmsync(cp, dev, b3, CL_MEM_HOST)
    call check(c_associated(ev), "c32 rank 3" // ": clmsync b to the host")
    call check(all(b3 == a3), "c32 rank 3" // ": the device's copy equals the host's array")
    call check(clsizeofmem(c_loc(a3)) == int(size(a3) * storage_size(a3) / 8, c_size_t), &
               "c32 rank 3" // ": clsizeofmem is the array's size")
    call cldeallocate(a3)
    call check(.not. associated(a3), "c32 rank 3" // ": cldeallocate nullifies")
    call cldeallocate(b3, stat=stat)
    call check(stat == 0 .and. .not. associated(b3), "c32 rank 3" // ": cldeallocate with stat")
  end subroutine

  subroutine kind_c64()
    complex(real64), pointer :: a1(:), b1(:)
    complex(real64), pointer :: a2(:,:), b2(:,:)
    complex(real64), pointer :: a3(:,:,:), b3(:,:,:)
    type(c_ptr) :: ev
    integer :: k, stat
    call clallocate(cp, a1, [37], stat=stat)
    call check(stat == 0 .and. associated(a1), "c64 rank 1" // ": clallocate")
    call clallocate(cp, b1, [37])
    call check(all(shape(a1) == [37]), "c64 rank 1" // ": shape")
    a1 = reshape([(cmplx(real(k, real64) / 7.0_real64, -k, real64), k = 1, size(a1))], shape(a1))
    b1 = 0
    ev = clmsync(cp, dev, a1, CL_MEM_DEVICE)
    call check(c_associated(ev), "c64 rank 1" // ": clmsync a to the device")
    ev = clmsync(cp, dev, b1, CL_MEM_DEVICE + CL_EVENT_WAIT)
    call device_copy(a1, b1, int(size(a1) * storage_size(a1) / 8, c_int), "c64 rank 1")
    ev = clmsync(cp, dev, b1, CL_MEM_HOST)
    call check(c_associated(ev), "c64 rank 1" // ": clmsync b to the host")
    call check(all(b1 == a1), "c64 rank 1" // ": the device's copy equals the host's array")
    call check(clsizeofmem(c_loc(a1)) == int(size(a1) * storage_size(a1) / 8, c_size_t), &
               "c64 rank 1" // ": clsizeofmem is the array's size")
    call cldeallocate(a1)
    call check(.not. associated(a1), "c64 rank 1" // ": cldeallocate nullifies")
    call cldeallocate(b1, stat=stat)
    call check(stat == 0 .and. .not. associated(b1), "c64 rank 1" // ": cldeallocate with stat")
    call clallocate(cp, a2, [5, 9], stat=stat)
    call check(stat == 0 .and. associated(a2), "c64 rank 2" // ": clallocate")
    call clallocate(cp, b2, [5, 9])
    call check(all(shape(a2) == [5, 9]), "c64 rank 2" // ": shape")
    a2 = reshape([(cmplx(real(k, real64) / 7.0_real64, -k, real64), k = 1, size(a2))], shape(a2))
    b2 = 0
    ev = clmsync(cp, dev, a2, CL_MEM_DEVICE)
    call check(c_associated(ev), "c64 rank 2" // ": clmsync a to the device")
    ev = clmsync(cp, dev, b2, CL_MEM_DEVICE + CL_EVENT_WAIT)
    call device_copy(a2, b2, int(size(a2) * storage_size(a2) / 8, c_int), "c64 rank 2")
    ev = clmsync(cp, dev, b2, CL_MEM_HOST)
    call check(c_associated(ev), "c64 rank 2" // ": clmsync b to the host")
    call check(all(b2 == a2), "c64 rank 2" // ": the device's copy equals the host's array")
    call check(clsizeofmem(c_loc(a2)) == int(size(a2) * storage_size(a2) / 8, c_size_t), &
               "c64 rank 2" // ": clsizeofmem is the array's size")
    call cldeallocate(a2)
    call check(.not. associated(a2), "c64 rank 2" // ": cldeallocate nullifies")
    call cldeallocate(b2, stat=stat)
    call check(stat == 0 .and. .not. associated(b2), "c64 rank 2" // ": cldeallocate with stat")
    call clallocate(cp, a3, [3, 4, 7], stat=stat)
    call check(stat == 0 .and. associated(a3), "c64 rank 3" // ": clallocate")
    call clallocate(cp, b3, [3, 4, 7])
    call check(all(shape(a3) == [3, 4, 7]), "c64 rank 3" // ": shape")
    a3 = reshape([(cmplx(real(k, real64) / 7.0_real64, -k, real64), k = 1, size(a3))], shape(a3))
    b3 = 0
    ev = clmsync(cp, dev, a3, CL_MEM_DEVICE)
    call check(c_associated(ev), "c64 rank 3" // ": clmsync a to the device")
    ev = clmsync(cp, dev, b3, CL_MEM_DEVICE + CL_EVENT_WAIT)
    call device_copy(a3, b3, int(size(a3) * storage_size(a3) / 8, c_int), "c64 rank 3")
    ev = clmsync(cp, dev, b3, CL_MEM_HOST)
    call check(c_associated(ev), "c64 rank 3" // ": clmsync b to the host")
    call check(all(b3 == a3), "c64 rank 3" // ": the device's copy equals the host's array")
    call check(clsizeofmem(c_loc(a3)) == int(size(a3) * storage_size(a3) / 8, c_size_t), &
               "c64 rank 3" // ": clsizeofmem is the array's size")
    call cldeallocate(a3)
    call check(.not. associated(a3), "c64 rank 3" // ": cldeallocate nullifies")
    call cldeallocate(b3, stat=stat)
    call check(stat == 0 .and. .not. associated(b3), "c64 rank 3" // ": cldeallocate with stat")
  end subroutine

  subroutine high_ranks()
    real(real64), pointer :: a4(:,:,:,:), b4(:,:,:,:), a7(:,:,:,:,:,:,:), b7(:,:,:,:,:,:,:)
    type(c_ptr) :: ev
    integer :: k
    call clallocate(cp, a4, [2, 3, 2, 5])
    call clallocate(cp, b4, [2, 3, 2, 5])
    call clallocate(cp, a7, [2_int64, 1_int64, 3_int64, 1_int64, 2_int64, 1_int64, 2_int64])
    call clallocate(cp, b7, [2, 1, 3, 1, 2, 1, 2])
    call check(all(shape(a4) == [2, 3, 2, 5]) .and. all(shape(a7) == [2, 1, 3, 1, 2, 1, 2]), &
               "ranks 4 and 7: shapes")
    a4 = reshape([(real(k, real64) / 3, k = 1, size(a4))], shape(a4))
    a7 = reshape([(real(-k, real64) / 7, k = 1, size(a7))], shape(a7))
    b4 = 0
    b7 = 0
    ev = clmsync(cp, dev, a4, CL_MEM_DEVICE)
    ev = clmsync(cp, dev, a7, CL_MEM_DEVICE)
    ev = clmsync(cp, dev, b4, CL_MEM_DEVICE)
    ev = clmsync(cp, dev, b7, CL_MEM_DEVICE)
    call device_copy(a4, b4, int(size(a4) * 8, c_int), "rank 4")
    call device_copy(a7, b7, int(size(a7) * 8, c_int), "rank 7")
    ev = clmsync(cp, dev, b4, CL_MEM_HOST)
    ev = clmsync(cp, dev, b7, CL_MEM_HOST)
    call check(all(b4 == a4), "rank 4: the device's copy equals the host's array")
    call check(all(b7 == a7), "rank 7: the device's copy equals the host's array")
    call cldeallocate(a4)
    call cldeallocate(b4)
    call cldeallocate(a7)
    call cldeallocate(b7)
    call check(.not. associated(a4) .and. .not. associated(b7), "ranks 4 and 7: cldeallocate")
  end subroutine

end program fortran_arrays
