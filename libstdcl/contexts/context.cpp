// SPDX-License-Identifier: MIT
// context.cpp: a context built over a platform's devices (its cl_context,
// queues and zero-copy answers), published in the set of live contexts and
// destroyed; clcontext_create/destroy and the raw-object accessors.  The
// default contexts are made and released by defaults.cpp; what a platform and
// its devices are is found by platform.cpp.
#include "events/events.hpp"
#include "memory/memory.hpp"
#include "helpers/cl_util.hpp"
#include "config/config.hpp"
#include "helpers/diag.hpp"
#include "contexts/make.hpp"
#include "contexts/platform.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>
#include <shared_mutex>
#include <thread>
#include <chrono>

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

void note_load_failure(const char* label, const std::string& msg) noexcept { note_load(label, msg, true); }

namespace {
// STDCL_ZERO_COPY=0: every device copies, as a device with its own memory does.
// STDCL_CHECK=sync: likewise, so that a device that works on host memory is
// checked exactly as one with memory of its own (which device's kernel wrote a
// page, which copy the host bytes are), and a laptop's verdicts are a GPU's.
bool zero_copy_allowed() { return settings().zero_copy && !settings().check_sync; }

// STDCL_OVERLAP=0: one queue per device (no transfer queue).
bool overlap_allowed() { return settings().overlap; }

const char* type_word(cl_device_type t) { return device_type_name(t).word; }


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

// Platforms whose driver starts a kernel enqueued without a clFlush, as
// bench/flush_probe finds (BENCHMARKS.md, Table 1.8): NVIDIA's OpenCL and PoCL.
// Any other keeps a clFlush after each NOWAIT launch.
bool driver_starts_unflushed(const std::string& platform)
{
    return platform == "NVIDIA CUDA" || platform == "Portable Computing Language";
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
}  // namespace

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
            nd.starts_unflushed = driver_starts_unflushed(plat.name);
            nd.wait = wait_policy_for(plat.name);
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
        else if (!settings().zero_copy)
            devlist += "; copy mode: STDCL_ZERO_COPY=0";
        else if (!zero_copy_allowed())
            devlist += "; copy mode: STDCL_CHECK=sync (each device a copy of its own)";
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

CLCONTEXT* publish_context(const Made& made)
{
    CLCONTEXT* cp = made.cp;
    try {
        if (!made.probe_failure.empty())
            warn_once(("probe " + cp->label).c_str(), "%s: %s; every device of the context copies (no zero-copy)",
                      cp->label.c_str(), made.probe_failure.c_str());
        trace(Trace::ctx, "%s", cp->why.c_str());
        if (!cp->devs.empty())
            trace(Trace::ctx, "%s: waits: %s (STDCL_WAIT)", cp->label.c_str(), wait_policy_name(cp->devs[0].wait));
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

namespace {

// Builds and publishes a context of its own over the given devices; throws on failure.
CLCONTEXT* make_context(const std::string& label, const PlatformInfo& plat, const std::vector<cl_device_id>& ids,
                        const std::string& why, const cl_context_properties* extra)
{
    return publish_context(build_context(label, plat, ids, why, extra, nullptr));
}

}  // namespace


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

void wait_for_calls(CLCONTEXT* cp) noexcept
{
    unsigned n = calls_elsewhere(cp);
    if (!n) return;
    trace(Trace::ctx, "%s: waiting for %u call(s) in flight in other threads before it is destroyed",
          cp->label.c_str(), n);
    for (int spins = 0; calls_elsewhere(cp); ++spins) {
        if (spins < 64)
            std::this_thread::yield();
        else
            std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
}

void destroy_context(CLCONTEXT* cp)
{
    {
        std::unique_lock<std::shared_mutex> lock(contexts().mu);
        contexts().live.erase(cp);
    }
    for (auto& d : cp->devs) {
        finish_queue(d, d.queue);
        if (d.xfer != d.queue) finish_queue(d, d.xfer);
    }
    profile_harvest(cp, -1, true);  // the profile's own event references, before the queues go
    for (unsigned i = 0; i < cp->devs.size(); ++i) {
        auto& ev = *cp->devs[i].events;
        std::lock_guard<std::mutex> lock(ev.mu);
        for (cl_event e : ev.kernel) clReleaseEvent(e);
        for (cl_event e : ev.mem) clReleaseEvent(e);
        for (cl_event e : ev.retired) clReleaseEvent(e);
        ev.kernel.clear();
        ev.mem.clear();
        ev.retired.clear();
        if (ev.marker) clReleaseEvent(ev.marker);
        ev.marker = nullptr;
    }
    // The kernels first: no kernel holds a memory object released below.
    context_release_programs(cp);
    prims_forget_context(cp);
    wait_forget_context(cp);
    memory_forget_context(cp);
    kernel_forget_cl_context(cp);  // the program's kernels: their arguments were unbound above
    for (auto& d : cp->devs) {
        if (d.xfer != d.queue) clReleaseCommandQueue(d.xfer);
        clReleaseCommandQueue(d.queue);
    }
    clReleaseContext(cp->ctx);
    delete cp;
}


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
    if (cp == stdcpu || cp == stdgpu || cp == stddev || cp == stdacc) {
        call_note_context(cp);
        return cp;
    }
    // Noted under the lock that clcontext_destroy takes to look for calls on cp.
    std::shared_lock<std::shared_mutex> lock(contexts().mu);
    if (!contexts().live.count(cp)) fail(STDCL_EINVAL, "%s%s%p is not a live libstdcl context", call, sep, (void*)cp);
    call_note_context(cp);
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

bool context_live(CLCONTEXT* cp)
{
    if (!cp) return false;
    call_note_context(cp);
    std::shared_lock<std::shared_mutex> lock(contexts().mu);
    return contexts().live.count(cp) != 0;
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
        {
            // Out of the live set first: no call passes context_check on cp from
            // here on.  Calls already past it noted cp (under the lock's shared
            // side); they end before anything of cp goes.
            std::unique_lock<std::shared_mutex> lock(contexts().mu);
            if (!contexts().live.erase(cp))
                fail(STDCL_EINVAL, "clcontext_destroy: %p is not a live libstdcl context", (void*)cp);
        }
        wait_for_calls(cp);
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
