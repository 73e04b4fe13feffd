// SPDX-License-Identifier: MIT
// cl_util.hpp: small helpers for OpenCL calls used across the library: string
// queries, owning handles, and the names of device types.
#pragma once

#include <stdcl.h>

#include <cstring>
#include <string>

namespace stdcl {

// A string query (clGet*Info of a char[] value): query(size, value, size_ret) is
// called for the size, then for the text.  *out ends at the first NUL.  The first
// failing status, or CL_SUCCESS.
template <class Query> cl_int cl_string(Query&& query, std::string* out)
{
    size_t n = 0;
    cl_int err = query(size_t(0), static_cast<void*>(nullptr), &n);
    out->assign(n, '\0');
    if (err == CL_SUCCESS && n) err = query(n, static_cast<void*>(&(*out)[0]), static_cast<size_t*>(nullptr));
    out->resize(err == CL_SUCCESS ? std::strlen(out->c_str()) : 0);
    return err;
}

// A platform's or a device's string property.
inline cl_int platform_string(cl_platform_id p, cl_platform_info what, std::string* out)
{
    return cl_string([&](size_t n, void* v, size_t* r) { return clGetPlatformInfo(p, what, n, v, r); }, out);
}
inline cl_int device_string(cl_device_id d, cl_device_info what, std::string* out)
{
    return cl_string([&](size_t n, void* v, size_t* r) { return clGetDeviceInfo(d, what, n, v, r); }, out);
}

// The release call of each OpenCL object type.
inline cl_int cl_release(cl_program p) { return clReleaseProgram(p); }
inline cl_int cl_release(cl_kernel k) { return clReleaseKernel(k); }
inline cl_int cl_release(cl_mem m) { return clReleaseMemObject(m); }
inline cl_int cl_release(cl_event e) { return clReleaseEvent(e); }
inline cl_int cl_release(cl_command_queue q) { return clReleaseCommandQueue(q); }
inline cl_int cl_release(cl_context c) { return clReleaseContext(c); }

// Owns one reference to an OpenCL object until release(): a failure between
// making an object and handing it over releases it instead of leaking it.
template <class T> class ClRef {
public:
    explicit ClRef(T obj = nullptr) : obj_(obj) {}
    ClRef(const ClRef&) = delete;
    ClRef& operator=(const ClRef&) = delete;
    ~ClRef() { reset(nullptr); }
    void reset(T obj)
    {
        if (obj_) cl_release(obj_);
        obj_ = obj;
    }
    T get() const { return obj_; }
    T release()
    {
        T o = obj_;
        obj_ = nullptr;
        return o;
    }

private:
    T obj_;
};

// A device type's names: the word in messages ("GPU", "ACCELERATOR") and the macro
// defined in the kernels built for it (__GPU__; NULL for other types).
struct DeviceTypeName {
    const char* word;
    const char* macro;
};
inline DeviceTypeName device_type_name(cl_device_type t)
{
    if (t & CL_DEVICE_TYPE_GPU) return {"GPU", "__GPU__"};
    if (t & CL_DEVICE_TYPE_CPU) return {"CPU", "__CPU__"};
    if (t & CL_DEVICE_TYPE_ACCELERATOR) return {"ACCELERATOR", "__ACC__"};
    return {"OTHER", nullptr};
}

}  // namespace stdcl
