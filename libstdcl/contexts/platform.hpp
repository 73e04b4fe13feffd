// SPDX-License-Identifier: MIT
// platform.hpp: platform discovery (platform.cpp), for context.cpp.
#pragma once

#include "helpers/diag.hpp"

#include <stdcl.h>

#include <string>
#include <vector>

namespace stdcl {

struct PlatformInfo {
    cl_platform_id id;
    std::string name, vendor;
};

// A platform's or a device's string; throws when the query fails.
std::string info_string(cl_platform_id p, cl_platform_info what);
std::string info_string(cl_device_id d, cl_device_info what);
// A device's value of type T; throws when the query fails.
template <class T> void device_info(cl_device_id d, cl_device_info what, T* out)
{
    check_cl(clGetDeviceInfo(d, what, sizeof *out, out, nullptr), "clGetDeviceInfo");
}
// Whether hay holds needle, letter case ignored (an empty needle: no).
bool icontains(const std::string& hay, const std::string& needle);
// The platforms; none when there is no ICD (CL_PLATFORM_NOT_FOUND_KHR); throws on
// any other failure, which must not pass for "no platform".
std::vector<PlatformInfo> list_platforms();
// The devices of that type; none for CL_DEVICE_NOT_FOUND; throws on other failures.
std::vector<cl_device_id> list_devices(cl_platform_id p, cl_device_type type);
// The vendor macro a build gets, from the platform's and the device's vendor strings.
std::string vendor_macro(const std::string& plat_name, const std::string& plat_vendor, const std::string& dev_vendor);
// Whether a USE_HOST_PTR buffer maps to the host pointer itself on this device, so
// the device works on host memory and clmsync has nothing to copy.  Returns 1 (yes),
// 0 (no), or -1 with *why set when an OpenCL call of the probe failed.
int probe_zero_copy(cl_context ctx, cl_device_id dev, cl_command_queue q, std::string* why);

}  // namespace stdcl
