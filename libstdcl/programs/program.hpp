// SPDX-License-Identifier: MIT
// program.hpp: programs opened with clopen/clsopen (loader.cpp).
#pragma once

#include "kernels/kernel.hpp"

#include <unordered_map>

namespace stdcl {

// A program handle returned by clopen/clsopen.
struct Program {
    CLCONTEXT* cp = nullptr;
    std::string name;  // file name or "<source>" for messages
    std::vector<std::string> sources;  // one per unit (embedded: several)
    std::vector<std::string> unit_names;
    std::vector<std::string> origins;  // per unit: file path or embedded name (cache traces)
    std::string dir;  // the kernel file's directory ("" for source)
    std::string key;  // identity for reuse, with user_options: content (and folder)
    bool embedded = false;  // the kernels linked into the program (clcc)
    // The library's own kernels (clsort, clscan, clreduce): they include nothing,
    // so they build without -I folders, with the same options in every tree and
    // folder (a compiler's cache then finds them wherever the program runs).
    bool library = false;
    int flags = 0;
    int refs = 1;
    std::mutex build_mu;  // one build at a time; guards cl and kernels
    std::atomic<bool> built{false};
    std::atomic<bool> nobuild_pending{false};  // opened with CLLD_NOBUILD, not yet built
    std::string user_options;  // clopen_opt's, clsopen_opt's or clbuild's options
    // [unit][group] built programs.
    std::vector<std::vector<cl_program>> cl;
    std::map<std::string, std::shared_ptr<KernelInfo>> kernels;
    // [unit]: the typedefs of its source and includes, scanned at its first clsym.
    std::map<size_t, TypedefTable> typedefs;
    // [unit][device of cp]: the compiler's log of a successful build (clbuildlog).
    std::vector<std::vector<std::string>> logs;
    std::vector<std::string> joined_logs;  // per device: what clbuildlog returns
};

// The folder holding the installed stdcl.h that kernels include (every build gets
// -I it): <the library's folder>/../include when stdcl.h is there, else the
// configured includedir when it is there, else "" (no -I).  Found once.
const std::string& kernel_include_dir();

// clsopen_named for the library's own kernels (Program::library): the same
// handle, built at once, without -I folders; throws Error on failure
// (STDCL_EBUILD when the compiler refused the source).
void* open_library_program(CLCONTEXT* cp, const char* source, const char* name, const char* options = nullptr);

// The kernel `name` of the program handle of cp (built first where it is not),
// as clsym(cp, handle, name, 0) finds it, without the C API's error state;
// throws Error (STDCL_ENOENT naming the kernels it has, for `call`).
std::shared_ptr<KernelInfo> program_kernel(CLCONTEXT* cp, void* handle, const std::string& name, const char* call);

}  // namespace stdcl
