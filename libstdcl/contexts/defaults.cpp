// SPDX-License-Identifier: MIT
// defaults.cpp: the default contexts (stddev, stdcpu, stdgpu, stdacc): chosen
// as the environment says (STDDEV, STDGPU_PLATFORM_NAME, leases...), created at
// load time (a thread per platform; those over the same devices share one
// cl_context) and released at exit.
#include "contexts/lease.hpp"
#include "contexts/make.hpp"
#include "config/config.hpp"
#include "events/events.hpp"
#include "helpers/cl_util.hpp"
#include "helpers/diag.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <thread>

namespace stdcl {

namespace {

// Parses a positive decimal integer; false if malformed.
bool parse_count(const char* v, unsigned* out)
{
    if (!v || !*v) return false;
    char* end = nullptr;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || *end || n <= 0 || n > 1 << 20) return false;
    *out = unsigned(n);
    return true;
}

// One default context at load: what it is, then (plan_default) the platform and
// devices chosen for it, then (make_platform_defaults) the context built, or why not.
struct DefaultCtx {
    DefaultCtx(CLCONTEXT** s, const char* x, const char* l, cl_device_type t) : slot(s), X(x), label(l), type(t) {}
    CLCONTEXT** slot;
    const char* X;  // "DEV" for STDDEV...
    const char* label;
    cl_device_type type;
    const PlatformInfo* plat = nullptr;  // none: disabled, no such device, or failed
    std::vector<cl_device_id> devs;
    std::string notes;  // how they were chosen (stdcl_context_why)
    Made made;
    std::string failure;  // why made.cp is NULL though plat is set
};
using Defaults = std::array<DefaultCtx, 4>;

// The failure in flight, as the load report words it.
std::string creation_failure() noexcept
{
    try {
        try {
            throw;
        } catch (const Error& e) {
            return "could not be created: " + e.msg;
        } catch (const std::bad_alloc&) {
            return "could not be created: out of host memory";
        } catch (const std::exception& e) {
            return std::string("could not be created: ") + e.what();
        }
    } catch (...) {
        // Another exception, or no memory for the text.
    }
    return "could not be created";
}

// Whether STDX leaves the default context on (it is not STDX=0).
bool default_wanted(const char* X)
{
    const char* en = env_setting(std::string("STD") + X, nullptr);  // STDX, or its bare clause in STDX="0:..."
    return !en || strcmp(en, "0") != 0;
}

// Chooses d's platform and devices as the environment says (leases included);
// d.plat stays NULL when the context is off or has no devices.  Throws on failure.
void plan_default(const std::vector<PlatformInfo>& plats, DefaultCtx& d)
{
    std::string var = std::string("STD") + d.X;
    const char* label = d.label;
    std::string notes;
    const char* en = env_setting(var, nullptr);  // STDX, or its bare clause in STDX="1:max_ndev=2"
    if (en) {
        if (strcmp(en, "0") == 0) {
            trace(Trace::ctx, "%s: disabled by %s=0", label, var.c_str());
            return;
        }
        if (strcmp(en, "1") != 0)
            warn_once(var.c_str(), "%s='%s' is not 0 or 1; ignored", var.c_str(), en);
        else
            notes += var + "=1; ";
    }
    std::string pvar = var + "_PLATFORM_NAME";
    std::vector<std::string> prefer;
    const char* pn = env_setting(var, "platform_name");
    if (pn) prefer = split_list(pn, ',');
    Choice c = choose(plats, d.type, prefer, pvar.c_str(), pn ? pn : "", d.type == CL_DEVICE_TYPE_ALL);
    if (!c.plat) {
        trace(Trace::ctx, "%s: no device of this type on any platform", label);
        return;
    }
    notes += c.why;
    std::string mvar = var + "_MAX_NDEV";
    unsigned cap = unsigned(c.devs.size());
    if (const char* mv = env_setting(var, "max_ndev")) {
        unsigned n = 0;
        if (!parse_count(mv, &n)) {
            warn_once(mvar.c_str(), "%s='%s' is not a positive integer; ignored", mvar.c_str(), mv);
        } else {
            cap = std::min(cap, n);
            notes += strprintf("; %s=%u", mvar.c_str(), n);
        }
    }
    if (!lease_devices(var, label, c.plat->name, c.plat->vendor, list_devices(c.plat->id, CL_DEVICE_TYPE_ALL), c.devs,
                       cap, notes))
        return;
    d.devs = std::move(c.devs);
    d.notes = std::move(notes);
    d.plat = c.plat;
}

// Builds the planned default contexts of one platform, in the order given; one
// over the same devices as an earlier one that was built shares its cl_context.
// It writes only into its own entries and prints nothing (publish_defaults does),
// so the platforms' builds run in threads of their own and give what one thread
// gives.
void make_platform_defaults(const std::vector<DefaultCtx*>& mine) noexcept
{
    for (size_t i = 0; i < mine.size(); ++i) {
        DefaultCtx& d = *mine[i];
        const Made* share = nullptr;
        for (size_t j = 0; j < i && !share; ++j)
            if (mine[j]->made.cp && mine[j]->devs == d.devs) share = &mine[j]->made;
        try {
            d.made = build_context(d.label, *d.plat, d.devs, d.notes, nullptr, share);
        } catch (...) {
            d.failure = creation_failure();
        }
    }
}

// Whether the program names this library among its own dependencies (DT_NEEDED):
// then it was loaded before main, not by dlopen.  Inside dlopen the loader's lock
// is held while the library sets up, and a driver that a new thread makes take it
// (its thread-local storage, a library it loads) waits for it for ever.
bool linked_by_program() noexcept
{
    Dl_info self{};
    if (!dladdr(reinterpret_cast<void*>(&linked_by_program), &self) || !self.dli_fname) return false;
    const char* name = strrchr(self.dli_fname, '/');
    name = name ? name + 1 : self.dli_fname;
    struct Ask {
        const char* name;
        bool found;
    } ask{name, false};
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) -> int {
            auto* a = static_cast<Ask*>(data);
            const ElfW(Dyn)* dyn = nullptr;
            for (int i = 0; i < info->dlpi_phnum; ++i)
                if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
                    dyn = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
            if (!dyn) return 1;
            uintptr_t strtab = 0;
            for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d)
                if (d->d_tag == DT_STRTAB) strtab = uintptr_t(d->d_un.d_ptr);
            if (!strtab) return 1;
            if (strtab < info->dlpi_addr) strtab += info->dlpi_addr;  // not relocated in place
            for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d)
                if (d->d_tag == DT_NEEDED &&
                    strcmp(reinterpret_cast<const char*>(strtab + d->d_un.d_val), a->name) == 0)
                    a->found = true;
            return 1;  // the program is the first object: stop there
        },
        &ask);
    return ask.found;
}

