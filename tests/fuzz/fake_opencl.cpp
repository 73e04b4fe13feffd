// SPDX-License-Identifier: MIT
// fake_opencl.cpp: the OpenCL calls of fake_opencl.hpp.  Defined in the fuzz
// program itself, they take precedence over the ICD loader's (which still
// provides every other name the library's objects refer to; none of those is
// called, since no platform is ever reported).
#include "fake_opencl.hpp"

#include <atomic>
#include <cstring>
#include <vector>

// The handles: the OpenCL headers leave these structs incomplete.
struct _cl_platform_id {
    int unused;
};
struct _cl_device_id {
    int index;
};
struct _cl_context {
    int unused;
};
struct _cl_program {
    std::atomic<int> refs{1};
    bool from_binary = false;
    std::string source;
    std::string binary;  // after a successful build (or as given)
    std::string log;
    cl_build_status status = CL_BUILD_NONE;
    std::vector<cl_device_id> devices;
};

namespace {

_cl_platform_id g_platform{0};
_cl_context g_context{0};
_cl_device_id g_devices[2] = {{0}, {1}};
std::atomic<long> g_live{0};
const char k_binary_magic[] = "FAKEBIN\n";

bool is_device(cl_device_id d) { return d == &g_devices[0] || d == &g_devices[1]; }

// Copies a value into an OpenCL out-parameter, as the drivers do.
cl_int give(const void* data, size_t size, size_t param_size, void* param_value, size_t* size_ret)
{
    if (size_ret) *size_ret = size;
    if (param_value) {
        if (param_size < size) return CL_INVALID_VALUE;
        std::memcpy(param_value, data, size);
    }
    return CL_SUCCESS;
}

cl_int give_string(const char* s, size_t param_size, void* param_value, size_t* size_ret)
{
    return give(s, std::strlen(s) + 1, param_size, param_value, size_ret);
}

cl_program new_program()
{
    g_live.fetch_add(1);
    return new _cl_program;
}

}  // namespace

namespace fake_cl {

cl_platform_id platform() { return &g_platform; }
cl_context context() { return &g_context; }
cl_device_id device(int i) { return &g_devices[i & 1]; }
long live_programs() { return g_live.load(); }

std::string (*options_in_binary)(const std::string& options) = nullptr;

std::string fake_binary(const std::string& source, const std::string& options)
{
    std::string o = options_in_binary ? options_in_binary(options) : options;
    return k_binary_magic + std::to_string(o.size()) + "\n" + o + "\n" + source;
}

std::string binary_of(cl_program p) { return p ? p->binary : std::string(); }

}  // namespace fake_cl

