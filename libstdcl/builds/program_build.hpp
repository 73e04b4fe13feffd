// SPDX-License-Identifier: MIT
// program_build.hpp: where OpenCL C source becomes a built cl_program.
//
// Building flows one way: the loader (loader.cpp) makes a BuildRequest and calls
// build_program() (builds/program_cache.cpp), which looks the build up in the
// on-disk program cache and, on a miss, calls compile_program() (builds/compile.cpp).
// compile.cpp also owns every reading and writing of an option string.
#pragma once

#include <stdcl.h>

#include <string>
#include <vector>

namespace stdcl {

// A build's options, as fields; render_options() writes the string once.
struct BuildOptions {
    std::vector<std::string> defines;  // -D values: NAME or NAME=VALUE
    std::vector<std::string> include_dirs;  // the -I folders the library adds, in order
    std::string user;  // the program's options (clopen, clbuild)
    std::string env;  // STDCL_BUILD_OPTIONS
};

struct BuildRequest {
    cl_context context = nullptr;
    cl_platform_id platform = nullptr;
    std::vector<cl_device_id> devices;  // all of one device type
    std::string source;  // the program text
    BuildOptions options;
    std::string origin;  // the kernel file, "embedded '<name>'", or "" (source text)
};

struct BuildResult {
    cl_program program = nullptr;  // built for every device, or nullptr
    cl_int status = CL_SUCCESS;  // first failing OpenCL status
    std::string log;  // on failure: device, options, compiler log
    std::vector<std::string> logs;  // on success: each device's compiler log (may be "")
    std::string options;  // the option string the program was built with
    bool from_cache = false;  // true when no compiler ran
    bool cache_on = false;  // the program cache was consulted
};

// The option string: the defines, the -I folders, -cl-kernel-arg-info when
// arg_info, then the program's and the environment's options.
std::string render_options(const BuildOptions& o, bool arg_info);
// Every folder an #include may be found in: the library's, then the -I folders
// of the program's and the environment's options.
std::vector<std::string> search_dirs(const BuildOptions& o);
// The options as they enter the program cache's key: split into words (spacing
// does not matter), each quoted; without the -I folders when drop_include_dirs
// (their whole effect is which files the #includes find, which the key holds
// already), so that a program run from another folder still hits.  Callers keep
// them when an include is computed (#include MACRO), which no scan can follow.
std::string key_options(const BuildOptions& o, bool drop_include_dirs);

// Builds req.source for req.devices; never throws.  On failure, program is
// nullptr and log says which device failed, with which options, and why.
BuildResult build_program(const BuildRequest& req);

// Compiles from source, without the cache.  With -cl-kernel-arg-info first;
// when a driver rejects that option for the program (NVIDIA's OpenCL does for
// kernels without parameters), once more without it: the kernels then work, their
// arguments classified by size instead of by declaration.
BuildResult compile_program(const BuildRequest& req);

// clBuildProgram of a program made from binaries, with the same rule as
// compile_program (the binary was stored by one).  The options used go to *used.
cl_int build_binary(cl_program p, const BuildRequest& req, std::string* used);

}  // namespace stdcl