// Builds the planned default contexts: the platforms' in parallel, one thread
// each, when the program was linked with the library (STDCL_LOAD_THREADS=1:
// always; 0: one after another in this thread).
void make_defaults(const std::vector<PlatformInfo>& plats, Defaults& defs) noexcept
{
    std::vector<std::vector<DefaultCtx*>> jobs;  // per platform with planned contexts, in platform order
    try {
        for (const auto& p : plats) {
            std::vector<DefaultCtx*> mine;
            for (auto& d : defs)
                if (d.plat == &p) mine.push_back(&d);
            if (!mine.empty()) jobs.push_back(std::move(mine));
        }
    } catch (...) {
        for (auto& d : defs)
            if (d.plat) d.failure = creation_failure();
        return;
    }
    if (jobs.empty()) return;
    std::vector<std::thread> threads;
    size_t spawned = 0;  // jobs[1..spawned] run in threads of their own
    int threaded = settings().load_threads;
    if (jobs.size() > 1 && threaded < 0) {
        threaded = linked_by_program();
        if (!threaded)
            trace(Trace::ctx, "loaded by dlopen: the default contexts of %zu platforms are made one after another",
                  jobs.size());
    }
    if (jobs.size() > 1 && threaded) {
        trace(Trace::ctx, "the default contexts of %zu platforms are made in parallel, a thread each", jobs.size());
        try {
            threads.reserve(jobs.size() - 1);
            for (size_t i = 1; i < jobs.size(); ++i) {
                threads.emplace_back(make_platform_defaults, std::cref(jobs[i]));
                spawned = i;
            }
        } catch (...) {
            // No more threads to be had: the rest run in this thread.
        }
    }
    make_platform_defaults(jobs[0]);
    for (size_t i = spawned + 1; i < jobs.size(); ++i) make_platform_defaults(jobs[i]);
    for (auto& t : threads) t.join();
}

