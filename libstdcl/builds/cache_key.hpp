// SPDX-License-Identifier: MIT
// cache_key.hpp: the program cache's key: what goes into it (source, every
// #included file, options, compiler-affecting environment, platform, devices,
// library version), its text form, and which part changed between two keys.
//
// The key text is one component per line ("options -D __STDCL__ ...",
// "include \"val.h\" /src/val.h <sha256>", ...); the key is its SHA-256.
// The text is stored in each entry so a miss can say what changed.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace stdcl {

// One file reached from the source through #include.
struct IncludeRecord {
    std::string spelled;  // as written: "val.h" or <val.h> (or the macro text)
    std::string path;  // where it was found; empty when not found
    std::string digest;  // SHA-256 of its content; empty when not found
};

// Follows #include "x" and #include <x> from source, transitively, the way
// the OpenCL compiler does: a quoted name is looked up in the including
// file's folder (none for the top-level source), then in dirs in order; an
// angled one in dirs only.  Each file is read once.  Names that resolve to
// no file are recorded by name.  Directives inside comments are skipped.
std::vector<IncludeRecord> scan_includes(const std::string& source, const std::vector<std::string>& dirs);

// Environment variables read by OpenCL compilers that change the binary
// (POCL_EXTRA_BUILD_FLAGS, ...), as NAME=value for those that are set.
std::vector<std::string> compiler_environment();

struct KeyParts {
    std::string library;  // STDCL_VERSION_STRING
    std::string platform;  // name | version
    std::vector<std::string> devices;  // per device: name | vendor | version | driver
    std::string options;  // complete build options
    std::vector<std::string> env;  // compiler_environment()
    std::string source;  // the program text
    std::vector<IncludeRecord> includes;
};

// The key's text form (deterministic; one component per line).
std::string make_key_text(const KeyParts& parts);

// The components that differ between two key texts, for a trace line:
// e.g. "include /k/val.h (content changed), options".  Empty if equal.
std::string describe_key_change(const std::string& old_text, const std::string& new_text);

// The value of the "source" line of a key text (a digest), or "".
std::string key_source_digest(const std::string& key_text);

}  // namespace stdcl
