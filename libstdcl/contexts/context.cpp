// SPDX-License-Identifier: MIT
// context.cpp: the default contexts (stddev, stdcpu, stdgpu, stdacc)
// created at load time (a thread per platform; those over the same devices share one
// cl_context) and released at exit, the environment that steers them, and
// clcontext_create/destroy with the raw-object accessors.  What a platform and its
// devices are is found by platform.cpp.
#include "events/events.hpp"
#include "memory/memory.hpp"
#include "helpers/cl_util.hpp"
#include "config/config.hpp"
#include "helpers/diag.hpp"
#include "contexts/lease.hpp"
#include "contexts/platform.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <new>
#include <set>
#include <shared_mutex>
#include <thread>

using namespace stdcl;

extern "C" {
STDCL_API CLCONTEXT* stddev = nullptr;
STDCL_API CLCONTEXT* stdcpu = nullptr;
STDCL_API CLCONTEXT* stdgpu = nullptr;
STDCL_API CLCONTEXT* stdacc = nullptr;
STDCL_API CLCONTEXT* stdrpu = nullptr;
STDCL_API CLCONTEXT* stdnpu = nullptr;
}

namespace stdcl {

namespace {

// Live contexts, so a stale or foreign CLCONTEXT* is refused instead of read.
struct ContextSet {
    std::shared_mutex mu;
    std::set<CLCONTEXT*> live;
};
ContextSet& contexts()
{
    static ContextSet* s = new ContextSet;  // never destroyed: used during exit
    return *s;
}

// What went wrong while the default contexts were set up at load time, so that the
// first call given a NULL default context can say why it is NULL.
struct LoadReport {
    std::mutex mu;
    std::string text;
};
LoadReport& load_report()
{
    static LoadReport* r = new LoadReport;  // never destroyed: read during exit
    return *r;
}

}  // namespace

void note_load(const char* label, const std::string& msg, bool is_failure) noexcept
{
    try {
        std::string line = strprintf("%s: %s", label, msg.c_str());
        {
            std::lock_guard<std::mutex> lock(load_report().mu);
            std::string& t = load_report().text;
            if (t.find(line) != std::string::npos) return;  // said already (clcontext_create lists platforms too)
            t += (t.empty() ? "" : "; ") + line;
        }
        if (is_failure) warn_once(label, "%s is NULL: %s", label, msg.c_str());
        trace(Trace::ctx, "%s", line.c_str());
    } catch (...) {
        // Out of memory while reporting: nothing more can be said.
    }
}

namespace {

void note_load_failure(const char* label, const std::string& msg) noexcept { note_load(label, msg, true); }

// STDCL_ZERO_COPY=0: every device copies, as a device with its own memory does.
bool zero_copy_allowed() { return settings().zero_copy; }

// STDCL_OVERLAP=0: one queue per device (no transfer queue).
bool overlap_allowed() { return settings().overlap; }

const char* type_word(cl_device_type t) { return device_type_name(t).word; }

// A context built but not yet published (publish_context): no trace yet, not live, no
// profile.  probe_failure says why the zero-copy probe decided nothing ("" when it
// answered on every device, or did not run).
struct Made {
    CLCONTEXT* cp = nullptr;
    std::string probe_failure;
};

// Releases the queues of a context that was never published, and its hold on its
// cl_context.
void release_objects(CLCONTEXT* cp) noexcept
{
    for (auto& d : cp->devs) {
        if (d.xfer && d.xfer != d.queue) clReleaseCommandQueue(d.xfer);
        clReleaseCommandQueue(d.queue);
    }
    if (cp->ctx) clReleaseContext(cp->ctx);
}

// The properties of a device that do not depend on the context: its type, name,
// limits and zero-copy answer.
void copy_device_properties(Device& to, const Device& from)
{
    to.type = from.type;
    to.name = from.name;
    to.vendor_macro = from.vendor_macro;
    to.zero_copy = from.zero_copy;
    to.base_align = from.base_align;
    to.max_alloc = from.max_alloc;
    to.global_mem = from.global_mem;
    to.image_support = from.image_support;
}

// Builds a context over the given devices.  With `share` (a context over the same
// devices, in the same order) it holds share's cl_context (retained) instead of a
// new one, with queues of its own, and takes the device properties and zero-copy
// answers from share instead of querying and probing again.  Throws on failure,
// having released what it made.
Made build_context(const std::string& label, const PlatformInfo& plat, const std::vector<cl_device_id>& ids,
                   const std::string& why, const cl_context_properties* extra, const Made* share)
{
    Made made;
    std::unique_ptr<CLCONTEXT> cp(new CLCONTEXT);
    cp->label = label;
    cp->platform = plat.id;
    cp->platform_name = plat.name;
    cl_int err = CL_SUCCESS;
    if (share) {
        check_cl(clRetainContext(share->cp->ctx), "clRetainContext");
        cp->ctx = share->cp->ctx;
    } else {
        std::vector<cl_context_properties> props = {CL_CONTEXT_PLATFORM, (cl_context_properties)plat.id};
        for (size_t i = 0; extra && extra[i]; i += 2) {
            props.push_back(extra[i]);
            props.push_back(extra[i + 1]);
        }
        props.push_back(0);
        cp->ctx = clCreateContext(props.data(), cl_uint(ids.size()), ids.data(), nullptr, nullptr, &err);
        check_cl(err, "clCreateContext");
    }
    cl_command_queue_properties qprops = queue_profiling_wanted() ? CL_QUEUE_PROFILING_ENABLE : 0;
    try {
        std::string& probe_failure = made.probe_failure;
        cp->devs.reserve(ids.size());  // a queue is never made without its slot
        for (size_t i = 0; i < ids.size(); ++i) {
            Device d;
            d.id = ids[i];
            d.queue = clCreateCommandQueue(cp->ctx, d.id, qprops, &err);
            check_cl(err, "clCreateCommandQueue");
            cp->devs.push_back(std::move(d));
            Device& nd = cp->devs.back();
            if (share) {
                copy_device_properties(nd, share->cp->devs[i]);
                while (cp->mem_align < nd.base_align) cp->mem_align *= 2;
                continue;
            }
            device_info(nd.id, CL_DEVICE_TYPE, &nd.type);
            nd.name = info_string(nd.id, CL_DEVICE_NAME);
            nd.vendor_macro = vendor_macro(plat.name, plat.vendor, info_string(nd.id, CL_DEVICE_VENDOR));
            cl_uint bits = 1024;
            device_info(nd.id, CL_DEVICE_MEM_BASE_ADDR_ALIGN, &bits);
            nd.base_align = std::max<cl_uint>(bits / 8, 1);
            while (cp->mem_align < nd.base_align) cp->mem_align *= 2;
            device_info(nd.id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, &nd.max_alloc);
            device_info(nd.id, CL_DEVICE_GLOBAL_MEM_SIZE, &nd.global_mem);
            cl_bool img = CL_FALSE;
            device_info(nd.id, CL_DEVICE_IMAGE_SUPPORT, &img);
            nd.image_support = img == CL_TRUE;
            std::string why_not;
            int zc = zero_copy_allowed() ? probe_zero_copy(cp->ctx, nd.id, nd.queue, &why_not) : 0;
            nd.zero_copy = zc == 1;
            if (zc < 0 && probe_failure.empty())
                probe_failure = strprintf("the zero-copy probe failed on device %zu (%s)", i, why_not.c_str());
        }
        if (share) probe_failure = share->probe_failure;
        // A probe that failed decides nothing: the whole context takes the copy path,
        // which is right on every device (a mix would be decided by chance).
        if (!probe_failure.empty())
            for (auto& d : cp->devs) d.zero_copy = false;
        // A transfer queue beside the kernel queue where copies can overlap kernels.
        bool overlap = overlap_allowed();
        for (auto& d : cp->devs) {
            d.xfer = d.queue;
            if (d.zero_copy || !overlap) continue;
            cl_command_queue x = clCreateCommandQueue(cp->ctx, d.id, qprops, &err);
            check_cl(err, "clCreateCommandQueue (transfer queue)");
            d.xfer = x;
        }
        std::string devlist;
        for (size_t i = 0; i < cp->devs.size(); ++i) {
            Device& d = cp->devs[i];
            // Group devices of one type: they share build options.
            int g = -1;
            for (size_t j = 0; j < i; ++j)
                if (strcmp(type_word(cp->devs[j].type), type_word(d.type)) == 0) g = cp->devs[j].group;
            if (g < 0) {
                g = int(cp->groups.size());
                cp->groups.emplace_back();
            }
            d.group = g;
            cp->groups[size_t(g)].push_back(d.id);
            devlist += strprintf("%s%u: %s (%s%s)", i ? ", " : "", unsigned(i), d.name.c_str(), type_word(d.type),
                                 d.zero_copy ? ", zero-copy" : "");
        }
        if (!probe_failure.empty())
            devlist += "; copy mode: " + probe_failure;
        else if (!zero_copy_allowed())
            devlist += "; copy mode: STDCL_ZERO_COPY=0";
        cp->why = strprintf("%s: platform '%s' (%s), %zu device(s): %s; %s", label.c_str(), plat.name.c_str(),
                            plat.vendor.c_str(), ids.size(), devlist.c_str(), why.c_str());
        if (share) cp->why += "; shares the OpenCL context of " + share->cp->label;
    } catch (...) {
        release_objects(cp.get());
        throw;
    }
    made.cp = cp.release();
    return made;
}

// Publishes a built context: its probe warning and trace, the set of live contexts,
// its profile.  On failure releases the context and throws.
CLCONTEXT* publish_context(const Made& made)
{
    CLCONTEXT* cp = made.cp;
    try {
        if (!made.probe_failure.empty())
            warn_once(("probe " + cp->label).c_str(), "%s: %s; every device of the context copies (no zero-copy)",
                      cp->label.c_str(), made.probe_failure.c_str());
        trace(Trace::ctx, "%s", cp->why.c_str());
        std::unique_lock<std::shared_mutex> lock(contexts().mu);
        contexts().live.insert(cp);
    } catch (...) {
        release_objects(cp);
        delete cp;
        throw;
    }
    // Only now: a profile is listed for the report at exit, which reads the
    // context's queues, so it is made for a context that exists (noexcept).
    cp->prof = profile_start(cp);
    return cp;
}

// Builds and publishes a context of its own over the given devices; throws on failure.
CLCONTEXT* make_context(const std::string& label, const PlatformInfo& plat, const std::vector<cl_device_id>& ids,
                        const std::string& why, const cl_context_properties* extra)
{
    return publish_context(build_context(label, plat, ids, why, extra, nullptr));
}

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

struct Choice {
    const PlatformInfo* plat = nullptr;
    std::vector<cl_device_id> devs;
    std::string why;
};

// Picks a platform for devices of `type` following a priority list (may be empty).
Choice choose(const std::vector<PlatformInfo>& plats, cl_device_type type, const std::vector<std::string>& prefer,
              const char* prefer_var, const char* prefer_value, bool prefer_gpu_on_tie)
{
    Choice c;
    for (const auto& want : prefer) {
        for (const auto& p : plats) {
            if (!icontains(p.name, want) && !icontains(p.vendor, want)) continue;
            auto devs = list_devices(p.id, type);
            if (devs.empty()) continue;
            c.plat = &p;
            c.devs = devs;
            c.why = strprintf("%s matched '%s'", prefer_var, want.c_str());
            return c;
        }
    }
    if (!prefer.empty())
        warn_once(prefer_var, "%s='%s': no platform with such devices matches; using the default choice", prefer_var,
                  prefer_value);
    bool best_has_gpu = false;
    for (const auto& p : plats) {
        auto devs = list_devices(p.id, type);
        if (devs.empty()) continue;
        bool has_gpu = prefer_gpu_on_tie && !list_devices(p.id, CL_DEVICE_TYPE_GPU).empty();
        if (!c.plat || devs.size() > c.devs.size() || (devs.size() == c.devs.size() && has_gpu && !best_has_gpu)) {
            c.plat = &p;
            c.devs = devs;
            best_has_gpu = has_gpu;
        }
    }
    if (c.plat) c.why = "default: the platform with the most such devices";
    return c;
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

void destroy_context(CLCONTEXT* cp)
{
    {
        std::unique_lock<std::shared_mutex> lock(contexts().mu);
        contexts().live.erase(cp);
    }
    for (auto& d : cp->devs) {
        clFinish(d.queue);
        if (d.xfer != d.queue) clFinish(d.xfer);
    }
    profile_harvest(cp, -1, true);  // the profile's own event references, before the queues go
    for (unsigned i = 0; i < cp->devs.size(); ++i) {
        auto& ev = *cp->devs[i].events;
        std::lock_guard<std::mutex> lock(ev.mu);
        for (cl_event e : ev.kernel) clReleaseEvent(e);
        for (cl_event e : ev.mem) clReleaseEvent(e);
        ev.kernel.clear();
        ev.mem.clear();
        if (ev.marker) clReleaseEvent(ev.marker);
        ev.marker = nullptr;
    }
    // The kernels first: no kernel holds a memory object released below.
    context_release_programs(cp);
    reduce_forget_context(cp);
    wait_forget_context(cp);
    memory_forget_context(cp);
    for (auto& d : cp->devs) {
        if (d.xfer != d.queue) clReleaseCommandQueue(d.xfer);
        clReleaseCommandQueue(d.queue);
    }
    clReleaseContext(cp->ctx);
    delete cp;
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
    // glibc has already run the exiting thread's thread_local destructors by now,
    // and some drivers (Oclgrind) keep per-thread state that their API calls use:
    // so the release runs in a fresh thread, where that state is new.
    try {
        std::thread t(release_defaults_now);
        t.join();
    } catch (...) {
        release_defaults_now();  // no thread to be had: release here
    }
}

// Registers release_defaults with atexit, once, after the platforms were listed:
// the drivers then have initialised, and their own exit handlers run after it.
void release_at_exit()
{
    static std::atomic<bool> registered{false};
    if (!registered.exchange(true)) atexit(release_defaults);
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

CLCONTEXT* context_check(CLCONTEXT* cp, const char* call)
{
    const char* sep = call ? ": " : "";
    if (!call) call = "";
    if (!cp) {
        std::string report;
        {
            std::lock_guard<std::mutex> lock(load_report().mu);
            report = load_report().text;
        }
        if (!report.empty()) fail(STDCL_EINVAL, "%s%sthe context is NULL; at load time: %s", call, sep, report.c_str());
        fail(STDCL_EINVAL, "%s%sthe context is NULL (no such devices, or disabled)", call, sep);
    }
    if (cp == stdcpu || cp == stdgpu || cp == stddev || cp == stdacc) return cp;
    std::shared_lock<std::shared_mutex> lock(contexts().mu);
    if (!contexts().live.count(cp)) fail(STDCL_EINVAL, "%s%s%p is not a live libstdcl context", call, sep, (void*)cp);
    return cp;
}

Device& context_device(CLCONTEXT* cp, unsigned devnum, const char* call)
{
    context_check(cp, call);
    if (devnum >= cp->devs.size())
        fail(STDCL_EINVAL, "%s%sdevice number %u is out of range: %s has %zu device(s)", call ? call : "",
             call ? ": " : "", devnum, cp->label.c_str(), cp->devs.size());
    return cp->devs[devnum];
}

CLCONTEXT* context_of_cl(cl_context c)
{
    std::shared_lock<std::shared_mutex> lock(contexts().mu);
    for (CLCONTEXT* cp : {stddev, stdcpu, stdgpu, stdacc})
        if (cp && cp->ctx == c && contexts().live.count(cp)) return cp;
    for (CLCONTEXT* cp : contexts().live)
        if (cp->ctx == c) return cp;
    return nullptr;
}

}  // namespace stdcl

extern "C" {

STDCL_API void stdcl_init(void) {}

STDCL_API cl_uint clgetndev(CLCONTEXT* cp)
{
    return guarded<cl_uint>(0, [&] { return cp ? cl_uint(context_check(cp)->devs.size()) : 0u; });
}

STDCL_API const char* stdcl_context_why(CLCONTEXT* cp)
{
    // No call name: for a NULL context the message is the reason itself.
    return guarded<const char*>(nullptr, [&] { return context_check(cp)->why.c_str(); });
}

STDCL_API CLCONTEXT* clcontext_create(const char* platform_names, cl_device_type devtype, size_t max_ndev,
                                      cl_context_properties* ctxprop_ext, int flags)
{
    return guarded<CLCONTEXT*>(nullptr, [&]() -> CLCONTEXT* {
        if (flags != 0) fail(STDCL_EINVAL, "clcontext_create: flags must be 0 (got %d)", flags);
        if (devtype == 0) fail(STDCL_EINVAL, "clcontext_create: devtype is 0");
        for (size_t i = 0; ctxprop_ext && ctxprop_ext[i]; i += 2)
            if (ctxprop_ext[i] == CL_CONTEXT_PLATFORM)
                fail(STDCL_EINVAL,
                     "clcontext_create: ctxprop_ext holds CL_CONTEXT_PLATFORM (the platform is chosen "
                     "from platform_names)");
        auto plats = list_platforms();
        if (profile_report_wanted()) release_at_exit();  // the profile of contexts not destroyed
        std::vector<std::string> prefer;
        if (platform_names) prefer = split_list(platform_names, ',');
        Choice c;
        for (const auto& want : prefer)
            for (const auto& p : plats)
                if (!c.plat && (icontains(p.name, want) || icontains(p.vendor, want))) {
                    auto devs = list_devices(p.id, devtype);
                    if (!devs.empty()) c.plat = &p, c.devs = devs, c.why = "platform_names matched '" + want + "'";
                }
        if (!c.plat && !prefer.empty())
            fail(STDCL_ENOENT, "clcontext_create: no platform matching '%s' has such devices", platform_names);
        if (!c.plat) c = choose(plats, devtype, {}, "platform_names", "", devtype == CL_DEVICE_TYPE_ALL);
        if (!c.plat) fail(STDCL_ENOENT, "clcontext_create: no platform has devices of the requested type");
        if (max_ndev && c.devs.size() > max_ndev) c.devs.resize(max_ndev);
        return make_context("user context", *c.plat, c.devs, c.why, ctxprop_ext);
    });
}

STDCL_API int clcontext_destroy(CLCONTEXT* cp)
{
    return guarded_int([&] {
        context_check(cp, "clcontext_destroy");
        if (cp->is_default) fail(STDCL_EINVAL, "clcontext_destroy: %s is a default context", cp->label.c_str());
        destroy_context(cp);
        return 0;
    });
}

STDCL_API cl_platform_id stdcl_platform(CLCONTEXT* cp)
{
    return guarded<cl_platform_id>(nullptr, [&] { return context_check(cp, "stdcl_platform")->platform; });
}

STDCL_API cl_context stdcl_clcontext(CLCONTEXT* cp)
{
    return guarded<cl_context>(nullptr, [&] { return context_check(cp, "stdcl_clcontext")->ctx; });
}

STDCL_API size_t stdcl_mem_align(CLCONTEXT* cp)
{
    return guarded<size_t>(0, [&] { return context_check(cp, "stdcl_mem_align")->mem_align; });
}

STDCL_API cl_device_id stdcl_device(CLCONTEXT* cp, unsigned int devnum)
{
    return guarded<cl_device_id>(nullptr, [&] { return context_device(cp, devnum, "stdcl_device").id; });
}

}  // extern "C"
