/* grow.cl: y[i] = x[i] + 1 (cxx_containers.cpp). */
__kernel void inc(__global const float* x, __global float* y)
{
    uint i = get_global_id(0);
    y[i] = x[i] + 1.0f;
}
