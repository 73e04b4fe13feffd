// SPDX-License-Identifier: MIT
// host_state.hpp: keeps the calling program's process-wide state unchanged
// across OpenCL calls that run a driver's compiler.
#pragma once

namespace stdcl {

// Around clBuildProgram and its kind: NVIDIA's OpenCL compiler reseeds the C
// library's rand()/random() generator (srand) when it builds from source, so a
// program that draws its input with rand() after clopen would get different
// numbers from run to run, and different numbers again when the program came
// from the program cache (no compiler runs).  While a guard lives, rand() and
// random() draw from a scratch state; the program's own state, untouched, is
// back when the last guard of the process ends.  Builds in several threads
// share the scratch state; a program thread calling rand() during a build
// draws from it too (its own sequence resumes after the build).
class BuildStateGuard {
public:
    BuildStateGuard() noexcept;
    ~BuildStateGuard();
    BuildStateGuard(const BuildStateGuard&) = delete;
    BuildStateGuard& operator=(const BuildStateGuard&) = delete;
};

}  // namespace stdcl
