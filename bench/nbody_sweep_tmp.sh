#!/bin/bash
# temporary device-side sweep (not part of the deliverable)
echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
mkdir -p /tmp/sw && gcc -std=gnu99 -O3 -Iinclude bench/nbody_raw_opencl.c -o /tmp/sw/raw -lOpenCL -lm || exit 1
export NBODY_KERNEL=examples/nbody/nbody_kern.cl
for n in $SIZES; do
  s=$(awk -v n=$n 'BEGIN{s=int(2.5e12/(n*n)); if(s<4)s=4; if(s>200)s=200; print s}'); b=$(( s/4 > 0 ? s/4 : 1 ))
  IFS=';' read -r -a VL <<< "$VARIANTS"
  for v in "${VL[@]}"; do
    w=${v%% *}; w=${w#wg=}; o=${v#wg=$w}
    r=$(/tmp/sw/raw -c gpu -n $n -s $s -b $b --bench -q -w $w -o "$o" 2>&1 | grep -o "interactions_per_s=[0-9.e+]*" | cut -d= -f2)
    printf "n=%-8s %-60s %s\n" $n "[$v]" "${r:-FAIL}"
  done
done
/tmp/sw/raw -c gpu --check -q | grep check
