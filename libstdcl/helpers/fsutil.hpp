// SPDX-License-Identifier: MIT
// fsutil.hpp: the file and path helpers the library and its tools share
// (the loader, the program cache's include scan, clcc): one of each.
#pragma once

#include <string>

namespace stdcl {

// Why read_file failed.
struct ReadError {
    int err = 0;  // an errno value
    bool opened = false;  // false: open() failed; true: a later step
    const char* kind = nullptr;  // not a regular file: "a directory", "a FIFO",
        // "a socket", "a device" (err EISDIR or EINVAL)
};

// Reads the whole regular file at path into *out.  It is opened with
// O_NONBLOCK (a FIFO never blocks the caller) and checked with fstat before
// a byte is read.  False with *why filled and *out unchanged.
bool read_file(const std::string& path, std::string* out, ReadError* why = nullptr);

// The folder part of path: "." for a bare name, "/" for "/x"; trailing
// slashes of the folder are dropped ("a//b" -> "a").
std::string dirname_of(const std::string& path);

// name inside dir: name itself when it is absolute or dir is "" or ".".
std::string join_path(const std::string& dir, const std::string& name);

// True if path names a regular file (following symbolic links).
bool is_regular_file(const std::string& path);

}  // namespace stdcl
