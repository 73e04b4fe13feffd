/* SPDX-License-Identifier: MIT */
/* nbody_util.c: nbody_init and nbody_output, which the tutorial's Makefile
 * links from nbody_init.o and nbody_output.o (their text is not in the
 * tutorial).  Deterministic, so that test_compat.c can recompute the run in
 * double precision: positions in [-1,1)^3, masses 1, velocities in
 * [-0.5,0.5)^3.  nbody_output prints "i x y z w" per particle. */
#include <stdio.h>

#include <stdcl.h>

static float nbody_rand(unsigned int* s)
{
   *s = *s * 1664525u + 1013904223u;
   return (float)(*s >> 8) / 16777216.0f; /* [0,1) */
}

void nbody_init( int n, cl_float4* pos, cl_float4* vel )
{
   unsigned int s = 12345u;
   int i;
   for(i=0; i<n; i++) {
      pos[i].s[0] = 2.0f * nbody_rand(&s) - 1.0f;
      pos[i].s[1] = 2.0f * nbody_rand(&s) - 1.0f;
      pos[i].s[2] = 2.0f * nbody_rand(&s) - 1.0f;
      pos[i].s[3] = 1.0f;
      vel[i].s[0] = nbody_rand(&s) - 0.5f;
      vel[i].s[1] = nbody_rand(&s) - 0.5f;
      vel[i].s[2] = nbody_rand(&s) - 0.5f;
      vel[i].s[3] = 0.0f;
   }
}

void nbody_output( int n, cl_float4* pos, cl_float4* vel )
{
   int i;
   (void)vel;
   for(i=0; i<n; i++)
      printf("%d %.9g %.9g %.9g %.9g\n", i, pos[i].s[0], pos[i].s[1], pos[i].s[2], pos[i].s[3]);
}
