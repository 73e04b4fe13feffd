// SPDX-License-Identifier: MIT
// lease.hpp: device leases for the default contexts (STDX_LOCK=key or auto).
#pragma once

#include <stdcl.h>

#include <string>
#include <vector>

namespace stdcl {

// Applies STDX_LOCK (var is "STDGPU", ..., label "stdgpu", ...) to a default context's
// candidate devices `devs` (in order), of the platform named plat_name/plat_vendor whose
// devices of every type are `all` (a device's index there names its lock file).  `cap`
// is the most devices the context may hold (STDX_MAX_NDEV or every candidate).
// On return `devs` holds the devices to use: the first `cap` without a lock; the leased
// ones with one.  What applied is appended to `notes`.  Returns false when the context
// must be NULL because every device is leased: then a warning has been printed and the
// reason recorded in the load report (note_load) and this thread's clerror().
bool lease_devices(const std::string& var, const char* label, const std::string& plat_name,
                   const std::string& plat_vendor, const std::vector<cl_device_id>& all,
                   std::vector<cl_device_id>& devs, unsigned cap, std::string& notes);

}  // namespace stdcl
