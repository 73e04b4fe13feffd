// SPDX-License-Identifier: MIT
// platform.cpp: platform discovery: the platforms and their devices, their strings,
// the vendor macro a build gets, and whether a device works on host memory (the
// zero-copy probe).  context.cpp builds the contexts from what it finds.
#include "contexts/platform.hpp"
#include "contexts/context.hpp"
#include "helpers/cl_util.hpp"
#include "helpers/diag.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace stdcl {

std::string info_string(cl_platform_id p, cl_platform_info what)
{
    std::string s;
    check_cl(platform_string(p, what, &s), "clGetPlatformInfo");
    return s;
}

std::string info_string(cl_device_id d, cl_device_info what)
{
    std::string s;
    check_cl(device_string(d, what, &s), "clGetDeviceInfo");
    return s;
}

bool icontains(const std::string& hay, const std::string& needle)
{
    if (needle.empty()) return false;
    auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end(), [](char a, char b) {
        return std::tolower((unsigned char)a) == std::tolower((unsigned char)b);
    });
    return it != hay.end();
}

// The platforms; none when there is no ICD (CL_PLATFORM_NOT_FOUND_KHR); throws on
// any other failure, which must not pass for "no platform".
std::vector<PlatformInfo> list_platforms()
{
    constexpr cl_int kPlatformNotFound = -1001;  // CL_PLATFORM_NOT_FOUND_KHR
    cl_uint n = 0;
    cl_int err = clGetPlatformIDs(0, nullptr, &n);
    if (err == kPlatformNotFound || (err == CL_SUCCESS && n == 0)) {
        note_load("the ICD loader",
                  strprintf("no OpenCL platform (clGetPlatformIDs: %s)",
                            err == kPlatformNotFound ? "CL_PLATFORM_NOT_FOUND_KHR" : "0 platforms"),
                  false);
        return {};
    }
    check_cl(err, "clGetPlatformIDs");
    std::vector<cl_platform_id> ids(n);
    check_cl(clGetPlatformIDs(n, ids.data(), &n), "clGetPlatformIDs");
    ids.resize(std::min<size_t>(n, ids.size()));
    std::vector<PlatformInfo> out;
    for (auto id : ids) out.push_back({id, info_string(id, CL_PLATFORM_NAME), info_string(id, CL_PLATFORM_VENDOR)});
    return out;
}

// The devices of that type; none for CL_DEVICE_NOT_FOUND; throws on other failures.
std::vector<cl_device_id> list_devices(cl_platform_id p, cl_device_type type)
{
    cl_uint n = 0;
    cl_int err = clGetDeviceIDs(p, type, 0, nullptr, &n);
    if (err == CL_DEVICE_NOT_FOUND || (err == CL_SUCCESS && n == 0)) return {};
    check_cl(err, "clGetDeviceIDs");
    std::vector<cl_device_id> ids(n);
    check_cl(clGetDeviceIDs(p, type, n, ids.data(), &n), "clGetDeviceIDs");
    ids.resize(std::min<size_t>(n, ids.size()));
    return ids;
}

// The vendor macro a build gets, from the platform's and the device's vendor strings.
std::string vendor_macro(const std::string& plat_name, const std::string& plat_vendor, const std::string& dev_vendor)
{
    static const struct {
        const char* pattern;
        const char* macro;
    } known[] = {{"Portable Computing Language", "__POCL__"},
                 {"pocl", "__POCL__"},
                 {"NVIDIA", "__NVIDIA__"},
                 {"Advanced Micro Devices", "__AMD__"},
                 {"AMD", "__AMD__"},
                 {"Intel", "__INTEL__"},
                 {"Oclgrind", "__OCLGRIND__"},
                 {"Apple", "__APPLE__"},
                 {"ARM", "__ARM__"},
                 {"Qualcomm", "__QUALCOMM__"},
                 {"Xilinx", "__XILINX__"}};
    for (const auto& k : known)
        if (icontains(plat_name, k.pattern) || icontains(plat_vendor, k.pattern)) return k.macro;
    for (const auto& k : known)
        if (icontains(dev_vendor, k.pattern)) return k.macro;
    // Unknown vendor: __VENDOR_<first word>__, letters and digits only.
    std::string word;
    for (char c : plat_vendor.empty() ? plat_name : plat_vendor) {
        if (std::isalnum((unsigned char)c))
            word += char(std::toupper((unsigned char)c));
        else if (!word.empty())
            break;
    }
    return word.empty() ? std::string() : "__VENDOR_" + word + "__";
}

// Whether a USE_HOST_PTR buffer maps to the host pointer itself on this device, so
// the device works on host memory and clmsync has nothing to copy.  Returns 1 (yes),
// 0 (no), or -1 with *why set when an OpenCL call of the probe failed.
int probe_zero_copy(cl_context ctx, cl_device_id dev, cl_command_queue q, std::string* why)
{
    cl_bool unified = CL_FALSE;
    cl_int err = clGetDeviceInfo(dev, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, nullptr);
    if (err != CL_SUCCESS) {
        *why = strprintf("clGetDeviceInfo(CL_DEVICE_HOST_UNIFIED_MEMORY): %s (%d)", cl_error_name(err), int(err));
        return -1;
    }
    if (!unified) return 0;
    void* host = nullptr;
    if (posix_memalign(&host, 4096, 4096) != 0) {
        *why = "out of host memory";
        return -1;
    }
    int result = -1;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, 4096, host, &err);
    if (err != CL_SUCCESS) {
        *why = strprintf("clCreateBuffer: %s (%d)", cl_error_name(err), int(err));
    } else {
        void* p = clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, 4096, 0, nullptr, nullptr, &err);
        if (err != CL_SUCCESS) {
            *why = strprintf("clEnqueueMapBuffer: %s (%d)", cl_error_name(err), int(err));
        } else {
            cl_int uerr = clEnqueueUnmapMemObject(q, m, p, 0, nullptr, nullptr);
            // A mapping left in place keeps the buffer (and its hold on `host`) alive
            // past its release: try once more, so that nothing outlives the probe.
            if (uerr != CL_SUCCESS) uerr = clEnqueueUnmapMemObject(q, m, p, 0, nullptr, nullptr);
            cl_int ferr = clFinish(q);
            if (uerr != CL_SUCCESS)
                *why = strprintf("clEnqueueUnmapMemObject: %s (%d)", cl_error_name(uerr), int(uerr));
            else if (ferr != CL_SUCCESS)
                *why = strprintf("clFinish: %s (%d)", cl_error_name(ferr), int(ferr));
            else
                result = p == host ? 1 : 0;
        }
        clReleaseMemObject(m);
    }
    free(host);
    return result;
}

}  // namespace stdcl
