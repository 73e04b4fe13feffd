// SPDX-License-Identifier: MIT
// compile.cpp: a build's option string, written and read only here, and the
// compiler: OpenCL C source to a cl_program (program_build.hpp).
#include "helpers/cl_util.hpp"
#include "helpers/diag.hpp"
#include "helpers/host_state.hpp"
#include "builds/program_build.hpp"

#include <cstring>

namespace stdcl {

namespace {

constexpr const char* kArgInfo = "-cl-kernel-arg-info";

// Splits an option string into words like a shell would for simple quoting.
std::vector<std::string> split_options(const std::string& options)
{
    std::vector<std::string> words;
    std::string w;
    bool in_word = false;
    char quote = 0;
    for (std::size_t i = 0; i < options.size(); ++i) {
        char c = options[i];
        if (quote) {
            if (c == quote)
                quote = 0;
            else if (c == '\\' && quote == '"' && i + 1 < options.size())
                w += options[++i];
            else
                w += c;
        } else if (c == '"' || c == '\'') {
            quote = c;
            in_word = true;
        } else if (c == '\\' && i + 1 < options.size()) {
            w += options[++i];
            in_word = true;
        } else if (c == ' ' || c == '\t' || c == '\n') {
            if (in_word) words.push_back(w);
            w.clear();
            in_word = false;
        } else {
            w += c;
            in_word = true;
        }
    }
    if (in_word) words.push_back(w);
    return words;
}

// The -I folders named in an option string ("-I dir", "-Idir", quoted or not), in order.
std::vector<std::string> include_dirs_of(const std::string& options)
{
    std::vector<std::string> words = split_options(options);
    std::vector<std::string> dirs;
    for (std::size_t i = 0; i < words.size(); ++i) {
        if (words[i] == "-I" && i + 1 < words.size())
            dirs.push_back(words[++i]);
        else if (words[i].size() > 2 && words[i].compare(0, 2, "-I") == 0)
            dirs.push_back(words[i].substr(2));
    }
    return dirs;
}

// The words of an option string, each quoted (so that no two different word lists
// look alike), without the -I folders when drop_include_dirs.
std::string quoted_words(const std::string& options, bool drop_include_dirs)
{
    std::vector<std::string> words = split_options(options);
    // Each word quoted, so that no two different word lists look alike.
    std::string out;
    for (std::size_t i = 0; i < words.size(); ++i) {
        if (drop_include_dirs) {
            if (words[i] == "-I") {
                ++i;
                continue;
            }
            if (words[i].size() > 2 && words[i].compare(0, 2, "-I") == 0) continue;
        }
        if (!out.empty()) out += ' ';
        out += '"';
        for (char c : words[i]) {
            if (c == '"' || c == '\\') out += '\\';
            out += c;
        }
        out += '"';
    }
    return out;
}

// An -I folder as one word of the option string: in double quotes, with '"' and
// '\\' escaped, when it holds anything an option parser splits on or unquotes.
std::string quote_dir(const std::string& d)
{
    if (!d.empty() && d.find_first_of(" \t\n\r\"'\\") == std::string::npos) return d;
    std::string q = "\"";
    for (char c : d) {
        if (c == '"' || c == '\\') q += '\\';
        q += c;
    }
    return q + "\"";
}

// The query of device d's compiler log of prog, for cl_string.
auto build_log_query(cl_program prog, cl_device_id d)
{
    return [prog, d](size_t n, void* v, size_t* r) {
        return clGetProgramBuildInfo(prog, d, CL_PROGRAM_BUILD_LOG, n, v, r);
    };
}

// A build failure that the same build without -cl-kernel-arg-info may not have.
bool arg_info_may_be_why(cl_int status)
{
    return status == CL_BUILD_PROGRAM_FAILURE || status == CL_INVALID_BUILD_OPTIONS ||
        status == CL_INVALID_COMPILER_OPTIONS;
}

// The log of a failed build: the first failing device's, with the options.
std::string failure_log(cl_program prog, const BuildRequest& req, const std::string& opts, cl_int err)
{
    for (cl_device_id d : req.devices) {
        cl_build_status bs = CL_BUILD_NONE;
        cl_int ierr = clGetProgramBuildInfo(prog, d, CL_PROGRAM_BUILD_STATUS, sizeof bs, &bs, nullptr);
        if (ierr == CL_SUCCESS && bs == CL_BUILD_SUCCESS) continue;
        std::string log;
        if (ierr == CL_SUCCESS) ierr = cl_string(build_log_query(prog, d), &log);
        if (ierr != CL_SUCCESS)
            log = strprintf("(no compiler log: clGetProgramBuildInfo failed: %s (%d))", cl_error_name(ierr), int(ierr));
        std::string dname;
        device_string(d, CL_DEVICE_NAME, &dname);
        return strprintf("build failed on device '%s' (%s) with options '%s':\n%s", dname.c_str(), cl_error_name(err),
                         opts.c_str(), log.c_str());
    }
    return strprintf("clBuildProgram: %s (%d) with options '%s'", cl_error_name(err), int(err), opts.c_str());
}

// One compilation with the option string opts.
BuildResult compile_with(const BuildRequest& req, const std::string& opts)
{
    BuildResult r;
    const char* src = req.source.c_str();
    size_t len = req.source.size();
    cl_int err = CL_SUCCESS;
    ClRef<cl_program> prog(clCreateProgramWithSource(req.context, 1, &src, &len, &err));
    if (err != CL_SUCCESS) {
        r.status = err;
        r.log = strprintf("clCreateProgramWithSource: %s (%d)", cl_error_name(err), int(err));
        return r;
    }
    {
        BuildStateGuard keep_state;
        err =
            clBuildProgram(prog.get(), cl_uint(req.devices.size()), req.devices.data(), opts.c_str(), nullptr, nullptr);
    }
    if (err != CL_SUCCESS) {
        r.status = err;
        r.log = failure_log(prog.get(), req, opts, err);
        return r;  // prog released
    }
    // The logs of a build that succeeded: warnings (clbuildlog, STDCL_TRACE=log).
    for (cl_device_id d : req.devices) {
        std::string log;
        cl_string(build_log_query(prog.get(), d), &log);
        r.logs.push_back(std::move(log));
    }
    r.options = opts;
    r.program = prog.release();
    return r;
}

}  // namespace

std::string render_options(const BuildOptions& o, bool arg_info)
{
    std::string s;
    auto add = [&s](const std::string& w) {
        if (w.empty()) return;
        if (!s.empty()) s += ' ';
        s += w;
    };
    for (const auto& d : o.defines) add("-D " + d);
    for (const auto& inc : o.include_dirs) add("-I " + quote_dir(inc));
    if (arg_info) add(kArgInfo);
    add(o.user);
    add(o.env);
    return s;
}

std::vector<std::string> search_dirs(const BuildOptions& o)
{
    std::vector<std::string> dirs = o.include_dirs;
    for (const std::string* opts : {&o.user, &o.env})
        for (const std::string& d : include_dirs_of(*opts)) {
            bool have = false;
            for (const std::string& e : dirs) have = have || e == d;
            if (!have) dirs.push_back(d);
        }
    return dirs;
}

std::string key_options(const BuildOptions& o, bool drop_include_dirs)
{
    return quoted_words(render_options(o, true), drop_include_dirs);
}

BuildResult compile_program(const BuildRequest& req)
{
    BuildResult r = compile_with(req, render_options(req.options, true));
    if (r.program || !arg_info_may_be_why(r.status)) return r;
    BuildResult plain = compile_with(req, render_options(req.options, false));
    if (!plain.program) return r;  // the first failure's log: the build as asked for
    trace(Trace::load, "%s: the build failed with %s and succeeded without it",
          req.origin.empty() ? "a program from source text" : req.origin.c_str(), kArgInfo);
    return plain;
}

cl_int build_binary(cl_program p, const BuildRequest& req, std::string* used)
{
    cl_uint n = cl_uint(req.devices.size());
    *used = render_options(req.options, true);
    cl_int err;
    {
        BuildStateGuard keep_state;
        err = clBuildProgram(p, n, req.devices.data(), used->c_str(), nullptr, nullptr);
    }
    if (err == CL_SUCCESS || !arg_info_may_be_why(err)) return err;
    *used = render_options(req.options, false);
    BuildStateGuard keep_state;
    return clBuildProgram(p, n, req.devices.data(), used->c_str(), nullptr, nullptr);
}

}  // namespace stdcl