// Publishes the default contexts built, in the order of defs, and records why the
// others that were planned are NULL: the messages and the live set are those of a
// load that built them one after another.
void publish_defaults(Defaults& defs) noexcept
{
    for (auto& d : defs) {
        if (!d.plat) continue;
        if (!d.made.cp) {
            note_load_failure(d.label, d.failure);
            continue;
        }
        try {
            CLCONTEXT* cp = publish_context(d.made);
            cp->is_default = true;
            *d.slot = cp;
        } catch (...) {
            note_load_failure(d.label, creation_failure());
        }
    }
}

void release_defaults_now()
{
    CLCONTEXT** all[] = {&stddev, &stdcpu, &stdgpu, &stdacc};
    for (auto pp : all) {
        CLCONTEXT* cp = *pp;
        if (!cp) continue;
        *pp = nullptr;
        destroy_context(cp);
    }
    profile_report_at_exit();  // STDCL_PROFILE: with the contexts the program did not release
}

void release_defaults()
{
    // Runs from atexit, registered after the OpenCL drivers initialised, so it runs
    // before their own exit handlers and before any shared library is unloaded.
    // glibc runs exit handlers while the program's other threads keep running:
    // while any of them is inside a libstdcl call, nothing is released (the
    // process is ending; the system takes its memory, the driver its objects),
    // and calls go on; otherwise later calls fail while the contexts go.
    if (!exit_begin()) {
        trace(Trace::ctx, "exit: %u call(s) in flight in other threads: the default contexts are not released",
              calls_elsewhere(nullptr));
        profile_report_at_exit();  // STDCL_PROFILE: the commands finished so far
        return;
    }
    // glibc has already run the exiting thread's thread_local destructors by now,
    // and some drivers (Oclgrind) keep per-thread state that their API calls use:
    // so the release runs in a fresh thread, where that state is new.
    try {
        std::thread t([] {
            exit_releasing_here();
            release_defaults_now();
        });
        t.join();
    } catch (...) {
        exit_releasing_here();
        release_defaults_now();  // no thread to be had: release here
    }
}

__attribute__((constructor)) void init_defaults() noexcept
{
    Defaults defs = {{{&stddev, "DEV", "stddev", CL_DEVICE_TYPE_ALL},
                      {&stdcpu, "CPU", "stdcpu", CL_DEVICE_TYPE_CPU},
                      {&stdgpu, "GPU", "stdgpu", CL_DEVICE_TYPE_GPU},
                      {&stdacc, "ACC", "stdacc", CL_DEVICE_TYPE_ACCELERATOR}}};
    std::vector<PlatformInfo> plats;
    try {
        settings();  // the environment, read once, before any context is made
        // Every default context off: no OpenCL call at all (listing the platforms
        // loads every vendor's driver); clcontext_create lists them when called,
        // and registers the profile's report at exit then.
        if (std::none_of(defs.begin(), defs.end(), [](const DefaultCtx& d) { return default_wanted(d.X); })) {
            for (const auto& d : defs) trace(Trace::ctx, "%s: disabled by STD%s=0", d.label, d.X);
            return;
        }
        plats = list_platforms();
        if (plats.empty()) trace(Trace::ctx, "no OpenCL platform found (check the ICD loader and /etc/OpenCL/vendors)");
        for (const auto& p : plats) {
            trace(Trace::ctx, "platform '%s' (%s)", p.name.c_str(), p.vendor.c_str());
            // A platform without any device is worth a word: PoCL, for one, reports
            // none when its cache folder (POCL_CACHE_DIR) cannot be written.
            if (list_devices(p.id, CL_DEVICE_TYPE_ALL).empty())
                note_load(("platform '" + p.name + "'").c_str(), "reports no devices (CL_DEVICE_NOT_FOUND)", false);
        }
    } catch (const Error& e) {
        note_load_failure("every default context", "the platforms could not be listed: " + e.msg);
        return;
    } catch (...) {
        note_load_failure("every default context", "the platforms could not be listed: out of host memory");
        return;
    }
    for (auto& d : defs) {
        try {
            plan_default(plats, d);
        } catch (...) {
            d.plat = nullptr;
            note_load_failure(d.label, creation_failure());
        }
    }
    make_defaults(plats, defs);
    publish_defaults(defs);
    if (stddev || stdcpu || stdgpu || stdacc || profile_report_wanted()) release_at_exit();
}

}  // namespace

// Registers release_defaults with atexit (make.hpp), once, after the platforms were listed:
// the drivers then have initialised, and their own exit handlers run after it.
void release_at_exit()
{
    static std::atomic<bool> registered{false};
    if (!registered.exchange(true)) atexit(release_defaults);
}

}  // namespace stdcl
