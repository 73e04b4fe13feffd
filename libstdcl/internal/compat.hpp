// SPDX-License-Identifier: MIT
// compat.hpp: what compat.cpp (the STDCL 1.6 compatibility calls) offers the rest of the library.
#pragma once

#include <stdcl.h>

#include <string>

namespace stdcl {

// The folder holding the installed stdcl.h that kernels include (every build gets
// -I it): <the library's folder>/../include when stdcl.h is there, else the
// configured includedir when it is there, else "" (no -I).  Found once.
const std::string& kernel_include_dir();

// A default context's setting: key NULL gives STDX itself (var is "STDGPU", ...),
// key "max_ndev" gives STDX_MAX_NDEV, and so on.  When that variable is unset, STDX
// may hold STDCL 1.6's form, colon-separated clauses "key=value" (key matched
// case-insensitively) and one bare clause (the 0/1 switch):
// STDGPU="1:platform_name=AMD:max_ndev=2:lock=7".  NULL when neither gives a value.
// Load time only (the strings live until exit).
const char* env_setting(const std::string& var, const char* key);

// Releases what the compatibility calls keep for cp (clwait's events).
void compat_forget_context(CLCONTEXT* cp) noexcept;

}  // namespace stdcl