extern "C" {

CL_API_ENTRY cl_int CL_API_CALL clGetPlatformIDs(cl_uint, cl_platform_id*, cl_uint* num_platforms)
{
    if (num_platforms) *num_platforms = 0;
    return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clGetPlatformInfo(cl_platform_id p, cl_platform_info what, size_t size, void* value,
                                                  size_t* size_ret)
{
    if (p != &g_platform) return CL_INVALID_PLATFORM;
    switch (what) {
    case CL_PLATFORM_NAME: return give_string("Fake OpenCL", size, value, size_ret);
    case CL_PLATFORM_VENDOR: return give_string("libstdcl fuzzing", size, value, size_ret);
    case CL_PLATFORM_VERSION: return give_string("OpenCL 1.2 fake", size, value, size_ret);
    default: return CL_INVALID_VALUE;
    }
}

CL_API_ENTRY cl_int CL_API_CALL clGetDeviceInfo(cl_device_id d, cl_device_info what, size_t size, void* value,
                                                size_t* size_ret)
{
    if (!is_device(d)) return CL_INVALID_DEVICE;
    switch (what) {
    case CL_DEVICE_NAME: return give_string("fake device", size, value, size_ret);
    case CL_DEVICE_VENDOR: return give_string("libstdcl fuzzing", size, value, size_ret);
    case CL_DEVICE_VERSION: return give_string("OpenCL 1.2 fake", size, value, size_ret);
    case CL_DRIVER_VERSION: return give_string("0.0", size, value, size_ret);
    case CL_DEVICE_PLATFORM: {
        cl_platform_id p = &g_platform;
        return give(&p, sizeof p, size, value, size_ret);
    }
    case CL_DEVICE_TYPE: {
        cl_device_type t = CL_DEVICE_TYPE_CPU;
        return give(&t, sizeof t, size, value, size_ret);
    }
    default: return CL_INVALID_VALUE;
    }
}

CL_API_ENTRY cl_program CL_API_CALL clCreateProgramWithSource(cl_context ctx, cl_uint count, const char** strings,
                                                              const size_t* lengths, cl_int* err)
{
    if (ctx != &g_context || count == 0 || !strings) {
        if (err) *err = ctx != &g_context ? CL_INVALID_CONTEXT : CL_INVALID_VALUE;
        return nullptr;
    }
    std::string text;
    for (cl_uint i = 0; i < count; ++i) {
        if (!strings[i]) {
            if (err) *err = CL_INVALID_VALUE;
            return nullptr;
        }
        text.append(strings[i], lengths && lengths[i] ? lengths[i] : std::strlen(strings[i]));
    }
    cl_program p = new_program();
    p->source = std::move(text);
    if (err) *err = CL_SUCCESS;
    return p;
}

CL_API_ENTRY cl_program CL_API_CALL clCreateProgramWithBinary(cl_context ctx, cl_uint n, const cl_device_id* devices,
                                                              const size_t* lengths, const unsigned char** binaries,
                                                              cl_int* status, cl_int* err)
{
    cl_int e = CL_SUCCESS;
    if (ctx != &g_context)
        e = CL_INVALID_CONTEXT;
    else if (n == 0 || !devices || !lengths || !binaries)
        e = CL_INVALID_VALUE;
    std::string first;
    for (cl_uint i = 0; e == CL_SUCCESS && i < n; ++i) {
        cl_int s = CL_SUCCESS;
        if (!is_device(devices[i])) {
            e = CL_INVALID_DEVICE;
            break;
        }
        if (!binaries[i] || lengths[i] == 0) {
            e = CL_INVALID_VALUE;
            break;
        }
        std::string b(reinterpret_cast<const char*>(binaries[i]), lengths[i]);
        if (b.compare(0, sizeof k_binary_magic - 1, k_binary_magic) != 0) s = CL_INVALID_BINARY;
        if (i == 0)
            first = b;
        else if (b != first)
            s = CL_INVALID_BINARY;  // the fake holds one binary for all devices
        if (status) status[i] = s;
        if (s != CL_SUCCESS) e = CL_INVALID_BINARY;
    }
    if (err) *err = e;
    if (e != CL_SUCCESS) return nullptr;
    cl_program p = new_program();
    p->from_binary = true;
    p->binary = first;
    p->devices.assign(devices, devices + n);
    return p;
}

CL_API_ENTRY cl_int CL_API_CALL clBuildProgram(cl_program p, cl_uint n, const cl_device_id* devices,
                                               const char* options, void(CL_CALLBACK*)(cl_program, void*), void*)
{
    if (!p) return CL_INVALID_PROGRAM;
    if ((n == 0) != (devices == nullptr)) return CL_INVALID_VALUE;
    for (cl_uint i = 0; i < n; ++i)
        if (!is_device(devices[i])) return CL_INVALID_DEVICE;
    if (n)
        p->devices.assign(devices, devices + n);
    else
        p->devices.assign({&g_devices[0], &g_devices[1]});
    if (p->from_binary) {
        p->status = CL_BUILD_SUCCESS;
        return CL_SUCCESS;
    }
    if (p->source.find(fake_cl::fail_word) != std::string::npos) {
        p->status = CL_BUILD_ERROR;
        p->log = "fake compiler: the source holds #error";
        return CL_BUILD_PROGRAM_FAILURE;
    }
    p->status = CL_BUILD_SUCCESS;
    p->binary = fake_cl::fake_binary(p->source, options ? options : "");
    p->log = p->source.find("warning") != std::string::npos ? "fake compiler: a warning" : "";
    return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clGetProgramBuildInfo(cl_program p, cl_device_id d, cl_program_build_info what,
                                                      size_t size, void* value, size_t* size_ret)
{
    if (!p) return CL_INVALID_PROGRAM;
    if (!is_device(d)) return CL_INVALID_DEVICE;
    switch (what) {
    case CL_PROGRAM_BUILD_STATUS: return give(&p->status, sizeof p->status, size, value, size_ret);
    case CL_PROGRAM_BUILD_LOG: return give_string(p->log.c_str(), size, value, size_ret);
    default: return CL_INVALID_VALUE;
    }
}

CL_API_ENTRY cl_int CL_API_CALL clGetProgramInfo(cl_program p, cl_program_info what, size_t size, void* value,
                                                 size_t* size_ret)
{
    if (!p) return CL_INVALID_PROGRAM;
    cl_uint n = static_cast<cl_uint>(p->devices.size());
    bool built = p->status == CL_BUILD_SUCCESS;
    switch (what) {
    case CL_PROGRAM_NUM_DEVICES: return give(&n, sizeof n, size, value, size_ret);
    case CL_PROGRAM_DEVICES: return give(p->devices.data(), n * sizeof(cl_device_id), size, value, size_ret);
    case CL_PROGRAM_BINARY_SIZES: {
        std::vector<size_t> sizes(n, built ? p->binary.size() : 0);
        return give(sizes.data(), n * sizeof(size_t), size, value, size_ret);
    }
    case CL_PROGRAM_BINARIES: {
        if (size_ret) *size_ret = n * sizeof(unsigned char*);
        if (!value) return CL_SUCCESS;
        if (size < n * sizeof(unsigned char*)) return CL_INVALID_VALUE;
        unsigned char** out = static_cast<unsigned char**>(value);
        for (cl_uint i = 0; i < n; ++i)
            if (out[i] && built) std::memcpy(out[i], p->binary.data(), p->binary.size());
        return CL_SUCCESS;
    }
    default: return CL_INVALID_VALUE;
    }
}

CL_API_ENTRY cl_int CL_API_CALL clRetainProgram(cl_program p)
{
    if (!p) return CL_INVALID_PROGRAM;
    p->refs.fetch_add(1);
    return CL_SUCCESS;
}

CL_API_ENTRY cl_int CL_API_CALL clReleaseProgram(cl_program p)
{
    if (!p) return CL_INVALID_PROGRAM;
    if (p->refs.fetch_sub(1) == 1) {
        g_live.fetch_sub(1);
        delete p;
    }
    return CL_SUCCESS;
}

}  // extern "C"
