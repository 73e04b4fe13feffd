// SPDX-License-Identifier: MIT
// fuzz_common.hpp: what several fuzz targets share: a scratch folder for the
// files a target must put on disk (removed at exit), file writing, and a
// check that aborts with a message (libFuzzer then saves the input).
#pragma once

#include <ftw.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace fuzz {

// Where FUZZ_CHECK writes: standard error as it was when the program started,
// duplicated before libFuzzer runs, so its messages still come out when
// libFuzzer discards the target's own stderr (-close_fd_mask=2).
inline int report_fd = ::dup(2);

// Stops the run on a broken property: libFuzzer reports the abort as a crash
// and writes the input to crash-<sha1> (run_fuzz.sh: build/fuzz/artifacts/).
#define FUZZ_CHECK(cond, ...)                                                                                          \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            dprintf(fuzz::report_fd, "fuzz check failed at %s:%d: %s\n  ", __FILE__, __LINE__, #cond);                 \
            dprintf(fuzz::report_fd, __VA_ARGS__);                                                                     \
            dprintf(fuzz::report_fd, "\n");                                                                            \
            std::abort();                                                                                              \
        }                                                                                                              \
    } while (0)

// Known library bugs (tests/fuzz/crashes/README) that a target steps around
// so that make check stays green until they are fixed: each target says
// where.  FUZZ_STRICT=1 in the environment turns those detours off (then the
// saved inputs of tests/fuzz/crashes/ fail again).
inline bool strict()
{
    static const bool on = [] {
        const char* v = std::getenv("FUZZ_STRICT");
        return v && *v && std::string(v) != "0";
    }();
    return on;
}

inline std::string& scratch_root()
{
    static std::string root;
    return root;
}

inline void remove_scratch()
{
    if (scratch_root().empty()) return;
    ::nftw(
        scratch_root().c_str(), [](const char* p, const struct stat*, int, struct FTW*) { return ::remove(p); }, 16,
        FTW_DEPTH | FTW_PHYS);
}

// A fresh folder of this process (mode 0700, as the program cache wants its
// folder), under $TMPDIR (run_fuzz.sh points it into build/fuzz/), removed at
// exit.  Made once; later calls return the same path.
inline const std::string& scratch_dir()
{
    if (scratch_root().empty()) {
        const char* t = std::getenv("TMPDIR");
        std::string tmpl = std::string(t && *t ? t : "/tmp") + "/stdcl-fuzz-XXXXXX";
        if (!::mkdtemp(&tmpl[0])) {
            std::perror("mkdtemp");
            std::abort();
        }
        scratch_root() = tmpl;
        std::atexit(remove_scratch);
    }
    return scratch_root();
}

// Writes bytes to path (replacing it); aborts if that fails (a full disk is
// not a finding, but it must not pass unnoticed either).
inline void write_file(const std::string& path, const std::string& bytes)
{
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || std::fclose(f) != 0) {
        std::perror(path.c_str());
        std::abort();
    }
}

}  // namespace fuzz
