! SPDX-License-Identifier: MIT
! nbody_fortran.f90: NBody in Fortran on K devices of one context, with the
! C NBody's kernel file (../nbody/nbody_kern.cl, copied next to the program)
! and nbody_multi's command line and output.
!
! The bodies are cut into K blocks, one per device: device d owns block d
! (its velocities and the updates of its positions).  Positions rotate
! through three clallocate arrays pos(4, nb, K), one block per last index,
! so a block is a contiguous section pos(:, :, e) that clmsync moves alone
! and clforka binds as a __global argument.  One step on device d is K
! launches of nbody_kern_multi over d's bodies, one per source block: its
! own block first (already there: it computed it), then the others once
! they arrive from the host; the last launch writes d's new positions,
! which clmsync brings to the host for the other devices.  The host
! enqueues step t's own-block kernels on every device before it waits for
! step t-1's transfers, so devices compute while the host forwards blocks.
!
!   nbody_fortran [-d K] [-n N] [-s STEPS] [-b BURST] [-c gpu|cpu|dev]
!                 [-w WG] [-o "OPTIONS"] [--check] [--bench] [--ic IC]
!                 [--seed S] [--dt DT] [--eps EPS] [-q] [-h]
!
! --check runs the same steps in double precision on the host and compares
! positions and velocity changes.  Exit status: 0 ok, 1 --check failed,
! 2 bad command line, 3 OpenCL failure.
program nbody_fortran
  use stdcl
  use, intrinsic :: iso_fortran_env, only: int32, int64, real32, real64, error_unit
  implicit none

  integer, parameter :: EXIT_FAIL = 1, EXIT_USAGE = 2, EXIT_RUNTIME = 3
  integer, parameter :: IC_COLLISION = 0, IC_PLUMMER = 1
  integer(c_int), parameter :: NBODY_FIRST = 1, NBODY_LAST = 2
  integer, parameter :: RING = 3, MAXDEV = 64
  real(real64), parameter :: PI = 3.14159265358979323846_real64
  character(len=*), parameter :: prog = "nbody_fortran"

  ! Options, as nbody_multi's (--png-size is checked as nbody_multi checks
  ! it; with no --png it changes nothing).
  integer(int64) :: n = 0, seed = 2026
  integer :: steps = 0, burst = 10, ndev_opt = 0, wg = 0, ic = IC_COLLISION, png_size = 1024
  character(len=:), allocatable :: ctx, clopts
  logical :: check = .false., bench = .false., quiet = .false.
  logical :: n_given = .false., steps_given = .false., ic_given = .false.
  real(real32) :: dt = 0.005_real32, eps = 1.0e-4_real32

  type :: block_array
    real(real32), pointer :: p(:,:,:) => null()
  end type
  type(block_array) :: pos(0:RING - 1)
  real(real32), pointer :: vel(:,:,:) => null(), acc(:,:,:) => null()
  real(real32), allocatable :: pos0(:,:), vel0(:,:), final_pos(:,:), final_vel(:,:)
  integer(int64), allocatable :: cnt(:), off(:)
  integer, allocatable :: bpw(:), js(:)
  type(cldev_info), allocatable :: devinfo(:)
  type(c_ptr) :: cp, clh, krn, kinfo
  integer :: k, d, nthread, total, warm, rc
  integer(int64) :: nb, gran
  logical :: any_gpu
  character(len=:), allocatable :: options, devname
  real(real64) :: build_s, t0
  real(real64), allocatable :: burst_s(:)
  integer, allocatable :: burst_steps(:)
  integer :: nburst

  call parse_args()

  if (.not. allocated(ctx)) then
    cp = stdcpu
    if (c_associated(stdgpu)) cp = stdgpu
  else if (ctx == "gpu") then
    cp = stdgpu
  else if (ctx == "cpu") then
    cp = stdcpu
  else
    cp = stddev
  end if
  if (.not. c_associated(cp)) then
    write (error_unit, '(a)') prog // ": no OpenCL device in the context (" // clerror() // ")"
    stop EXIT_RUNTIME, quiet=.true.
  end if
  k = clgetndev(cp)
  if (ndev_opt > k) call usage_error("-d " // itoa(int(ndev_opt, int64)) // &
                                     ": the context has only " // itoa(int(k, int64)) // " device(s)")
  if (ndev_opt > 0) k = ndev_opt
  k = min(k, MAXDEV)
  allocate(devinfo(clgetndev(cp)))
  if (clgetdevinfo(cp, devinfo) /= 0) call die("clgetdevinfo")
  any_gpu = any(iand(devinfo(1:k)%dev_type, CL_DEVICE_TYPE_GPU) /= 0)
  devname = cldev_string(devinfo(1)%dev_name)

  if (.not. n_given) then
    n = 16384
    if (any_gpu) n = 131072
    if (check) n = 4096
  end if
  if (.not. steps_given) then
    steps = 100
    if (check) steps = 10
  end if
  if (check .and. .not. ic_given) ic = IC_PLUMMER
  if (n < k) call usage_error("-n " // itoa(n) // ": fewer bodies than devices (" // &
                              itoa(int(k, int64)) // ")")
  nthread = wg
  if (nthread == 0) nthread = merge(256, 8, any_gpu)

  ! The kernels, built for every device with the work-group size and the
  ! math flags nbody_multi uses, then each device's variant's shape.
  options = "-D NBODY_WG=" // itoa(int(nthread, int64))
  if (index(clopts, "NBODY_STRICT_MATH") == 0) options = options // " -cl-fast-relaxed-math"
  if (len(clopts) > 0) options = options // " " // clopts
  t0 = now()
  clh = clopen(cp, kernel_file(), CLLD_NOBUILD)
  if (c_associated(clh)) clh = clbuild(cp, clh, options)
  if (.not. c_associated(clh)) then
    write (error_unit, '(a)') prog // ": cannot build nbody_kern.cl: " // clerror()
    stop merge(EXIT_USAGE, EXIT_RUNTIME, len(clopts) > 0), quiet=.true.
  end if
  build_s = now() - t0
  krn = clsym(cp, clh, "nbody_kern_multi")
  kinfo = clsym(cp, clh, "nbody_info")
  if (.not. c_associated(krn) .or. .not. c_associated(kinfo)) call die("clsym")
  call shapes()

  ! Blocks as even as possible, each padded to the same size nb.
  allocate(cnt(0:k - 1), off(0:k - 1))
  do d = 0, k - 1
    cnt(d) = n / k
    if (d < mod(n, int(k, int64))) cnt(d) = cnt(d) + 1
  end do
  off(0) = 0
  do d = 1, k - 1
    off(d) = off(d - 1) + cnt(d - 1)
  end do
  nb = (maxval(cnt) + gran - 1) / gran * gran

  allocate(pos0(4, n), vel0(4, n), final_pos(4, n), final_vel(4, n))
  call initial_conditions(pos0, vel0)
  call allocate_blocks()
  if (.not. quiet) write (error_unit, '(a)') prog // ": " // itoa(int(k, int64)) // " x " // &
      devname // ", N=" // itoa(n) // " in " // itoa(int(k, int64)) // " blocks of " // &
      itoa(nb) // " (padded), work-group " // itoa(int(nthread, int64)) // ", " // &
      itoa(int(bpw(0), int64)) // " bodies/work-item, build " // ftoa(build_s, 2) // &
      " s, options: " // options

  warm = 0
  if (bench) warm = burst
  call run(warm, total)
  call gather(mod(total, RING))
  call summary()

  rc = 0
  if (check) then
    if (.not. check_reference()) rc = EXIT_FAIL
    if (rc == 0) then
      print '(a)', "check: PASS"
    else
      print '(a)', "check: FAIL"
    end if
  end if

  do d = 0, RING - 1
    call cldeallocate(pos(d)%p)
  end do
  call cldeallocate(vel)
  call cldeallocate(acc)
  if (clclose(cp, clh) /= 0) call die("clclose")
  stop rc, quiet=.true.

contains

  ! ---------------------------------------------------------------------
  ! Command line
  ! ---------------------------------------------------------------------

  subroutine parse_args()
    integer :: i, nargs, eq
    character(len=:), allocatable :: a, name, val
    logical :: has_val
    clopts = ""
    val = ""
    nargs = command_argument_count()
    i = 1
    do while (i <= nargs)
      a = arg(i)
      i = i + 1
      has_val = .false.
      if (len(a) > 2 .and. a(1:2) == "--") then
        eq = index(a, "=")
        if (eq > 0) then
          name = a(1:eq - 1)
          val = a(eq + 1:)
          has_val = .true.
        else
          name = a
        end if
      else if (len(a) > 2 .and. a(1:1) == "-") then
        name = a(1:2)
        val = a(3:)
        has_val = .true.
      else
        name = a
      end if
      select case (name)
      case ("--check")
        check = .true.
      case ("--bench")
        bench = .true.
      case ("-q")
        quiet = .true.
      case ("-h", "--help")
        call help()
        stop 0, quiet=.true.
      case ("-n", "-s", "-b", "-d", "-c", "-w", "-o", "--png", "--png-size", "--ic", &
            "--seed", "--dt", "--eps")
        if (.not. has_val) then
          if (i > nargs) call usage_error("option " // name // " needs a value")
          val = arg(i)
          i = i + 1
        end if
        call option(name, val)
      case default
        if (name(1:1) == "-") call usage_error("unknown option " // a)
        call usage_error("unexpected argument '" // a // "'")
      end select
    end do
  end subroutine

  subroutine option(name, val)
    character(len=*), intent(in) :: name, val
    select case (name)
    case ("-n")
      n = parse_int(name, val, 1_int64, 2_int64**26)
      n_given = .true.
    case ("-s")
      steps = int(parse_int(name, val, 1_int64, 100000000_int64))
      steps_given = .true.
    case ("-b")
      burst = int(parse_int(name, val, 1_int64, 1000000_int64))
    case ("-d")
      ndev_opt = int(parse_int(name, val, 1_int64, 64_int64))
    case ("-c")
      if (val /= "gpu" .and. val /= "cpu" .and. val /= "dev") &
        call usage_error("-c expects gpu, cpu or dev, not '" // val // "'")
      ctx = val
    case ("-w")
      wg = int(parse_int(name, val, 1_int64, 1024_int64))
    case ("-o")
      clopts = val
    case ("--png")
      call usage_error("--png: this program writes no picture (nbody_multi --png does)")
    case ("--png-size")
      png_size = int(parse_int(name, val, 16_int64, 8192_int64))
    case ("--ic")
      ic_given = .true.
      if (val == "collision") then
        ic = IC_COLLISION
      else if (val == "plummer") then
        ic = IC_PLUMMER
      else
        call usage_error("--ic expects collision or plummer, not '" // val // "'")
      end if
    case ("--seed")
      seed = parse_int(name, val, 0_int64, 2147483647_int64)
    case ("--dt")
      dt = real(parse_real(name, val, 1d-9, 1d0), real32)
    case ("--eps")
      eps = real(parse_real(name, val, 1d-12, 1d0), real32)
    end select
  end subroutine

  function arg(i) result(s)
    integer, intent(in) :: i
    character(len=:), allocatable :: s
    integer :: length
    call get_command_argument(i, length=length)
    allocate(character(len=length) :: s)
    if (length > 0) call get_command_argument(i, s)
  end function

  integer(int64) function parse_int(opt, s, lo, hi)
    character(len=*), intent(in) :: opt, s
    integer(int64), intent(in) :: lo, hi
    integer :: ios
    read (s, *, iostat=ios) parse_int
    if (ios /= 0 .or. len_trim(s) == 0 .or. verify(trim(s), "+-0123456789") /= 0) &
      call usage_error(opt // " expects an integer, not '" // s // "'")
    if (parse_int < lo .or. parse_int > hi) &
      call usage_error(opt // " " // s // " is out of range [" // itoa(lo) // ", " // itoa(hi) // "]")
  end function

  real(real64) function parse_real(opt, s, lo, hi)
    character(len=*), intent(in) :: opt, s
    real(real64), intent(in) :: lo, hi
    integer :: ios
    read (s, *, iostat=ios) parse_real
    if (ios /= 0 .or. len_trim(s) == 0 .or. verify(trim(s), "+-.0123456789eEdD") /= 0 .or. &
        .not. (parse_real >= lo .and. parse_real <= hi)) &
      call usage_error(opt // " expects a number in [" // etoa(lo, 1) // ", " // etoa(hi, 1) // &
                       "], not '" // s // "'")
  end function

  subroutine usage_error(msg)
    character(len=*), intent(in) :: msg
    write (error_unit, '(a)') prog // ": " // msg
    write (error_unit, '(a)') "Try '" // prog // " --help'."
    stop EXIT_USAGE, quiet=.true.
  end subroutine

  subroutine help()
    print '(a)', "usage: " // prog // " [options]", &
      "NBody in Fortran on K devices of one context with libstdcl: each device owns", &
      "N/K bodies and receives the others' positions through clmsync.", "", &
      "  -n N          bodies (default: 131072 on a GPU, 16384 on a CPU, 4096 with --check)", &
      "  -s STEPS      time steps (default: 100; 10 with --check)", &
      "  -b BURST      steps between host synchronisations (default: 10)", &
      "  -d K          devices (default: all of the context)", &
      "  -c CTX        context: gpu (stdgpu), cpu (stdcpu) or dev (stddev);", &
      "                default: stdgpu if it exists, else stdcpu", &
      "  -w WG         work-group size (default: 256 on a GPU, 8 on a CPU)", &
      '  -o "OPTIONS"  extra kernel build options (see nbody_kern.cl)', &
      "  --check       compare with a double-precision host computation of the", &
      "                same steps; print the max relative errors and PASS/FAIL", &
      "                (initial conditions: plummer unless --ic is given)", &
      "  --bench       warm up first, then time each burst; report the median", &
      "  --ic IC       initial conditions: collision (two disk galaxies) or plummer", &
      "  --seed S      random seed (default: 2026)", &
      "  --dt DT       time step (default: 0.005)", &
      "  --eps EPS     softening length squared (default: 1e-4)", &
      "  -q            no progress lines on stderr", &
      "  -h, --help    this help", "", &
      "Exit status: 0 ok, 1 --check failed, 2 bad command line, 3 OpenCL failure."
  end subroutine

  ! nbody_kern.cl next to the program, else as clopen finds it.
  function kernel_file() result(f)
    character(len=:), allocatable :: f, me
    logical :: there
    integer :: slash
    me = arg(0)
    slash = index(me, "/", back=.true.)
    f = "nbody_kern.cl"
    if (slash > 0) then
      inquire (file=me(1:slash) // f, exist=there)
      if (there) f = me(1:slash) // f
    end if
  end function

  ! ---------------------------------------------------------------------
  ! Devices and blocks
  ! ---------------------------------------------------------------------

  ! Each device's variant (bodies per work-item, j split) and the block
  ! granularity that suits them all.
  subroutine shapes()
    integer(int32), pointer :: info(:)
    type(clndrange_struct) :: ndr1
    type(c_ptr) :: ev
    integer(int64) :: g
    allocate(bpw(0:k - 1), js(0:k - 1))
    call clallocate(cp, info, [8])
    gran = 1
    do d = 0, k - 1
      ndr1 = clndrange_init1d(0, 1, 1)
      ev = clforka(cp, d, kinfo, ndr1, CL_EVENT_WAIT, info)
      if (.not. c_associated(ev)) call die("nbody_info")
      ev = clmsync(cp, d, info, CL_MEM_HOST)
      if (.not. c_associated(ev)) call die("clmsync")
      bpw(d) = info(1)
      js(d) = info(2)
      if (info(1) < 1 .or. info(2) < 1 .or. (info(4) == 0 .and. info(5) < 1)) &
        call usage_error("the kernel reports a bad shape")
      if (info(3) > 0 .and. info(3) /= nthread) &
        call usage_error("the kernel was built for work-groups of " // itoa(int(info(3), int64)))
      if (info(4) == 0 .and. (mod(nthread, info(2)) /= 0 .or. mod(nthread / info(2), info(5)) /= 0)) &
        call usage_error("work-group size " // itoa(int(nthread, int64)) // &
                         " does not suit the GPU kernel: it must be a multiple of " // &
                         "NBODY_JSPLIT x NBODY_UNROLL (use -w or -o)")
      g = int(bpw(d), int64) * nthread
      gran = gran / gcd(gran, g) * g
    end do
    call cldeallocate(info)
  end subroutine

  pure integer(int64) function gcd(a, b)
    integer(int64), intent(in) :: a, b
    integer(int64) :: x, y, t
    x = a
    y = b
    do while (y /= 0)
      t = mod(x, y)
      x = y
      y = t
    end do
    gcd = x
  end function

  ! The ring of position arrays, velocities and sums; block d padded with
  ! zero-mass bodies far away; each device gets its block and velocities.
  subroutine allocate_blocks()
    integer :: r
    integer(int64) :: i
    type(c_ptr) :: ev
    do r = 0, RING - 1
      call clallocate(cp, pos(r)%p, [4_int64, nb, int(k, int64)])
    end do
    call clallocate(cp, vel, [4_int64, nb, int(k, int64)])
    call clallocate(cp, acc, [4_int64, nb, int(k, int64)])
    acc = 0
    do d = 0, k - 1
      pos(0)%p(:, 1:cnt(d), d + 1) = pos0(:, off(d) + 1:off(d) + cnt(d))
      vel(:, 1:cnt(d), d + 1) = vel0(:, off(d) + 1:off(d) + cnt(d))
      do i = cnt(d) + 1, nb
        pos(0)%p(:, i, d + 1) = [1.0e4_real32 + real(d * nb + i - 1 - cnt(d), real32), &
                                 1.0e4_real32, 1.0e4_real32, 0.0_real32]
        vel(:, i, d + 1) = 0
      end do
      ev = clmsync(cp, d, pos(0)%p(:, :, d + 1), CL_MEM_DEVICE + CL_EVENT_WAIT)
      if (.not. c_associated(ev)) call die("clmsync")
      ev = clmsync(cp, d, vel(:, :, d + 1), CL_MEM_DEVICE + CL_EVENT_WAIT)
      if (.not. c_associated(ev)) call die("clmsync")
      ev = clmsync(cp, d, acc(:, :, d + 1), CL_MEM_DEVICE + CL_EVENT_WAIT)
      if (.not. c_associated(ev)) call die("clmsync")
    end do
  end subroutine

  ! nbody_kern_multi on device dev: its block pulled by block src of ring
  ! buffer rin; the NBODY_LAST launch writes ring buffer rout.
  subroutine launch(dev, rin, rout, src, mode)
    integer, intent(in) :: dev, rin, rout, src
    integer(c_int), intent(in) :: mode
    type(clndrange_struct) :: ndr
    type(c_ptr) :: ev
    ndr = clndrange_init1d(0_int64, nb / bpw(dev) * js(dev), int(nthread, int64))
    ev = clforka(cp, dev, krn, ndr, CL_EVENT_NOWAIT, dt, eps, &
                 pos(rin)%p(:, :, dev + 1), pos(rout)%p(:, :, dev + 1), vel(:, :, dev + 1), &
                 cllocal(nthread * 16), pos(rin)%p(:, :, src + 1), acc(:, :, dev + 1), mode)
    if (.not. c_associated(ev)) call die("clforka")
  end subroutine

  ! One time step t (the host step loop).
  subroutine step(t)
    integer, intent(in) :: t
    integer :: rin, rout, r, e
    type(c_ptr) :: ev
    rin = mod(t, RING)
    rout = mod(t + 1, RING)
    ! 1. Own blocks: on each device already.
    do d = 0, k - 1
      call launch(d, rin, rout, d, merge(NBODY_FIRST + NBODY_LAST, NBODY_FIRST, k == 1))
    end do
    if (k == 1) return
    ! 2. Step t-1's new blocks have reached the host: then no device still
    !    reads ring buffer rout (step t-2's sources) when it is rewritten.
    do d = 0, k - 1
      if (.not. c_associated(clwait(cp, d, CL_MEM_EVENT))) call die("clwait")
    end do
    ! 3. Forward the other blocks, pull by them, fetch the new own block.
    do d = 0, k - 1
      do r = 1, k - 1
        e = mod(d + r, k)
        ev = clmsync(cp, d, pos(rin)%p(:, :, e + 1), CL_MEM_DEVICE + CL_EVENT_NOWAIT)
        if (.not. c_associated(ev)) call die("clmsync to device")
      end do
      do r = 1, k - 1
        call launch(d, rin, rout, mod(d + r, k), merge(NBODY_LAST, 0, r == k - 1))
      end do
      ev = clmsync(cp, d, pos(rout)%p(:, :, d + 1), CL_MEM_HOST + CL_EVENT_NOWAIT)
      if (.not. c_associated(ev)) call die("clmsync to host")
      if (clflush(cp, d, 0) /= 0) call die("clflush")
    end do
  end subroutine

  ! warm + steps time steps in bursts; the bursts after the warm-up timed.
  subroutine run(warm, total)
    integer, intent(in) :: warm
    integer, intent(out) :: total
    integer :: done, count, s
    real(real64) :: tb, last
    total = warm + steps
    allocate(burst_s(total), burst_steps(total))
    nburst = 0
    done = 0
    last = now()
    do while (done < total)
      count = burst
      if (done < warm) count = warm - done
      count = min(count, total - done)
      tb = now()
      do s = done, done + count - 1
        call step(s)
      end do
      do d = 0, k - 1
        if (.not. c_associated(clwait(cp, d, CL_ALL_EVENT))) call die("clwait")
      end do
      if (done >= warm) then
        nburst = nburst + 1
        burst_s(nburst) = now() - tb
        burst_steps(nburst) = count
      end if
      done = done + count
      if (.not. quiet .and. done > warm .and. now() - last >= 1.0_real64) then
        last = now()
        write (error_unit, '(a)') prog // ": step " // itoa(int(done - warm, int64)) // "/" // &
            itoa(int(steps, int64))
      end if
    end do
  end subroutine

  ! The final positions and velocities, in body order.
  subroutine gather(last)
    integer, intent(in) :: last
    type(c_ptr) :: ev
    if (k == 1) then
      ev = clmsync(cp, 0, pos(last)%p, CL_MEM_HOST)
      if (.not. c_associated(ev)) call die("clmsync to host")
    end if
    do d = 0, k - 1
      ev = clmsync(cp, d, vel(:, :, d + 1), CL_MEM_HOST)
      if (.not. c_associated(ev)) call die("clmsync to host")
      final_pos(:, off(d) + 1:off(d) + cnt(d)) = pos(last)%p(:, 1:cnt(d), d + 1)
      final_vel(:, off(d) + 1:off(d) + cnt(d)) = vel(:, 1:cnt(d), d + 1)
    end do
  end subroutine

  ! The summary line and nbody_multi's RESULT line.
  subroutine summary()
    real(real64) :: ms, ips, tot
    real(real64), allocatable :: per(:)
    tot = sum(burst_s(1:nburst))
    if (bench .and. nburst >= 3) then
      per = burst_s(1:nburst) / burst_steps(1:nburst)
      ms = 1e3_real64 * median(per)
    else
      ms = 1e3_real64 * tot / max(sum(burst_steps(1:nburst)), 1)
    end if
    ips = 0
    if (ms > 0) ips = real(n, real64)**2 / (ms * 1e-3_real64)
    write (*, '(a)') prog // ": N=" // itoa(n) // ", " // itoa(int(sum(burst_steps(1:nburst)), int64)) // &
        " steps on " // itoa(int(k, int64)) // " device(s) in " // ftoa(tot, 3) // " s: " // &
        ftoa(ms, 4) // " ms/step" // trim(merge(" (median of bursts)", "                   ", &
        bench .and. nburst >= 3)) // ", " // etoa(ips) // " interactions/s, " // &
        ftoa(ips * 20e-9_real64, 1) // " GFLOPS (20 flops/interaction)"
    write (*, '(a)') "RESULT impl=fortran_multi n=" // itoa(n) // " steps=" // &
        itoa(int(sum(burst_steps(1:nburst)), int64)) // " devices=" // itoa(int(k, int64)) // &
        " ms_per_step=" // ftoa(ms, 4) // " interactions_per_s=" // etoa(ips) // " gflops=" // &
        ftoa(ips * 20e-9_real64, 1) // " device=" // trim(merge("gpu", "cpu", any_gpu)) // &
        " wg=" // itoa(int(nthread, int64)) // " bpw=" // itoa(int(bpw(0), int64))
  end subroutine

  real(real64) function median(v)
    real(real64), intent(in) :: v(:)
    real(real64) :: w(size(v)), t
    integer :: i, j
    w = v
    do i = 2, size(w)
      t = w(i)
      j = i - 1
      do while (j >= 1)
        if (w(j) <= t) exit
        w(j + 1) = w(j)
        j = j - 1
      end do
      w(j + 1) = t
    end do
    if (mod(size(w), 2) == 1) then
      median = w(size(w) / 2 + 1)
    else
      median = 0.5_real64 * (w(size(w) / 2) + w(size(w) / 2 + 1))
    end if
  end function

  ! ---------------------------------------------------------------------
  ! Initial conditions (total mass 1, G = 1, centre of mass at rest)
  ! ---------------------------------------------------------------------

  subroutine initial_conditions(p, v)
    real(real32), intent(out) :: p(:,:), v(:,:)
    real(real64), allocatable :: dp(:,:), dv(:,:)
    integer(int64) :: state, na
    real(real64) :: mc(3), mv(3), mt, a
    integer(int64) :: i
    allocate(dp(4, n), dv(4, n))
    state = ieor(int(z'6e626f6479', int64), seed * 2654435761_int64 + 1)
    if (state == 0) state = 1
    a = 3.0_real64 * PI / 16.0_real64
    if (ic == IC_PLUMMER) then
      call plummer(state, n, 1.0_real64 / n, a, [0d0, 0d0, 0d0], [0d0, 0d0, 0d0], dp, dv)
    else
      ! Two equal disk galaxies on a prograde, nearly parabolic encounter.
      na = n - n / 2
      call galaxy(state, na, 1.0_real64 / n, 0.0_real64, [-1.5d0, -0.6d0, 0d0], [0.4d0, 0d0, 0d0], &
                  dp(:, 1:na), dv(:, 1:na))
      if (n / 2 > 0) call galaxy(state, n / 2, 1.0_real64 / n, PI / 3, [1.5d0, 0.6d0, 0d0], &
                                 [-0.4d0, 0d0, 0d0], dp(:, na + 1:), dv(:, na + 1:))
    end if
    mt = sum(dp(4, :))
    do i = 1, 3
      mc(i) = sum(dp(4, :) * dp(i, :))
      mv(i) = sum(dp(4, :) * dv(i, :))
    end do
    do i = 1, n
      p(1:3, i) = real(dp(1:3, i) - mc / mt, real32)
      v(1:3, i) = real(dv(1:3, i) - mv / mt, real32)
      p(4, i) = real(dp(4, i), real32)
      v(4, i) = 0
    end do
  end subroutine

  ! xorshift64: uniform in (0, 1).
  real(real64) function unit(state)
    integer(int64), intent(inout) :: state
    state = ieor(state, ishft(state, 13))
    state = ieor(state, ishft(state, -7))
    state = ieor(state, ishft(state, 17))
    unit = (real(ishft(state, -11), real64) + 0.5_real64) / 9007199254740992.0_real64
  end function

  subroutine direction(state, length, out)
    integer(int64), intent(inout) :: state
    real(real64), intent(in) :: length
    real(real64), intent(out) :: out(3)
    real(real64) :: z, phi, s
    z = 2.0_real64 * unit(state) - 1.0_real64
    phi = 2.0_real64 * PI * unit(state)
    s = sqrt(1.0_real64 - z * z)
    out = length * [s * cos(phi), s * sin(phi), z]
  end subroutine

  ! A Plummer sphere (Aarseth, Henon & Wielen 1974) of count bodies of mass m.
  subroutine plummer(state, count, m, a, c, v0, p, v)
    integer(int64), intent(inout) :: state
    integer(int64), intent(in) :: count
    real(real64), intent(in) :: m, a, c(3), v0(3)
    real(real64), intent(inout) :: p(:,:), v(:,:)
    real(real64) :: x, rad, q, y, vesc, dpos(3), dvel(3)
    integer(int64) :: i
    do i = 1, count
      do
        x = unit(state) * 0.999_real64
        rad = a / sqrt(x**(-2.0_real64 / 3.0_real64) - 1.0_real64)
        if (rad > 0) exit
      end do
      do
        q = unit(state)
        y = 0.1_real64 * unit(state)
        if (y <= q * q * (1.0_real64 - q * q)**3.5_real64) exit
      end do
      vesc = sqrt(2.0_real64 * m * count) * (rad * rad + a * a)**(-0.25_real64)
      call direction(state, rad, dpos)
      call direction(state, q * vesc, dvel)
      p(1:3, i) = c + dpos
      v(1:3, i) = v0 + dvel
      p(4, i) = m
      v(4, i) = 0
    end do
  end subroutine

  ! A disk galaxy: 60% of its bodies in a thin exponential disk on circular
  ! orbits, the rest in a Plummer bulge; the disk tilted by incl about x,
  ! then moved to c with velocity v0.
  subroutine galaxy(state, count, m, incl, c, v0, p, v)
    integer(int64), intent(inout) :: state
    integer(int64), intent(in) :: count
    real(real64), intent(in) :: m, incl, c(3), v0(3)
    real(real64), intent(inout) :: p(:,:), v(:,:)
    real(real64), parameter :: ah = 0.15_real64, rd = 0.15_real64, rmax = 0.9_real64
    integer(int64) :: nd, i
    real(real64) :: r, phi, menc, vc, sig, ci, si, y, z
    nd = int(0.6_real64 * count, int64)
    call plummer(state, count - nd, m, ah, [0d0, 0d0, 0d0], [0d0, 0d0, 0d0], &
                 p(:, nd + 1:count), v(:, nd + 1:count))
    do i = 1, nd
      do
        r = -rd * log(unit(state) * unit(state))
        if (r <= rmax) exit
      end do
      phi = 2.0_real64 * PI * unit(state)
      menc = m * (count - nd) * r**3 / (r * r + ah * ah)**1.5_real64 + &
             m * nd * (1.0_real64 - (1.0_real64 + r / rd) * exp(-r / rd))
      vc = sqrt(menc / sqrt(r * r + 1e-4_real64))
      sig = 0.05_real64 * vc
      p(:, i) = [r * cos(phi), r * sin(phi), 0.05_real64 * rd * normal(state), m]
      v(:, i) = [-vc * sin(phi) + sig * normal(state), vc * cos(phi) + sig * normal(state), &
                 sig * normal(state), 0.0_real64]
    end do
    ci = cos(incl)
    si = sin(incl)
    do i = 1, count
      y = p(2, i)
      z = p(3, i)
      p(2:3, i) = [ci * y - si * z, si * y + ci * z]
      y = v(2, i)
      z = v(3, i)
      v(2:3, i) = [ci * y - si * z, si * y + ci * z]
      p(1:3, i) = p(1:3, i) + c
      v(1:3, i) = v(1:3, i) + v0
    end do
  end subroutine

  real(real64) function normal(state)
    integer(int64), intent(inout) :: state
    real(real64) :: u1, u2
    u1 = unit(state)
    u2 = unit(state)
    normal = sqrt(-2.0_real64 * log(u1)) * cos(2.0_real64 * PI * u2)
  end function

  ! ---------------------------------------------------------------------
  ! --check: the same steps in double precision on the host
  ! ---------------------------------------------------------------------

  logical function check_reference()
    real(real64), allocatable :: p(:,:), v(:,:), a(:,:), np(:,:)
    real(real64) :: ep, ev, tp, tv, tr, d(3), r2, inv
    integer(int64) :: i, j
    integer :: s
    if (total > 50) write (error_unit, '(a)') prog // ": note: --check over many steps: " // &
        "close encounters amplify rounding; the bound is meant for tens of steps"
    p = real(pos0, real64)
    v = real(vel0, real64)
    allocate(a(3, n), np(4, n))
    tr = now()
    do s = 1, total
      do i = 1, n
        a(:, i) = 0
        do j = 1, n
          d = p(1:3, j) - p(1:3, i)
          r2 = sum(d * d) + eps
          inv = 1.0_real64 / sqrt(r2)
          a(:, i) = a(:, i) + p(4, j) * inv * inv * inv * d
        end do
      end do
      np(1:3, :) = p(1:3, :) + dt * v(1:3, :) + 0.5_real64 * dt * dt * a
      np(4, :) = p(4, :)
      v(1:3, :) = v(1:3, :) + dt * a
      p = np
    end do
    tr = now() - tr
    ep = compare(final_pos, p, .false.)
    ev = compare(final_vel, v, .true.)
    tp = 1e-5_real64 + 2e-7_real64 * total
    tv = 5e-4_real64
    check_reference = ep <= tp .and. ev <= tv
    write (*, '(a)') "check " // itoa(int(k, int64)) // " devices vs double reference: " // &
        itoa(int(total, int64)) // " steps, N=" // itoa(n) // ", max relative error: positions " // &
        etoa(ep, 3) // " (tolerance " // etoa(tp, 1) // "), velocity changes " // etoa(ev, 3) // &
        " (tolerance " // etoa(tv, 1) // ") (double reference " // ftoa(tr, 1) // " s): " // &
        trim(merge("PASS", "FAIL", check_reference))
  end function

  ! Largest relative difference of the 3-vectors a (float) and b (double),
  ! relative to max(|b_i - o_i|, RMS of |b - o|), o the initial velocities
  ! when vel (the error of the velocity changes), else zero.
  real(real64) function compare(af, b, vel)
    real(real32), intent(in) :: af(:,:)
    real(real64), intent(in) :: b(:,:)
    logical, intent(in) :: vel
    real(real64) :: o(3), bb(3), aa(3), l, e
    integer(int64) :: i
    l = 0
    do i = 1, n
      o = 0
      if (vel) o = vel0(1:3, i)
      l = l + sum((b(1:3, i) - o)**2)
    end do
    l = sqrt(l / n)
    compare = 0
    do i = 1, n
      o = 0
      if (vel) o = vel0(1:3, i)
      bb = b(1:3, i) - o
      aa = af(1:3, i) - o
      e = sqrt(sum((aa - bb)**2)) / max(sqrt(sum(bb * bb)), l)
      if (.not. (e <= compare)) compare = merge(huge(e), e, e /= e)
    end do
  end function

  ! ---------------------------------------------------------------------
  ! Small things
  ! ---------------------------------------------------------------------

  real(real64) function now()
    integer(int64) :: c, rate
    call system_clock(c, rate)
    now = real(c, real64) / real(rate, real64)
  end function

  function itoa(i) result(s)
    integer(int64), intent(in) :: i
    character(len=:), allocatable :: s
    character(len=24) :: b
    write (b, '(i0)') i
    s = trim(b)
  end function

  function ftoa(x, digits) result(s)
    real(real64), intent(in) :: x
    integer, intent(in) :: digits
    character(len=:), allocatable :: s
    character(len=32) :: b
    character(len=16) :: f
    write (f, '(a, i0, a)') "(f0.", digits, ")"
    write (b, f) x
    s = trim(adjustl(b))
    if (s(1:1) == ".") s = "0" // s
    if (s(1:2) == "-.") s = "-0" // s(2:)
  end function

  ! x as C's %.<digits>e (default 4) prints it: 4.4289e+09.
  function etoa(x, digits) result(s)
    real(real64), intent(in) :: x
    integer, intent(in), optional :: digits
    character(len=:), allocatable :: s
    character(len=40) :: b
    character(len=24) :: f
    integer :: dg, e
    dg = 4
    if (present(digits)) dg = digits
    if (x /= x) then
      s = "nan"
      return
    else if (abs(x) > huge(x) / 2) then
      s = merge("-inf", " inf", x < 0)
      s = trim(adjustl(s))
      return
    end if
    write (f, '(a, i0, a, i0, a)') "(es", dg + 10, ".", dg, "e3)"
    write (b, f) x
    s = trim(adjustl(b))
    e = index(s, "E")
    ! C's exponent has two digits unless it needs three.
    if (e > 0) then
      if (s(e + 2:e + 2) == "0") then
        s = s(1:e - 1) // "e" // s(e + 1:e + 1) // s(e + 3:)
      else
        s = s(1:e - 1) // "e" // s(e + 1:)
      end if
    end if
  end function

  subroutine die(what)
    character(len=*), intent(in) :: what
    write (error_unit, '(a)') prog // ": " // what // ": " // clerror()
    stop EXIT_RUNTIME, quiet=.true.
  end subroutine

end program nbody_fortran
