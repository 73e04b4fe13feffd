// SPDX-License-Identifier: MIT
// fuzz_clsopen.cpp: what the library does with a clsopen source before (and
// around) the OpenCL compiler.  clsopen itself only stores the text; the
// build (loader.cpp) turns it into a BuildRequest and calls build_program()
// (libstdcl/builds/program_cache.cpp), which this target calls directly:
//   - the option string (builds/compile.cpp: render_options, the -I folders
//     of the program's and STDCL_BUILD_OPTIONS' options, key_options);
//   - the program cache's key (cache_key.cpp: the #include scan of the
//     source and of every header it reaches, digests, the key text);
//   - the cache lookup, the key's lock, the store and eviction of the entry
//     (cache_store.cpp), and a hit loading it back;
//   - compile_program's retry without -cl-kernel-arg-info after a failure.
// The compiler is tests/fuzz/fake_opencl.cpp's (no driver is loaded): it
// "compiles" a source to a binary that holds the source and the options, and
// fails a source holding "#error".  The OpenCL C itself is parsed only by a
// real driver's compiler, which is not fuzzed here.
//
// Input: up to four parts separated by NUL bytes (clsopen takes a C string,
// so its source ends at the first NUL):
//   source \0 clbuild's options \0 STDCL_BUILD_OPTIONS \0 the program's folder
// The program's folder plays the kernel file's folder or the current folder
// (the -I folders the library adds).  Two -I folders of a scratch folder hold
// headers (a.h and b.h include each other, b.h has #pragma once, sub/c.h
// includes <a.h>, stdcl.h stands for the installed one).  An input that
// names an absolute path or ".." in an #include or in an -I option is
// skipped: the scan would read files outside the scratch folder.
//
// Checks, besides no crash and no sanitizer report:
//   - build_program returns (it never throws), and fails exactly when the
//     fake compiler does ("#error"), with a log;
//   - a program built holds the binary of this source and of the options the
//     result names (from the compiler or from the cache alike; the -I folders
//     aside, which the cache leaves out of its key on purpose), and those are
//     render_options(options, true); and there is a log per device;
//   - the same request again is a cache hit with the same binary;
//   - every cl_program the library made is released once the caller releases
//     the one it got (fake_opencl counts them);
//   - every -I folder of the request is among search_dirs(), and each one
//     reaches key_options() as the two words "-I" and the folder.
#include "fake_opencl.hpp"
#include "fuzz_common.hpp"

#include "helpers/include_scan.hpp"
#include "builds/program_build.hpp"

#include <sys/stat.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Scratch {
    std::string inc;  // plays the current folder (an -I folder)
    std::string stdinc;  // plays the installed include folder (stdcl.h)
};

const Scratch& scratch()
{
    static Scratch s;
    if (s.inc.empty()) {
        std::string root = fuzz::scratch_dir();
        s.inc = root + "/inc";
        s.stdinc = root + "/include";
        for (const std::string& d : {s.inc, s.inc + "/sub", s.stdinc, root + "/cache"}) ::mkdir(d.c_str(), 0700);
        fuzz::write_file(s.inc + "/a.h", "#include \"b.h\"\n#define A 1\n");
        fuzz::write_file(s.inc + "/b.h", "#pragma once\n#include \"a.h\"\n#define B 2\n");
        fuzz::write_file(s.inc + "/sub/c.h", "/* c.h */\n#include <a.h>\n");
        fuzz::write_file(s.stdinc + "/stdcl.h", "#define STDCL_KERNEL 1\n");
        // The program cache, in the scratch folder.  An entry here stays below
        // 8K (libFuzzer keeps inputs to 4K unless a seed is longer).
        ::setenv("STDCL_CACHE", "1", 1);
        ::setenv("STDCL_CACHE_DIR", (root + "/cache").c_str(), 1);
        ::setenv("STDCL_CACHE_MAX", "64K", 1);  // a few dozen entries: evictions, and fast listings
    }
    return s;
}

// The options as the program cache's key holds them when no include is
// computed: its words, without the -I folders (see fake_opencl.hpp).
std::string options_without_folders(const std::string& options)
{
    stdcl::BuildOptions o;
    o.user = options;
    return stdcl::key_options(o, true);
}

