#!/bin/sh
# SPDX-License-Identifier: MIT
# gen_kinds.sh: writes one copy of a Fortran template per element kind, as
# fortran-lang/stdlib's fypp templates do: each @S@ becomes the kind's
# suffix (r32), @T@ its type (real(real32)) and @A@ its STDCL_TYPE_* code
# name.  With -r, one copy per kind and rank 1 to 7: @R@ becomes the rank
# and @D@ its assumed-shape dimensions (:,:).  The module stdcl includes the
# output (the Makefile runs this).
#
#   gen_kinds.sh [-k all|reduce] [-r] template > output
#
# all: the eight element kinds (integer int8..int64, real real32/real64,
# complex real32/real64); reduce: the four that clreduce, clsort,
# clsort_by_key and clscan take as arrays (int32, int64, real32, real64:
# CL_REDUCE_INT, _LONG, _FLOAT, _DOUBLE; the unsigned types have C's
# type(c_ptr) form only).
set -eu
set_=all
ranks=0
if [ "${1:-}" = -k ]; then set_=$2; shift 2; fi
if [ "${1:-}" = -r ]; then ranks="1 2 3 4 5 6 7"; shift; fi
[ $# -eq 1 ] || { echo "usage: $0 [-k all|reduce] [-r] template" >&2; exit 2; }
case $set_ in
    all) kinds="i8:integer(int8):STDCL_TYPE_INT i16:integer(int16):STDCL_TYPE_INT
                i32:integer(int32):STDCL_TYPE_INT i64:integer(int64):STDCL_TYPE_INT
                r32:real(real32):STDCL_TYPE_FLOAT r64:real(real64):STDCL_TYPE_FLOAT
                c32:complex(real32):STDCL_TYPE_OTHER c64:complex(real64):STDCL_TYPE_OTHER" ;;
    reduce) kinds="i32:integer(int32):CL_REDUCE_INT i64:integer(int64):CL_REDUCE_LONG
                   r32:real(real32):CL_REDUCE_FLOAT r64:real(real64):CL_REDUCE_DOUBLE" ;;
    *) echo "$0: unknown kind set $set_" >&2; exit 2 ;;
esac
echo "! Written by gen_kinds.sh from $(basename "$1"); do not edit."
for k in $kinds; do
    s=${k%%:*}; rest=${k#*:}; t=${rest%%:*}; a=${rest#*:}
    for r in $ranks; do
        d=:
        i=1
        while [ $i -lt "$r" ]; do d="$d,:"; i=$((i + 1)); done
        sed -e "s/@S@/$s/g" -e "s/@T@/$t/g" -e "s/@A@/$a/g" -e "s/@R@/$r/g" \
            -e "s/@D@/$d/g" "$1"
    done
done
