// SPDX-License-Identifier: MIT
// make.hpp: building, publishing and destroying a context (context.cpp), shared
// with the default contexts' set-up and release (defaults.cpp).  Private to
// contexts/.
#pragma once

#include "contexts/context.hpp"
#include "contexts/platform.hpp"

#include <string>
#include <vector>

namespace stdcl {

// A context built but not yet published (publish_context): no trace yet, not live, no
// profile.  probe_failure says why the zero-copy probe decided nothing ("" when it
// answered on every device, or did not run).
struct Made {
    CLCONTEXT* cp = nullptr;
    std::string probe_failure;
};

// Builds a context over the given devices.  With `share` (a context over the same
// devices, in the same order) it holds share's cl_context (retained) instead of a
// new one, with queues of its own, and takes the device properties and zero-copy
// answers from share instead of querying and probing again.  Throws on failure,
// having released what it made.
Made build_context(const std::string& label, const PlatformInfo& plat, const std::vector<cl_device_id>& ids,
                   const std::string& why, const cl_context_properties* extra, const Made* share);

// Publishes a built context: its probe warning and trace, the set of live contexts,
// its profile.  On failure releases the context and throws.
CLCONTEXT* publish_context(const Made& made);

// Finishes a context's queues and releases everything it holds, then the context.
void destroy_context(CLCONTEXT* cp);
// Waits until no other thread is inside a call on cp (cp out of the live set:
// no new one starts).
void wait_for_calls(CLCONTEXT* cp) noexcept;

// A platform chosen for a context, its devices of the wanted type, and why.
struct Choice {
    const PlatformInfo* plat = nullptr;
    std::vector<cl_device_id> devs;
    std::string why;
};

// Picks a platform for devices of `type` following a priority list (may be empty).
Choice choose(const std::vector<PlatformInfo>& plats, cl_device_type type, const std::vector<std::string>& prefer,
              const char* prefer_var, const char* prefer_value, bool prefer_gpu_on_tie);

// note_load(label, msg, true).
void note_load_failure(const char* label, const std::string& msg) noexcept;

// Registers the release of the default contexts (and the profile's report) with
// atexit, once (defaults.cpp).
void release_at_exit();

}  // namespace stdcl
