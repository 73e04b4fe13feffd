// SPDX-License-Identifier: MIT
// embedded.hpp: OpenCL C sources linked into the program by clcc-made
// objects, which register them from constructors (stdcl_embed_register).
#pragma once

#include <string>
#include <vector>

namespace stdcl {

struct EmbeddedSource {
    std::string name;  // the .cl file's name as clcc saw it (e.g. "nbody_kern.cl")
    std::string text;  // the source, its #includes already inlined
};

// Every source registered so far, in registration order (a copy; thread
// safe).  clopen(cp, NULL, flags) builds these.
std::vector<EmbeddedSource> embedded_sources();

}  // namespace stdcl
