// SPDX-License-Identifier: MIT
// fake_opencl.hpp: a stand-in for the few OpenCL calls the fuzz targets reach
// (fake_opencl.cpp), linked into every target in front of the ICD loader.
//
// clGetPlatformIDs reports no platform, so the library's load-time default
// contexts (context.cpp) stay NULL and no real driver is ever loaded.  The
// program calls (clCreateProgramWithSource, clBuildProgram, clGetProgramInfo,
// clCreateProgramWithBinary ...) act as a compiler that needs no device: a
// build from source "compiles" to fake_binary(source, options), and a binary
// is accepted only if it is one of those.  That lets fuzz_clsopen run the
// library's whole build path (program cache included) many thousand times a
// second and check what comes out.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120  // as <stdcl.h> has it
#endif
#include <CL/cl.h>

#include <string>

namespace fake_cl {

// The one platform, context and the two devices (alike: same name, vendor and
// versions, as two PoCL pthread devices are).
cl_platform_id platform();
cl_context context();
cl_device_id device(int i);  // i = 0 or 1

// What a successful build from source gives: a short header, the options as
// options_in_binary() gives them, and the source, so that equal binaries mean
// equal builds.
std::string fake_binary(const std::string& source, const std::string& options);

// How the options enter the binary: as they are unless a target sets this.
// fuzz_clsopen sets the program cache's own reading of them without the -I
// folders: the cache leaves those out of its key on purpose (the files they
// lead to are in it), so two builds that differ only in them share an entry,
// as they share the binary a real compiler makes.
extern std::string (*options_in_binary)(const std::string& options);

// A build from source fails (CL_BUILD_PROGRAM_FAILURE, with a log) when the
// source holds this word, so the failure path is fuzzed too.
constexpr const char* fail_word = "#error";

// Programs made and not yet released (every call that makes one counts it).
long live_programs();

// The binary a program holds (built from source, or given), or "" if none.
std::string binary_of(cl_program p);

}  // namespace fake_cl
