// SPDX-License-Identifier: MIT
// loader.cpp: clopen, clsopen, clbuild, clsym, clclose: programs loaded like shared
// objects, reference counted per context, with the standard build options.
#include "events/events.hpp"
#include "programs/program.hpp"
#include "helpers/cl_util.hpp"
#include "config/config.hpp"
#include "helpers/diag.hpp"
#include "programs/embedded.hpp"
#include "helpers/fsutil.hpp"
#include "helpers/host_state.hpp"
#include "builds/program_build.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>

#ifndef STDCL_INCLUDEDIR
#define STDCL_INCLUDEDIR ""
#endif

namespace stdcl {

namespace {

bool has_stdcl_h(const std::string& dir)
{
    struct stat st;
    return !dir.empty() && ::stat((dir + "/stdcl.h").c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

#ifndef STDCL_INCLUDE_FROM_LIB
#define STDCL_INCLUDE_FROM_LIB "../include"
#endif

std::string find_include_dir()
{
    Dl_info info;
    if (dladdr(reinterpret_cast<void*>(&clstat), &info) && info.dli_fname) {
        if (std::unique_ptr<char, decltype(&free)> real{realpath(info.dli_fname, nullptr), &free}) {
            std::string lib(real.get());
            std::string dir = lib.substr(0, lib.find_last_of('/'));
            // Installed: libdir to includedir, as configured (moves with the tree).
            std::string inc = dir + "/" STDCL_INCLUDE_FROM_LIB;
            if (has_stdcl_h(inc)) return inc;
            // The build tree: build/lib and build/include.
            inc = dir.substr(0, dir.find_last_of('/')) + "/include";
            if (has_stdcl_h(inc)) return inc;
        }
    }
    if (has_stdcl_h(STDCL_INCLUDEDIR)) return STDCL_INCLUDEDIR;
    return std::string();
}

constexpr int kLoadFlags = CLLD_NOW | CLLD_LAZY | CLLD_NOBUILD | CLLD_GLOBAL;

std::string cwd()
{
    char buf[4096];
    return getcwd(buf, sizeof buf) ? std::string(buf) : std::string(".");
}

bool exists(const std::string& p)
{
    struct stat st;
    return stat(p.c_str(), &st) == 0;
}

// The kernel file: as given if absolute; else the current directory, then
// STDCL_KERNEL_PATH.  The first name that exists is the one (read_kernel_file
// then says if it is not a readable regular file).
std::string resolve(const std::string& file, const char* call)
{
    if (file[0] == '/') {
        if (exists(file)) return file;
        fail(STDCL_ENOENT, "%s: kernel file '%s' not found", call, file.c_str());
    }
    std::string looked = "the current directory";
    if (exists(file)) return file;
    if (const char* path = env_value("STDCL_KERNEL_PATH"))
        for (const auto& dir : split_list(path, ':')) {
            std::string cand = dir + "/" + file;
            if (exists(cand)) return cand;
            looked += ", " + dir;
        }
    fail(STDCL_ENOENT, "%s: kernel file '%s' not found (looked in %s; set STDCL_KERNEL_PATH to add folders)", call,
         file.c_str(), looked.c_str());
}

// The text of a kernel file.  Opened without blocking (a FIFO never hangs clopen)
// and checked to be a regular file; OpenCL C text has no NUL byte, so one means
// the wrong file (a binary) rather than a program to truncate silently.
std::string read_kernel_file(const std::string& path, const char* call)
{
    std::string text;
    ReadError e;
    if (!read_file(path, &text, &e)) {
        if (!e.opened)
            fail(e.err == ENOENT ? STDCL_ENOENT : STDCL_EINVAL, "%s: cannot open '%s': %s", call, path.c_str(),
                 strerror(e.err));
        if (e.kind) fail(STDCL_EINVAL, "%s: '%s' is %s, not a kernel file", call, path.c_str(), e.kind);
        fail(STDCL_EINVAL, "%s: cannot read '%s': %s", call, path.c_str(), strerror(e.err));
    }
    size_t nul = text.find('\0');
    if (nul != std::string::npos)
        fail(STDCL_EINVAL, "%s: '%s' has a NUL byte at offset %zu: not OpenCL C source text", call, path.c_str(), nul);
    return text;
}

const char* type_macro(cl_device_type t) { return device_type_name(t).macro; }

const Device& first_of_group(CLCONTEXT* cp, size_t g)
{
    for (const auto& d : cp->devs)
        if (size_t(d.group) == g) return d;
    return cp->devs[0];
}

// The options of p's builds for devices like d0.
BuildOptions options_for(const Program& p, const Device& d0)
{
    BuildOptions o;
    o.defines = {"__STDCL__", "__stdcl_kernel__"};
    if (const char* tm = type_macro(d0.type)) o.defines.push_back(tm);
    if (!d0.vendor_macro.empty()) o.defines.push_back(d0.vendor_macro);
    if (!p.library) {
        if (!p.dir.empty()) o.include_dirs.push_back(p.dir);
        if (p.dir != cwd()) o.include_dirs.push_back(cwd());
        // <stdcl.h>'s kernel side (compat.cpp finds the installed header).
        if (!kernel_include_dir().empty()) o.include_dirs.push_back(kernel_include_dir());
    }
    // The library's own programs build without warnings: a compiler that prints
    // its diagnostics to stderr (PoCL's clang: "24 warnings generated.") would
    // otherwise speak for libstdcl in the user's program.  A failed build still
    // reports its log.
    // Their own options (the primitives' -D variants) come after it.
    o.user = p.library ? (p.user_options.empty() ? std::string("-w") : "-w " + p.user_options) : p.user_options;
    const char* env = env_value("STDCL_BUILD_OPTIONS");
    o.env = env ? env : "";
    return o;
}

// Builds unit u of p for device group g; throws on failure.  Each device's log
// goes to logs[device].
BuildResult build_unit(Program& p, size_t u, size_t g, std::vector<std::string>& logs)
{
    CLCONTEXT* cp = p.cp;
    const Device& d0 = first_of_group(cp, g);
    BuildRequest req;
    req.context = cp->ctx;
    req.platform = cp->platform;
    req.devices = cp->groups[g];
    req.source = p.sources[u];
    req.options = options_for(p, d0);
    req.origin = u < p.origins.size() ? p.origins[u] : std::string();
    auto t0 = std::chrono::steady_clock::now();
    BuildResult r = build_program(req);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (!r.program) {
        int code = r.status == CL_SUCCESS ? STDCL_EBUILD : code_of_cl(r.status);
        fail(code, "%s: %s", p.unit_names[u].c_str(), r.log.c_str());
    }
    trace(Trace::load, "built %s for %zu %s device(s) in %.1f ms%s; options: %s", p.unit_names[u].c_str(),
          req.devices.size(), type_macro(d0.type) ? type_macro(d0.type) : "other", ms,
          r.from_cache ? " (from the program cache)" : "", r.options.c_str());
    profile_build(cp, ms, !r.from_cache, r.cache_on);
    for (size_t di = 0; di < cp->devs.size(); ++di) {
        if (size_t(cp->devs[di].group) != g) continue;
        size_t j = 0;
        while (j < req.devices.size() && req.devices[j] != cp->devs[di].id) ++j;
        if (j < r.logs.size()) logs[di] = r.logs[j];
    }
    return r;
}

// Each device's compiler logs of all units, one text per device (clbuildlog).
std::vector<std::string> join_logs(const Program& p, const std::vector<std::vector<std::string>>& logs,
                                   const std::vector<bool>& from_cache)
{
    CLCONTEXT* cp = p.cp;
    std::vector<std::string> joined(cp->devs.size());
    for (size_t di = 0; di < cp->devs.size(); ++di) {
        for (size_t u = 0; u < logs.size(); ++u) {
            const std::string& l = logs[u][di];
            if (l.find_first_not_of(" \t\r\n") == std::string::npos) continue;
            if (logs.size() > 1) joined[di] += p.unit_names[u] + ":\n";
            joined[di] += l;
            if (l.back() != '\n') joined[di] += '\n';
            if (trace_on(Trace::log))
                trace(Trace::log, "compiler log of %s on device %zu (%s)%s:\n%s", p.unit_names[u].c_str(), di,
                      cp->devs[di].name.c_str(), from_cache[u] ? " (stored in the program cache)" : "", l.c_str());
        }
    }
    return joined;
}

// Builds every unit of p for every device group of its context.
void build(Program& p)
{
    CLCONTEXT* cp = p.cp;
    std::vector<std::vector<cl_program>> built;
    // Every program made is put in `built` as soon as it exists, and released here
    // when anything after it fails or throws (no memory for a log, a trace line).
    try {
        std::vector<std::vector<std::string>> logs(p.sources.size(), std::vector<std::string>(cp->devs.size()));
        std::vector<bool> from_cache(p.sources.size(), false);
        built.reserve(p.sources.size());
        for (size_t u = 0; u < p.sources.size(); ++u) {
            built.emplace_back(cp->groups.size(), nullptr);
            for (size_t g = 0; g < cp->groups.size(); ++g) {
                BuildResult r = build_unit(p, u, g, logs[u]);
                built[u][g] = r.program;
                from_cache[u] = from_cache[u] || r.from_cache;
            }
        }
        p.joined_logs = join_logs(p, logs, from_cache);
        p.logs = std::move(logs);
        p.cl = std::move(built);
        p.built = true;
        p.nobuild_pending = false;
    } catch (...) {
        for (auto& unit : built)
            for (cl_program q : unit)
                if (q) clReleaseProgram(q);
        throw;
    }
}

std::shared_ptr<Program> find_handle(CLCONTEXT* cp, void* h, const char* call)
{
    for (auto& p : cp->programs)
        if (p.get() == h) return p;
    fail(STDCL_EINVAL, "%s: %p is not a handle open in %s", call, h, cp->label.c_str());
}

// Releases p's kernels and programs (p.build_mu held, or p unreachable).  A kernel
// still in use by a launch in another thread is released when that launch ends.
void release_program(Program& p)
{
    for (auto& kv : p.kernels) kernel_unregister(*kv.second);
    p.kernels.clear();
    for (auto& unit : p.cl)
        for (cl_program q : unit)
            if (q) clReleaseProgram(q);
    p.cl.clear();
    p.built = false;
}

// Drops one reference to p; the last one takes it out of its context and releases it.
void drop_ref(CLCONTEXT* cp, const std::shared_ptr<Program>& p)
{
    {
        std::lock_guard<std::mutex> lock(cp->load_mu);
        if (--p->refs > 0) return;
        for (size_t i = 0; i < cp->programs.size(); ++i)
            if (cp->programs[i] == p) {
                cp->programs.erase(cp->programs.begin() + long(i));
                break;
            }
    }
    std::lock_guard<std::mutex> lock(p->build_mu);
    release_program(*p);
}

// Builds p unless it is built: one build at a time per program (a second caller
// waits and finds it built), and never under the context's lock, so loading other
// programs and looking up their kernels goes on during a compile.
void build_once(Program& p)
{
    std::lock_guard<std::mutex> lock(p.build_mu);
    if (!p.built) build(p);
}

// Opens np in cp, or finds the same program open there (the same key and options,
// built or to be built without clbuild).  options (NULL or "": none) are built
// as clbuild's are, now or, with CLLD_LAZY, at the first clsym.
void* open_program(CLCONTEXT* cp, std::shared_ptr<Program> np, int flags, const char* call,
                   const char* options = nullptr)
{
    if (flags & ~kLoadFlags) fail(STDCL_EINVAL, "%s: unknown flags 0x%x", call, unsigned(flags & ~kLoadFlags));
    if ((flags & CLLD_NOW) && (flags & (CLLD_LAZY | CLLD_NOBUILD)))
        fail(STDCL_EINVAL, "%s: CLLD_NOW excludes CLLD_LAZY and CLLD_NOBUILD", call);
    if (options && *options) {
        if (flags & CLLD_NOBUILD)
            fail(STDCL_EINVAL, "%s: options '%s' with CLLD_NOBUILD: give them to clbuild, or open without CLLD_NOBUILD",
                 call, options);
        np->user_options = options;
    }
    np->cp = cp;
    np->flags = flags;
    np->nobuild_pending = (flags & CLLD_NOBUILD) != 0;
    std::shared_ptr<Program> p;
    {
        std::lock_guard<std::mutex> lock(cp->load_mu);
        if (!(flags & CLLD_NOBUILD))
            for (auto& q : cp->programs)
                if (q->key == np->key && !q->nobuild_pending && q->user_options == np->user_options) {
                    p = q;
                    ++p->refs;
                    trace(Trace::load, "%s: %s already open, count %d", call, p->name.c_str(), p->refs);
                    profile_reopen(cp);
                    break;
                }
        if (!p) {
            cp->programs.push_back(np);
            p = np;
        }
    }
    if (flags & (CLLD_LAZY | CLLD_NOBUILD)) {
        if (p == np)
            trace(Trace::load, "%s: %s opened, build deferred (%s)%s%s", call, np->name.c_str(),
                  flags & CLLD_NOBUILD ? "CLLD_NOBUILD" : "CLLD_LAZY",
                  np->user_options.empty() ? "" : "; options: ", np->user_options.c_str());
        return p.get();
    }
    try {
        build_once(*p);
    } catch (...) {
        drop_ref(cp, p);  // the handle was never returned
        throw;
    }
    return p.get();
}

std::vector<std::string> kernel_names(cl_program prog)
{
    std::string s;
    check_cl(
        cl_string(
            [&](size_t n, void* v, size_t* r) { return clGetProgramInfo(prog, CL_PROGRAM_KERNEL_NAMES, n, v, r); }, &s),
        "clGetProgramInfo(CL_PROGRAM_KERNEL_NAMES)");
    return split_list(s, ';');
}

// The kernel `name` of p, created on first request; nullptr if p has none
// (p.build_mu held).
std::shared_ptr<KernelInfo> kernel_of(Program& p, const std::string& name)
{
    auto it = p.kernels.find(name);
    if (it != p.kernels.end()) return it->second;
    for (size_t u = 0; u < p.cl.size(); ++u) {
        auto names = kernel_names(p.cl[u][0]);
        bool has = false;
        for (const auto& n : names) has = has || n == name;
        if (!has) continue;
        // Parameter types name typedefs of the unit's source (a program loaded
        // from binaries, clloadb, has none).
        const TypedefTable* typedefs = nullptr;
        if (u < p.sources.size()) {
            auto td = p.typedefs.find(u);
            if (td == p.typedefs.end()) {
                BuildOptions o = options_for(p, first_of_group(p.cp, 0));
                // The folders the compiler searches: the program's -I options
                // (clopen_opt, clbuild, STDCL_BUILD_OPTIONS), then the library's.
                std::vector<std::string> dirs;
                for (const std::string* opts : {&o.user, &o.env}) {
                    std::vector<std::string> w = split_list(*opts, ' ');
                    for (size_t i = 0; i < w.size(); ++i)
                        if (w[i] == "-I" && i + 1 < w.size())
                            dirs.push_back(w[++i]);
                        else if (w[i].size() > 2 && w[i].compare(0, 2, "-I") == 0)
                            dirs.push_back(w[i].substr(2));
                }
                dirs.insert(dirs.end(), o.include_dirs.begin(), o.include_dirs.end());
                td = p.typedefs.emplace(u, scan_typedefs(p.sources[u], p.dir, dirs)).first;
            }
            typedefs = &td->second;
        }
        auto ki = kernel_create(p.cp, name, p.cl[u], typedefs);
        try {
            p.kernels[name] = ki;
        } catch (...) {
            kernel_unregister(*ki);
            throw;
        }
        trace(Trace::load, "clsym: kernel '%s' of %s, %u argument(s)", name.c_str(), p.name.c_str(), ki->nargs);
        return ki;
    }
    return nullptr;
}

void ensure_built(Program& p, const char* call)
{
    if (p.nobuild_pending)
        fail(STDCL_ESTATE, "%s: %s was opened with CLLD_NOBUILD and has not been built: call clbuild first", call,
             p.name.c_str());
    if (!p.built) build(p);
}

std::string content_key(const std::vector<std::string>& sources)
{
    // Identity of an open program: its text and how it was named (with its own
    // options, compared apart; the other options come from the environment and
    // the context, which are the same within one context).
    std::string k;
    for (const auto& s : sources) k += std::to_string(s.size()) + ":" + s;
    return k;
}

// A program of the kernel file `file` (NULL: the embedded kernels), not yet open.
std::shared_ptr<Program> file_program(const char* file, const char* call)
{
    auto p = std::make_shared<Program>();
    if (!file) {
        auto emb = embedded_sources();
        if (emb.empty())
            fail(STDCL_ENOENT, "%s: no embedded kernels in this program (link objects made by clcc)", call);
        for (const auto& e : emb) {
            p->sources.push_back(e.text);
            p->unit_names.push_back("embedded '" + e.name + "'");
            p->origins.push_back("embedded '" + e.name + "'");
        }
        p->name = "the embedded kernels";
        p->embedded = true;
    } else {
        if (!*file) fail(STDCL_EINVAL, "%s: the file name is empty", call);
        std::string path = resolve(file, call);
        p->sources.push_back(read_kernel_file(path, call));
        p->unit_names.push_back("'" + path + "'");
        p->origins.push_back(path[0] == '/' ? path : cwd() + "/" + path);
        p->name = "'" + path + "'";
        p->dir = dirname_of(p->origins.back());
    }
    p->key = content_key(p->sources) + "\n" + p->dir;
    return p;
}

// A program of the source text `source`, not yet open.
std::shared_ptr<Program> text_program(const char* source, const char* call)
{
    if (!source) fail(STDCL_EINVAL, "%s: the source is NULL", call);
    auto p = std::make_shared<Program>();
    p->sources.push_back(source);
    p->unit_names.push_back("source text");
    p->name = "source text";
    p->key = content_key(p->sources);
    return p;
}

// The program of source text `name` (clsopen_named), its arguments checked.
std::shared_ptr<Program> named_program(CLCONTEXT* cp, const char* source, const char* name, const char* call)
{
    context_check(cp, call);
    if (!source) fail(STDCL_EINVAL, "%s: the source is NULL", call);
    if (!name || !*name) fail(STDCL_EINVAL, "%s: the name is NULL or empty", call);
    if (std::strpbrk(name, "\"\\\n\r"))
        fail(STDCL_EINVAL, "%s: the name '%s' holds a '\"', '\\' or a line break (it goes into a #line directive)",
             call, name);
    auto p = std::make_shared<Program>();
    // Line 1 of the text is line 1 of `name` in the compiler's messages.
    p->sources.push_back(std::string("#line 1 \"") + name + "\"\n" + source);
    p->unit_names.push_back(std::string("'") + name + "'");
    p->origins.push_back(std::string("source text '") + name + "'");
    p->name = p->unit_names[0];
    p->key = content_key(p->sources);
    return p;
}

}  // namespace

const std::string& kernel_include_dir()
{
    static const std::string dir = find_include_dir();
    return dir;
}

void context_release_programs(CLCONTEXT* cp)
{
    std::vector<std::shared_ptr<Program>> progs;
    {
        std::lock_guard<std::mutex> lock(cp->load_mu);
        progs.swap(cp->programs);
    }
    for (auto& p : progs) {
        std::lock_guard<std::mutex> lock(p->build_mu);
        release_program(*p);
    }
    kernel_forget_context(cp);  // the tombstones' references too
}

void* open_library_program(CLCONTEXT* cp, const char* source, const char* name, const char* options)
{
    auto p = named_program(cp, source, name, "clsopen_named");
    p->library = true;
    p->key = "library " + p->key;  // never the same program as a program's own text
    return open_program(cp, p, CLLD_NOW, "clsopen_named", options);
}

std::shared_ptr<KernelInfo> program_kernel(CLCONTEXT* cp, void* handle, const std::string& name, const char* call)
{
    std::shared_ptr<Program> p;
    {
        std::lock_guard<std::mutex> lock(cp->load_mu);
        p = find_handle(cp, handle, call);
    }
    std::lock_guard<std::mutex> build_lock(p->build_mu);
    ensure_built(*p, call);
    if (auto ki = kernel_of(*p, name)) return ki;
    std::string avail;
    for (const auto& unit : p->cl)
        for (const auto& n : kernel_names(unit[0])) avail += (avail.empty() ? "" : ", ") + n;
    fail(STDCL_ENOENT, "%s: no kernel '%s' in %s (it has: %s)", call, name.c_str(), p->name.c_str(),
         avail.empty() ? "no kernels" : avail.c_str());
}

}  // namespace stdcl

using namespace stdcl;

extern "C" {

STDCL_API void* clopen(CLCONTEXT* cp, const char* file, int flags)
{
    return guarded<void*>(nullptr, [&]() -> void* {
        context_check(cp, "clopen");
        return open_program(cp, file_program(file, "clopen"), flags, "clopen");
    });
}

STDCL_API void* clopen_opt(CLCONTEXT* cp, const char* file, const char* options, int flags)
{
    return guarded<void*>(nullptr, [&]() -> void* {
        context_check(cp, "clopen_opt");
        return open_program(cp, file_program(file, "clopen_opt"), flags, "clopen_opt", options);
    });
}

STDCL_API void* clsopen(CLCONTEXT* cp, const char* source, int flags)
{
    return guarded<void*>(nullptr, [&]() -> void* {
        context_check(cp, "clsopen");
        return open_program(cp, text_program(source, "clsopen"), flags, "clsopen");
    });
}

STDCL_API void* clsopen_opt(CLCONTEXT* cp, const char* source, const char* options, int flags)
{
    return guarded<void*>(nullptr, [&]() -> void* {
        context_check(cp, "clsopen_opt");
        return open_program(cp, text_program(source, "clsopen_opt"), flags, "clsopen_opt", options);
    });
}

STDCL_API void* clsopen_named(CLCONTEXT* cp, const char* source, const char* name, int flags)
{
    return guarded<void*>(nullptr, [&]() -> void* {
        return open_program(cp, named_program(cp, source, name, "clsopen_named"), flags, "clsopen_named");
    });
}

STDCL_API const char* clbuildlog(CLCONTEXT* cp, void* handle, unsigned int devnum)
{
    return guarded<const char*>(nullptr, [&]() -> const char* {
        context_device(cp, devnum, "clbuildlog");
        std::shared_ptr<Program> p;
        {
            std::lock_guard<std::mutex> lock(cp->load_mu);
            p = find_handle(cp, handle, "clbuildlog");
        }
        std::lock_guard<std::mutex> build_lock(p->build_mu);
        if (!p->built)
            fail(STDCL_ESTATE, "clbuildlog: %s is not built yet (opened with CLLD_LAZY or CLLD_NOBUILD)",
                 p->name.c_str());
        if (devnum >= p->joined_logs.size()) return "";
        return p->joined_logs[devnum].c_str();
    });
}

STDCL_API void* clbuild(CLCONTEXT* cp, void* handle, const char* options, int flags)
{
    return guarded<void*>(nullptr, [&]() -> void* {
        context_check(cp, "clbuild");
        if (flags & ~kLoadFlags) fail(STDCL_EINVAL, "clbuild: unknown flags 0x%x", unsigned(flags));
        std::shared_ptr<Program> p;
        {
            std::lock_guard<std::mutex> lock(cp->load_mu);
            p = find_handle(cp, handle, "clbuild");
        }
        std::lock_guard<std::mutex> build_lock(p->build_mu);
        if (!p->nobuild_pending)
            fail(STDCL_ESTATE, "clbuild: %s was not opened with CLLD_NOBUILD (or is already built)", p->name.c_str());
        {
            // Read by open_program's reuse test under load_mu.
            std::lock_guard<std::mutex> lock(cp->load_mu);
            p->user_options = options ? options : "";
        }
        try {
            build(*p);
        } catch (...) {
            std::lock_guard<std::mutex> lock(cp->load_mu);
            p->user_options.clear();
            throw;
        }
        return p.get();
    });
}

STDCL_API cl_kernel clsym(CLCONTEXT* cp, void* handle, const char* name, int flags)
{
    return guarded<cl_kernel>(nullptr, [&]() -> cl_kernel {
        context_check(cp, "clsym");
        if (!name || !*name) fail(STDCL_EINVAL, "clsym: the kernel name is NULL or empty");
        if (flags & ~kLoadFlags) fail(STDCL_EINVAL, "clsym: unknown flags 0x%x", unsigned(flags));
        if (handle) return program_kernel(cp, handle, name, "clsym")->per_group[0];
        std::vector<std::shared_ptr<Program>> progs;
        std::shared_ptr<Program> embedded;
        {
            std::lock_guard<std::mutex> lock(cp->load_mu);
            progs = cp->programs;
            for (auto& p : progs)
                if (p->embedded) embedded = p;
        }
        bool any = false;
        for (auto& p : progs) {
            if (p->nobuild_pending) continue;
            any = true;
            std::lock_guard<std::mutex> build_lock(p->build_mu);
            ensure_built(*p, "clsym");
            if (auto ki = kernel_of(*p, name)) return ki->per_group[0];
        }
        // Not among the open programs: try the embedded ones (opened once, for good).
        if (!embedded && !embedded_sources().empty()) {
            auto p = std::make_shared<Program>();
            for (const auto& e : embedded_sources()) {
                p->sources.push_back(e.text);
                p->unit_names.push_back("embedded '" + e.name + "'");
                p->origins.push_back("embedded '" + e.name + "'");
            }
            p->name = "the embedded kernels";
            p->embedded = true;
            p->key = content_key(p->sources) + "\n";
            p->cp = cp;
            {
                std::lock_guard<std::mutex> lock(cp->load_mu);
                for (auto& q : cp->programs)
                    if (q->embedded) embedded = q;
                if (!embedded) cp->programs.push_back(embedded = p);
            }
            std::lock_guard<std::mutex> build_lock(embedded->build_mu);
            ensure_built(*embedded, "clsym");
            if (auto ki = kernel_of(*embedded, name)) return ki->per_group[0];
        }
        fail(STDCL_ENOENT, "clsym: no kernel '%s' in any program open in %s%s", name, cp->label.c_str(),
             any ? "" : " (none is open)");
    });
}

STDCL_API int clclose(CLCONTEXT* cp, void* handle)
{
    return guarded_int([&] {
        context_check(cp, "clclose");
        std::shared_ptr<Program> p;
        {
            std::lock_guard<std::mutex> lock(cp->load_mu);
            p = find_handle(cp, handle, "clclose");
        }
        std::string name = p->name;
        drop_ref(cp, p);
        trace(Trace::load, "clclose: %s", name.c_str());
        return 0;
    });
}

}  // extern "C"
