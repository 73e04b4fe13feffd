// SPDX-License-Identifier: MIT
// embedded.cpp: the registry of kernels embedded in executables and shared
// libraries by clcc (stdcl_embed_register), read by clopen(cp, NULL, ...).
#include "programs/embedded.hpp"

#include <stdcl.h>

#include <cstring>
#include <mutex>
#include <new>

namespace stdcl {
namespace {

struct Registry {
    std::mutex mutex;
    std::vector<EmbeddedSource> sources;
};

// Registration runs from constructors of objects linked into the program,
// possibly before libstdcl's own static objects exist (static executables
// run constructors in link order): a function-local static is made on first
// use.  It is never destroyed, so a destructor running late (or a library
// unloaded late) cannot see it gone.
Registry& registry()
{
    static Registry* r = new Registry;
    return *r;
}

}  // namespace

std::vector<EmbeddedSource> embedded_sources()
{
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    return r.sources;
}

}  // namespace stdcl

// Called by the constructor of each object clcc makes (before main, or
// when a shared library holding one is loaded).  The text is copied, so a
// library unloaded later leaves no dangling pointer.  Registering the same
// name and text twice (an object linked into both a library and the
// program) keeps one copy.  Returns 0, or STDCL_EINVAL for a NULL source,
// or STDCL_ENOMEM.
extern "C" STDCL_API int stdcl_embed_register(const char* name, const char* source, size_t size)
{
    if (!source) return STDCL_EINVAL;
    try {
        stdcl::EmbeddedSource e;
        e.name = name && *name ? name : "(unnamed)";
        // A terminating NUL counted in size is not part of the text.
        while (size > 0 && source[size - 1] == '\0') --size;
        e.text.assign(source, size);
        stdcl::Registry& r = stdcl::registry();
        std::lock_guard<std::mutex> lock(r.mutex);
        for (const stdcl::EmbeddedSource& have : r.sources)
            if (have.name == e.name && have.text == e.text) return 0;
        r.sources.push_back(std::move(e));
        return 0;
    } catch (const std::bad_alloc&) {
        return STDCL_ENOMEM;
    } catch (...) {
        return STDCL_EINVAL;
    }
}
