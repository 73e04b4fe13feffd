/* preload_no_unified_memory.c: an LD_PRELOAD library for test_stress.c.  Its
 * clGetDeviceInfo answers CL_FALSE to CL_DEVICE_HOST_UNIFIED_MEMORY and passes
 * every other query on to the real one, so that libstdcl, which probes that
 * at context creation, puts every device in copy mode (a device buffer of its
 * own per allocation; clmsync copies) on PoCL, whose CPU devices are all
 * zero-copy.  Built as build/tests/preload_no_unified_memory.so. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

typedef cl_int (*get_device_info_fn)(cl_device_id, cl_device_info, size_t, void*, size_t*);

__attribute__((visibility("default"))) cl_int clGetDeviceInfo(cl_device_id device, cl_device_info param,
                                                              size_t size, void* value, size_t* size_ret)
{
    static get_device_info_fn next;
    get_device_info_fn f = __atomic_load_n(&next, __ATOMIC_ACQUIRE);
    if (!f) {
        f = (get_device_info_fn)dlsym(RTLD_NEXT, "clGetDeviceInfo");
        if (!f) return CL_INVALID_DEVICE;
        __atomic_store_n(&next, f, __ATOMIC_RELEASE);
    }
    if (param != CL_DEVICE_HOST_UNIFIED_MEMORY) return f(device, param, size, value, size_ret);
    cl_bool unified = CL_FALSE;
    cl_int err = f(device, param, sizeof unified, &unified, NULL);  /* a valid device? */
    if (err != CL_SUCCESS) return err;
    if (value) {
        if (size < sizeof(cl_bool)) return CL_INVALID_VALUE;
        *(cl_bool*)value = CL_FALSE;
    }
    if (size_ret) *size_ret = sizeof(cl_bool);
    return CL_SUCCESS;
}
