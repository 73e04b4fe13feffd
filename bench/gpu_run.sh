#!/usr/bin/env bash
# gpu_run.sh: everything measured on the GPU machine, in one call (device time is
# scarce).  Builds the library with plain compiler commands (no autoconf there),
# checks it on the GPU(s), then times the core calls and NBody against their
# baselines.  Results and logs go to $OUT (default /tmp/gpu-out).
#
#   bench/gpu_run.sh [core] [nbody] [cache]       (default: all three)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
RES=${OUT:-/tmp/gpu-out}
mkdir -p "$RES"
WHAT=${*:-core nbody cache}
[ -w /etc/OpenCL/vendors ] && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export POCL_CACHE_DIR=/tmp/pocl-cache STDCL_CACHE_DIR=/tmp/stdcl-cache
mkdir -p "$POCL_CACHE_DIR" "$STDCL_CACHE_DIR"

{
    date -u; uname -r; nvidia-smi -L; nproc; grep -m1 'model name' /proc/cpuinfo
    clinfo -l 2>&1
} > "$RES/machine.txt" 2>&1
cat "$RES/machine.txt"

# The library, tools and examples, built as the Makefile would (flags alike).
v=$(sed -n 's/^AC_INIT(\[libstdcl\], *\[\([0-9.]*\)\].*/\1/p' configure.ac)
sed -e "s/@STDCL_MAJOR@/${v%%.*}/" -e "s/@STDCL_MINOR@/$(echo $v | cut -d. -f2)/" \
    -e "s/@STDCL_PATCH@/${v##*.}/" -e "s/@PACKAGE_VERSION@/$v/" \
    include/stdcl_version.h.in > include/stdcl_version.h
B=build/lib
mkdir -p $B/obj build/bin build/examples/hello_stdcl
for f in libstdcl/*.cpp; do
    g++ -std=c++17 -O2 -g -fPIC -fvisibility=hidden -pthread -Iinclude -Ilibstdcl \
        -c "$f" -o "$B/obj/$(basename "$f" .cpp).o" &
done
wait
g++ -shared -Wl,-soname,libstdcl.so.1 -Wl,--exclude-libs,ALL -o $B/libstdcl.so.1 $B/obj/*.o -lOpenCL -lpthread || exit 1
ln -sf libstdcl.so.1 $B/libstdcl.so
L="-Iinclude -Lbuild/lib -Wl,-rpath,$ROOT/build/lib -lstdcl -lOpenCL -lm -lpthread"
gcc -std=gnu99 -O2 src/stdclinfo.c -o build/bin/stdclinfo $L
gcc -std=gnu99 -O2 examples/hello_stdcl/hello_stdcl.c -o build/examples/hello_stdcl/hello_stdcl $L
cp examples/hello_stdcl/matvec.cl build/examples/hello_stdcl/
gcc -std=gnu99 -O2 bench/bench_core.c -o build/bin/bench_core $L

echo "== stdclinfo"
STDCL_TRACE=ctx build/bin/stdclinfo 2>&1 | tee "$RES/stdclinfo.txt"
echo "== hello_stdcl on every GPU, 5 runs (exit status checks the release at exit)"
for i in 1 2 3 4 5; do
    (cd build/examples/hello_stdcl && ./hello_stdcl 2048); echo "exit status $?"
done 2>&1 | tee "$RES/hello.txt"

case " $WHAT " in *" core "*)
    echo "== bench_core on stdgpu device 0"
    build/bin/bench_core -c gpu 2>&1 | tee "$RES/bench_core_gpu.txt"
    ;;
esac
case " $WHAT " in *" nbody "*)
    echo "== NBody"
    bash bench/run_nbody.sh ${NBODY_ARGS:---check} 2>&1 | tee "$RES/nbody.txt"
    cp build/bench-nbody/results.txt "$RES/nbody_results.txt" 2>/dev/null
    nb=build/bench-nbody/bin/nbody_multi
    [ -x $nb ] && (cd examples/nbody && ../../$nb -c gpu -n 131072 -s 1200 -q --png "$RES/nbody_gpu.png") 2>&1 | tail -2
    ;;
esac
case " $WHAT " in *" cache "*)
    if [ -x bench/clopen_times.sh ]; then
        echo "== clopen cold/warm"
        bash bench/clopen_times.sh 2>&1 | tee "$RES/clopen.txt"
    fi
    ;;
esac
