/* SPDX-License-Identifier: MIT */
/* particle_bins.cl: the kernels of particle_bins.c. */

/* The cell of particle i in a g x g x g grid over the unit cube, and i. */
__kernel void cell_of(__global const float4* pos, __global uint* cell, __global uint* idx, uint n, uint g)
{
    uint i = get_global_id(0);
    if (i >= n) return;
    float4 p = pos[i];
    uint x = min((uint)(p.x * g), g - 1), y = min((uint)(p.y * g), g - 1), z = min((uint)(p.z * g), g - 1);
    cell[i] = (z * g + y) * g + x;
    idx[i] = i;
}

/* After the sort by cell: 1 where a cell's run starts, else 0. */
__kernel void run_starts(__global const uint* cell, __global uint* flag, uint n)
{
    uint i = get_global_id(0);
    if (i >= n) return;
    flag[i] = i == 0 || cell[i] != cell[i - 1];
}

/* Each run (its number from the scan of the flags) records its cell and
 * where it starts; the particles are gathered in cell order. */
__kernel void pack(__global const uint* cell, __global const uint* flag, __global const uint* run,
                   __global const uint* idx, __global const float4* pos, __global uint* run_cell,
                   __global uint* run_start, __global float4* sorted, uint n)
{
    uint i = get_global_id(0);
    if (i >= n) return;
    if (flag[i]) {
        run_cell[run[i]] = cell[i];
        run_start[run[i]] = i;
    }
    sorted[i] = pos[idx[i]];
}
