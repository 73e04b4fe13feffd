! SPDX-License-Identifier: MIT
! fortran_sort.f90: clsort, clsort_by_key and clscan from Fortran.  1000
! pseudo-random integer(c_int) (an LCG) sorted on device 0, ascending and
! descending, keep their multiset (sum, xor, least and largest); the
! type(c_ptr) form sorts them as CL_REDUCE_UINT (negatives after the
! others); real(c_float) keys with many ties carry their original index as
! value, stable ascending and descending; an inclusive and an exclusive sum
! scan of 1..n (n(n+1)/2 at the end), in place, of integer(int64), a MIN
! scan of real(c_float) and the type(c_ptr) form; empty, non-contiguous and
! mismatched arrays.  Run by test_fortran in zero-copy and copy mode.
program fortran_sort
  use stdcl
  use fortran_checks
  use, intrinsic :: iso_fortran_env, only: int64
  implicit none
  integer, parameter :: n = 1000
  type(c_ptr) :: cp, ev
  integer(c_int), pointer :: a(:), idx(:), v(:), w(:)
  real(c_float), pointer :: k(:), r(:)
  integer(int64), pointer :: l(:)
  integer(c_int) :: orig(n), rc
  real(c_float) :: korig(n), rmin(n)
  integer(int64) :: seed
  integer :: i, npos
  character(len=:), allocatable :: msg

  cp = stdcpu
  if (c_associated(stdgpu)) cp = stdgpu
  call check(clgetndev(cp) >= 1, "the context has devices")
  seed = 2024

  ! clsort of integer(c_int): ascending, then descending.
  call clallocate(cp, a, [n])
  do i = 1, n
    a(i) = next() - 2**30
  end do
  orig = a
  ev = clmsync(cp, 0, a, CL_MEM_DEVICE)
  rc = clsort(cp, 0, a)
  call check(rc == 0, "clsort of integer(c_int): " // clerror())
  ev = clmsync(cp, 0, a, CL_MEM_HOST)
  call check(all(a(2:n) >= a(1:n - 1)), "clsort sorts ascending")
  call check(kept(a), "clsort keeps the multiset (sum, xor, min, max)")

  a = orig
  ev = clmsync(cp, 0, a, CL_MEM_DEVICE)
  rc = clsort(cp, 0, a, CL_SORT_DESCENDING)
  call check(rc == 0, "clsort CL_SORT_DESCENDING: " // clerror())
  ev = clmsync(cp, 0, a, CL_MEM_HOST)
  call check(all(a(2:n) <= a(1:n - 1)), "CL_SORT_DESCENDING sorts largest first")
  call check(kept(a), "the descending sort keeps the multiset")

  ! C's form: the same bits as unsigned int, the negatives after the others.
  a = orig
  npos = count(orig >= 0)
  ev = clmsync(cp, 0, a, CL_MEM_DEVICE)
  rc = clsort(cp, 0, c_loc(a), int(n, c_size_t), CL_REDUCE_UINT, 0)
  call check(rc == 0, "clsort of a c_ptr as CL_REDUCE_UINT: " // clerror())
  ev = clmsync(cp, 0, a, CL_MEM_HOST)
  call check(all(a(1:npos) >= 0) .and. all(a(npos + 1:n) < 0) .and. &
             all(a(2:npos) >= a(1:npos - 1)) .and. all(a(npos + 2:n) >= a(npos + 1:n - 1)), &
             "CL_REDUCE_UINT orders by the unsigned value")
  call check(kept(a), "the unsigned sort keeps the multiset")

  ! Arrays of no elements, non-contiguous sections.
  call check(clsort(cp, 0, a(1:0)) == 0, "clsort of an empty section does nothing")
  rc = clsort(cp, 0, a(1:n:2))
  msg = clerror()
  call check(rc == STDCL_EINVAL .and. index(msg, "not contiguous") > 0, &
             "clsort of a non-contiguous section is refused: " // msg)

  ! clsort_by_key: real(c_float) keys with ties (none zero: -0.0 and +0.0
  ! are equal in Fortran and not in the sort), values their index.
  call clallocate(cp, k, [n])
  call clallocate(cp, idx, [n])
  do i = 1, n
    korig(i) = real(ishft(next(), -25) - 32, c_float) + 0.25_c_float
  end do
  k = korig
  idx = [(i, i = 1, n)]
  ev = clmsync(cp, 0, k, CL_MEM_DEVICE)
  ev = clmsync(cp, 0, idx, CL_MEM_DEVICE)
  rc = clsort_by_key(cp, 0, k, idx)
  call check(rc == 0, "clsort_by_key of real(c_float) keys: " // clerror())
  ev = clmsync(cp, 0, k, CL_MEM_HOST)
  ev = clmsync(cp, 0, idx, CL_MEM_HOST)
  call check(all(k(2:n) >= k(1:n - 1)), "clsort_by_key sorts the keys")
  call check(moved_with_keys(), "each value moved with its key")
  call check(stable(), "clsort_by_key is stable (equal keys keep their indices' order)")

  k = korig
  idx = [(i, i = 1, n)]
  ev = clmsync(cp, 0, k, CL_MEM_DEVICE)
  ev = clmsync(cp, 0, idx, CL_MEM_DEVICE)
  rc = clsort_by_key(cp, 0, k, idx, CL_SORT_DESCENDING)
  call check(rc == 0, "clsort_by_key CL_SORT_DESCENDING: " // clerror())
  ev = clmsync(cp, 0, k, CL_MEM_HOST)
  ev = clmsync(cp, 0, idx, CL_MEM_HOST)
  call check(all(k(2:n) <= k(1:n - 1)), "clsort_by_key descending sorts the keys")
  call check(moved_with_keys(), "each value moved with its key, descending")
  call check(stable(), "clsort_by_key descending is stable")

  rc = clsort_by_key(cp, 0, k, idx(1:n - 1))
  msg = clerror()
  call check(rc == STDCL_EINVAL .and. index(msg, "clsort_by_key") > 0, &
             "clsort_by_key with fewer values than keys is refused: " // msg)

  ! clscan: sums of 1..n, inclusive and exclusive.
  call clallocate(cp, v, [n])
  call clallocate(cp, w, [n])
  v = [(i, i = 1, n)]
  w = -1
  ev = clmsync(cp, 0, v, CL_MEM_DEVICE)
  ev = clmsync(cp, 0, w, CL_MEM_DEVICE)
  rc = clscan(cp, 0, v, w, CL_REDUCE_SUM)
  call check(rc == 0, "clscan inclusive sum: " // clerror())
  ev = clmsync(cp, 0, w, CL_MEM_HOST)
  call check(w(n) == n * (n + 1) / 2, "the inclusive sum of 1..n ends with n(n+1)/2")
  call check(all(w == [(i * (i + 1) / 2, i = 1, n)]), "every inclusive partial sum")

  rc = clscan(cp, 0, v, w, CL_REDUCE_SUM, CL_SCAN_EXCLUSIVE)
  call check(rc == 0, "clscan CL_SCAN_EXCLUSIVE: " // clerror())
  ev = clmsync(cp, 0, w, CL_MEM_HOST)
  call check(w(1) == 0 .and. w(n) == (n - 1) * n / 2, &
             "the exclusive sum starts with 0 and ends with (n-1)n/2")
  call check(all(w == [((i - 1) * i / 2, i = 1, n)]), "every exclusive partial sum")

  ! C's form, then in place (out is in).
  w = -1
  ev = clmsync(cp, 0, w, CL_MEM_DEVICE)
  rc = clscan(cp, 0, c_loc(v), c_loc(w), int(n, c_size_t), CL_REDUCE_INT, CL_REDUCE_SUM, 0)
  call check(rc == 0, "clscan of c_ptrs: " // clerror())
  ev = clmsync(cp, 0, w, CL_MEM_HOST)
  call check(all(w == [(i * (i + 1) / 2, i = 1, n)]), "the inclusive sum of c_ptrs")
  rc = clscan(cp, 0, v, v, CL_REDUCE_SUM)
  call check(rc == 0, "clscan in place: " // clerror())
  ev = clmsync(cp, 0, v, CL_MEM_HOST)
  call check(all(v == [(i * (i + 1) / 2, i = 1, n)]), "the inclusive sum in place")

  ! integer(int64) sums and a real(c_float) MIN scan.
  call clallocate(cp, l, [n])
  l = [(int(i, int64) * 10000000000_int64, i = 1, n)]
  ev = clmsync(cp, 0, l, CL_MEM_DEVICE)
  rc = clscan(cp, 0, l, l, CL_REDUCE_SUM, CL_SCAN_EXCLUSIVE)
  call check(rc == 0, "clscan of integer(int64): " // clerror())
  ev = clmsync(cp, 0, l, CL_MEM_HOST)
  call check(all(l == [(int(i - 1, int64) * i / 2 * 10000000000_int64, i = 1, n)]), &
             "the exclusive sum of integer(int64) past 2**32")
  call clallocate(cp, r, [n])
  r = korig
  rmin(1) = korig(1)
  do i = 2, n
    rmin(i) = min(rmin(i - 1), korig(i))
  end do
  ev = clmsync(cp, 0, r, CL_MEM_DEVICE)
  rc = clscan(cp, 0, r, r, CL_REDUCE_MIN)
  call check(rc == 0, "clscan MIN of real(c_float): " // clerror())
  ev = clmsync(cp, 0, r, CL_MEM_HOST)
  call check(all(r == rmin), "the running minimum")

  call check(clscan(cp, 0, v(1:0), w(1:0), CL_REDUCE_SUM) == 0, "clscan of empty sections does nothing")
  rc = clscan(cp, 0, v, w(1:n - 1), CL_REDUCE_SUM)
  msg = clerror()
  call check(rc == STDCL_EINVAL .and. index(msg, "clscan") > 0, &
             "clscan into a shorter array is refused: " // msg)

  call cldeallocate(a)
  call cldeallocate(k)
  call cldeallocate(idx)
  call cldeallocate(v)
  call cldeallocate(w)
  call cldeallocate(l)
  call cldeallocate(r)
  call finish("fortran_sort")

contains

  ! The next of an LCG's values, 0 to 2**31 - 1.
  integer(c_int) function next()
    seed = iand(seed * 1103515245_int64 + 12345_int64, 2147483647_int64)
    next = int(seed, c_int)
  end function

  ! Whether x holds orig's values: the same sum, xor, least and largest.
  logical function kept(x)
    integer(c_int), intent(in) :: x(:)
    kept = sum(int(x, int64)) == sum(int(orig, int64)) .and. iparity(x) == iparity(orig) .and. &
           minval(x) == minval(orig) .and. maxval(x) == maxval(orig)
  end function

  ! Whether idx is a permutation of 1..n and k(i) is the key idx(i) had.
  logical function moved_with_keys()
    logical :: seen(n)
    integer :: j
    moved_with_keys = .false.
    seen = .false.
    do j = 1, n
      if (idx(j) < 1 .or. idx(j) > n) return
      if (seen(idx(j)) .or. k(j) /= korig(idx(j))) return
      seen(idx(j)) = .true.
    end do
    moved_with_keys = .true.
  end function

  ! Whether there are equal keys and each run of them kept its indices in
  ! increasing order.
  logical function stable()
    integer :: j
    stable = any(k(2:n) == k(1:n - 1))
    do j = 2, n
      if (k(j) == k(j - 1) .and. idx(j) <= idx(j - 1)) stable = .false.
    end do
  end function

end program fortran_sort
