/* SPDX-License-Identifier: MIT */
/* nbody.c (one GPU) */
/* The host program of the NBody tutorial (seeds/002), retyped without the
 * scanning damage.  It keeps the tutorial's 3-argument clarg_set, its
 * clarg_set_global/clarg_set_local and CL_EVENT_RELEASE.  One adaptation,
 * marked below: the sizes may be given on the command line, so that the test
 * can run a small problem.  tests/helper_compat_nbody.c builds it. */

#include <stdcl.h>
#include <stdlib.h> /* test adaptation: atoi */

void nbody_init( int n, cl_float4* pos, cl_float4* vel );
void nbody_output( int n, cl_float4* pos, cl_float4* vel );

int main( int argc, char** argv ) {

   int step,burst;

   int nparticle = 8192; /* MUST be a nice power of two for simplicity */
   int nstep = 100;
   int nburst = 20; /* MUST divide the value of nstep without remainder */
   int nthread = 64; /* chosen for ATI Radeon HD 5870 */

   float dt = 0.0001f;
   float eps = 0.0001f;

   /* test adaptation: nparticle nstep nburst from the command line */
   if (argc > 3) {
      nparticle = atoi(argv[1]);
      nstep = atoi(argv[2]);
      nburst = atoi(argv[3]);
   }

   size_t nparticle_sz = nparticle * sizeof(cl_float4);
   cl_float4* pos1 = (cl_float4*)clmalloc(stdgpu, nparticle_sz, 0);
   cl_float4* pos2 = (cl_float4*)clmalloc(stdgpu, nparticle_sz, 0);
   cl_float4* vel = (cl_float4*)clmalloc(stdgpu, nparticle_sz, 0);

   nbody_init(nparticle, pos1, vel);

   void* clh = clopen(stdgpu, "nbody_kern.cl", CLLD_NOW);
   cl_kernel krn = clsym(stdgpu, clh, "nbody_kern", CLLD_NOW);

   clndrange_t ndr = clndrange_init1d( 0, nparticle, nthread );

   clarg_set(krn, 0, dt);
   clarg_set(krn, 1, eps);
   clarg_set_global(krn, 4, vel);
   clarg_set_local(krn, 5, nthread*sizeof(cl_float4));

   clmsync(stdgpu, 0, pos1, CL_MEM_DEVICE|CL_EVENT_WAIT|CL_EVENT_RELEASE);
   clmsync(stdgpu, 0, vel, CL_MEM_DEVICE|CL_EVENT_WAIT|CL_EVENT_RELEASE);

   for(step=0; step<nstep; step+=nburst) {

      for(burst=0; burst<nburst; burst+=2) {

         clarg_set_global(krn, 2, pos1);
         clarg_set_global(krn, 3, pos2);
         clfork(stdgpu, 0, krn, &ndr, CL_EVENT_NOWAIT);

         clarg_set_global(krn, 2, pos2);
         clarg_set_global(krn, 3, pos1);
         clfork(stdgpu, 0, krn, &ndr, CL_EVENT_NOWAIT);

      }

      clwait(stdgpu, 0, CL_KERNEL_EVENT|CL_EVENT_RELEASE);

      clmsync(stdgpu, 0, pos1, CL_MEM_HOST|CL_EVENT_WAIT|CL_EVENT_RELEASE);

   }

   nbody_output(nparticle, pos1, vel);

   clclose(stdgpu, clh);

   clfree(pos1);
   clfree(pos2);
   clfree(vel);

}
