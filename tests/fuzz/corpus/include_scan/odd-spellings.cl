/* SPDX-License-Identifier: MIT */
#/**/include "val.h"
# /* c */ include "val2.h"
#inc\
lude "val3.h"
%:include "val4.h"
__kernel void k(__global int* p) { p[0] = VAL; }