bool outside(const std::string& name)
{
    return !name.empty() && (name[0] == '/' || name.find("..") != std::string::npos);
}

// The word as key_options quotes it.
std::string quoted_word(const std::string& w)
{
    std::string q = "\"";
    for (char c : w) {
        if (c == '"' || c == '\\') q += '\\';
        q += c;
    }
    return q + "\"";
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    scratch();
    fake_cl::options_in_binary = options_without_folders;
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const Scratch& s = scratch();
    std::vector<std::string> parts(4);
    std::size_t start = 0;
    for (std::size_t k = 0; k < 4 && start <= size; ++k) {
        const char* p = reinterpret_cast<const char*>(data) + start;
        std::size_t n = strnlen(p, size - start);
        parts[k].assign(p, n);
        start += n + 1;
    }

    stdcl::BuildRequest req;
    req.context = fake_cl::context();
    req.platform = fake_cl::platform();
    req.devices = {fake_cl::device(0), fake_cl::device(1)};
    req.source = parts[0];
    // As loader.cpp's options_for() makes them for a CPU device.
    req.options.defines = {"__STDCL__", "__stdcl_kernel__", "__CPU__"};
    if (!parts[3].empty()) req.options.include_dirs.push_back(parts[3]);
    req.options.include_dirs.push_back(s.inc);
    req.options.include_dirs.push_back(s.stdinc);
    req.options.user = parts[1];
    req.options.env = parts[2];

    const std::vector<std::string> dirs = stdcl::search_dirs(req.options);
    for (const std::string& d : dirs)
        if (outside(d) && d != s.inc && d != s.stdinc) return 0;
    for (const stdcl::IncludeDirective& d : stdcl::find_includes(req.source))
        if (outside(d.name)) return 0;

    // The -I folders: found, and in the key as given.
    for (const std::string& d : req.options.include_dirs) {
        bool listed = false;
        for (const std::string& e : dirs) listed = listed || e == d;
        FUZZ_CHECK(listed, "-I folder '%s' not among search_dirs()", d.c_str());
    }
    // Each folder reaches the option string as one word, whatever it holds
    // (tests/fuzz/corpus/clsopen/quote-in-folder).
    const std::string key_opts = stdcl::key_options(req.options, false);
    for (const std::string& d : req.options.include_dirs)
        FUZZ_CHECK(key_opts.find("\"-I\" " + quoted_word(d)) != std::string::npos,
                   "-I folder '%s' does not reach the key as one word: %s", d.c_str(), key_opts.c_str());

    const std::string want_options = stdcl::render_options(req.options, true);
    const bool should_fail = req.source.find(fake_cl::fail_word) != std::string::npos;
    for (int round = 0; round < 2; ++round) {
        stdcl::BuildResult r;
        try {
            r = stdcl::build_program(req);
        } catch (...) {
            FUZZ_CHECK(false, "build_program threw");
        }
        if (should_fail) {
            FUZZ_CHECK(!r.program && r.status == CL_BUILD_PROGRAM_FAILURE && !r.log.empty(),
                       "a failed build: program %p, status %d", static_cast<void*>(r.program), r.status);
            FUZZ_CHECK(fake_cl::live_programs() == 0, "%ld programs left after a failed build",
                       fake_cl::live_programs());
            return 0;
        }
        FUZZ_CHECK(r.program, "no program: status %d, log %s", r.status, r.log.c_str());
        FUZZ_CHECK(r.options == want_options, "built with '%s', asked for '%s'", r.options.c_str(),
                   want_options.c_str());
        FUZZ_CHECK(fake_cl::binary_of(r.program) == fake_cl::fake_binary(req.source, r.options),
                   "the program holds another binary (from the cache: %d)", r.from_cache);
        FUZZ_CHECK(r.logs.size() == req.devices.size(), "%zu logs for %zu devices", r.logs.size(), req.devices.size());
        FUZZ_CHECK(round == 0 || r.from_cache, "the second build of the same request missed the cache");
        clReleaseProgram(r.program);
        FUZZ_CHECK(fake_cl::live_programs() == 0, "%ld programs left after the release", fake_cl::live_programs());
    }
    return 0;
}
