// SPDX-License-Identifier: MIT
// program_build.hpp: the one place where OpenCL C source becomes a built cl_program.
//
// The loader (loader.cpp) calls build_program() for every program it needs;
// program_cache.cpp implements it, consulting the on-disk cache first.
#pragma once

#include <stdcl.h>

#include <string>
#include <vector>

namespace stdcl {

struct BuildRequest {
    cl_context context = nullptr;
    cl_platform_id platform = nullptr;
    std::vector<cl_device_id> devices;   // all of one device type
    std::string source;                  // the program text
    std::string options;                 // complete options (standard + user + env)
    std::vector<std::string> include_dirs; // the -I directories, in order
    std::string origin;                  // the kernel file, "embedded '<name>'", or "" (source text)
};

struct BuildResult {
    cl_program program = nullptr;        // built for every device, or nullptr
    cl_int status = CL_SUCCESS;          // first failing OpenCL status
    std::string log;                     // on failure: device, options, compiler log
    std::vector<std::string> logs;       // on success: each device's compiler log (may be "")
    bool from_cache = false;             // true when no compiler ran
    bool cache_on = false;               // the program cache was consulted
};

// Builds req.source for req.devices; never throws.  On failure, program is
// nullptr and log says which device failed, with which options, and why.
BuildResult build_program(const BuildRequest& req);

// Compiles from source with no cache (used by build_program on a miss).
BuildResult compile_program(const BuildRequest& req);

}  // namespace stdcl
