// context.cpp: platform discovery, the default contexts (stddev, stdcpu, stdgpu, stdacc)
// created at load time and released at exit, the environment that steers them, and
// clcontext_create/destroy with the raw-object accessors.
#include "internal/core.hpp"
#include "internal/diag.hpp"
#include "internal/lease.hpp"

#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
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

std::string info_string(cl_platform_id p, cl_platform_info what)
{
    size_t n = 0;
    if (clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
    std::string s(n, '\0');
    clGetPlatformInfo(p, what, n, &s[0], nullptr);
    s.resize(strlen(s.c_str()));
    return s;
}

std::string info_string(cl_device_id d, cl_device_info what)
{
    size_t n = 0;
    if (clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
    std::string s(n, '\0');
    clGetDeviceInfo(d, what, n, &s[0], nullptr);
    s.resize(strlen(s.c_str()));
    return s;
}

bool icontains(const std::string& hay, const std::string& needle)
{
    if (needle.empty()) return false;
    auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end(),
                          [](char a, char b) { return std::tolower((unsigned char)a) == std::tolower((unsigned char)b); });
    return it != hay.end();
}

struct PlatformInfo {
    cl_platform_id id;
    std::string name, vendor;
};

std::vector<PlatformInfo> list_platforms()
{
    cl_uint n = 0;
    if (clGetPlatformIDs(0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
    std::vector<cl_platform_id> ids(n);
    if (clGetPlatformIDs(n, ids.data(), nullptr) != CL_SUCCESS) return {};
    std::vector<PlatformInfo> out;
    for (auto id : ids) out.push_back({id, info_string(id, CL_PLATFORM_NAME), info_string(id, CL_PLATFORM_VENDOR)});
    return out;
}

std::vector<cl_device_id> list_devices(cl_platform_id p, cl_device_type type)
{
    cl_uint n = 0;
    if (clGetDeviceIDs(p, type, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
    std::vector<cl_device_id> ids(n);
    if (clGetDeviceIDs(p, type, n, ids.data(), nullptr) != CL_SUCCESS) return {};
    return ids;
}

// The vendor macro a build gets, from the platform's and the device's vendor strings.
std::string vendor_macro(const std::string& plat_name, const std::string& plat_vendor, const std::string& dev_vendor)
{
    static const struct { const char* pattern; const char* macro; } known[] = {
        {"Portable Computing Language", "__POCL__"}, {"pocl", "__POCL__"},
        {"NVIDIA", "__NVIDIA__"}, {"Advanced Micro Devices", "__AMD__"}, {"AMD", "__AMD__"},
        {"Intel", "__INTEL__"}, {"Oclgrind", "__OCLGRIND__"}, {"Apple", "__APPLE__"},
        {"ARM", "__ARM__"}, {"Qualcomm", "__QUALCOMM__"}, {"Xilinx", "__XILINX__"}};
    for (const auto& k : known)
        if (icontains(plat_name, k.pattern) || icontains(plat_vendor, k.pattern)) return k.macro;
    for (const auto& k : known)
        if (icontains(dev_vendor, k.pattern)) return k.macro;
    // Unknown vendor: __VENDOR_<first word>__, letters and digits only.
    std::string word;
    for (char c : plat_vendor.empty() ? plat_name : plat_vendor) {
        if (std::isalnum((unsigned char)c)) word += char(std::toupper((unsigned char)c));
        else if (!word.empty()) break;
    }
    return word.empty() ? std::string() : "__VENDOR_" + word + "__";
}

// True when a USE_HOST_PTR buffer maps to the host pointer itself on this device,
// so the device works on host memory and clmsync has nothing to copy.
bool probe_zero_copy(cl_context ctx, cl_device_id dev, cl_command_queue q)
{
    cl_bool unified = CL_FALSE;
    if (clGetDeviceInfo(dev, CL_DEVICE_HOST_UNIFIED_MEMORY, sizeof unified, &unified, nullptr) != CL_SUCCESS || !unified)
        return false;
    void* host = nullptr;
    if (posix_memalign(&host, 4096, 4096) != 0) return false;
    bool same = false;
    cl_int err = CL_SUCCESS;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, 4096, host, &err);
    if (m && err == CL_SUCCESS) {
        void* p = clEnqueueMapBuffer(q, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, 4096, 0, nullptr, nullptr, &err);
        if (p && err == CL_SUCCESS) {
            same = (p == host);
            clEnqueueUnmapMemObject(q, m, p, 0, nullptr, nullptr);
            clFinish(q);
        }
        clReleaseMemObject(m);
    }
    free(host);
    return same;
}

const char* type_word(cl_device_type t)
{
    if (t & CL_DEVICE_TYPE_GPU) return "GPU";
    if (t & CL_DEVICE_TYPE_CPU) return "CPU";
    if (t & CL_DEVICE_TYPE_ACCELERATOR) return "ACC";
    return "OTHER";
}

// Builds a context over the given devices; throws on failure.
CLCONTEXT* make_context(const std::string& label, const PlatformInfo& plat, std::vector<cl_device_id> ids,
                        const std::string& why)
{
    std::unique_ptr<CLCONTEXT> cp(new CLCONTEXT);
    cp->label = label;
    cp->platform = plat.id;
    cp->platform_name = plat.name;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)plat.id, 0};
    cl_int err = CL_SUCCESS;
    cp->ctx = clCreateContext(props, cl_uint(ids.size()), ids.data(), nullptr, nullptr, &err);
    check_cl(err, "clCreateContext");
    const char* prof = std::getenv("COPRTHR_OPENCL_PROFILING_ENABLE");
    cl_command_queue_properties qprops = (prof && *prof && strcmp(prof, "0") != 0) ? CL_QUEUE_PROFILING_ENABLE : 0;
    std::string devlist;
    for (size_t i = 0; i < ids.size(); ++i) {
        Device d;
        d.id = ids[i];
        d.queue = clCreateCommandQueue(cp->ctx, d.id, qprops, &err);
        if (err != CL_SUCCESS) {
            for (auto& prev : cp->devs) clReleaseCommandQueue(prev.queue);
            clReleaseContext(cp->ctx);
            check_cl(err, "clCreateCommandQueue");
        }
        clGetDeviceInfo(d.id, CL_DEVICE_TYPE, sizeof d.type, &d.type, nullptr);
        d.name = info_string(d.id, CL_DEVICE_NAME);
        d.vendor_macro = vendor_macro(plat.name, plat.vendor, info_string(d.id, CL_DEVICE_VENDOR));
        cl_uint bits = 1024;
        clGetDeviceInfo(d.id, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits, nullptr);
        d.base_align = std::max<cl_uint>(bits / 8, 1);
        clGetDeviceInfo(d.id, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof d.max_alloc, &d.max_alloc, nullptr);
        clGetDeviceInfo(d.id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof d.global_mem, &d.global_mem, nullptr);
        cl_bool img = CL_FALSE;
        clGetDeviceInfo(d.id, CL_DEVICE_IMAGE_SUPPORT, sizeof img, &img, nullptr);
        d.image_support = img == CL_TRUE;
        d.zero_copy = probe_zero_copy(cp->ctx, d.id, d.queue);
        // Group devices of one type: they share build options.
        int g = -1;
        for (size_t j = 0; j < cp->devs.size(); ++j)
            if (strcmp(type_word(cp->devs[j].type), type_word(d.type)) == 0) g = cp->devs[j].group;
        if (g < 0) {
            g = int(cp->groups.size());
            cp->groups.emplace_back();
        }
        d.group = g;
        cp->groups[size_t(g)].push_back(d.id);
        devlist += strprintf("%s%u: %s (%s%s)", i ? ", " : "", unsigned(i), d.name.c_str(), type_word(d.type),
                             d.zero_copy ? ", zero-copy" : "");
        cp->devs.push_back(std::move(d));
    }
    cp->why = strprintf("%s: platform '%s' (%s), %zu device(s): %s; %s", label.c_str(), plat.name.c_str(),
                        plat.vendor.c_str(), ids.size(), devlist.c_str(), why.c_str());
    trace(Trace::ctx, "%s", cp->why.c_str());
    CLCONTEXT* raw = cp.release();
    std::unique_lock<std::shared_mutex> lock(contexts().mu);
    contexts().live.insert(raw);
    return raw;
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

CLCONTEXT* make_default(const std::vector<PlatformInfo>& plats, const char* X, const char* label, cl_device_type type)
{
    std::string var = std::string("STD") + X;
    std::string notes;
    const char* en = std::getenv(var.c_str());
    if (en) {
        if (strcmp(en, "0") == 0) {
            trace(Trace::ctx, "%s: disabled by %s=0", label, var.c_str());
            return nullptr;
        }
        if (strcmp(en, "1") != 0)
            warn_once(var.c_str(), "%s='%s' is not 0 or 1; ignored", var.c_str(), en);
        else
            notes += var + "=1; ";
    }
    std::string pvar = var + "_PLATFORM_NAME";
    std::vector<std::string> prefer;
    const char* pn = std::getenv(pvar.c_str());
    if (pn) prefer = split_list(pn, ',');
    Choice c = choose(plats, type, prefer, pvar.c_str(), pn ? pn : "", type == CL_DEVICE_TYPE_ALL);
    if (!c.plat) {
        trace(Trace::ctx, "%s: no device of this type on any platform", label);
        return nullptr;
    }
    notes += c.why;
    std::string mvar = var + "_MAX_NDEV";
    unsigned cap = unsigned(c.devs.size());
    if (const char* mv = std::getenv(mvar.c_str())) {
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
        return nullptr;
    try {
        CLCONTEXT* cp = make_context(label, *c.plat, c.devs, notes);
        cp->is_default = true;
        return cp;
    } catch (const Error& e) {
        warn_once(label, "%s: could not be created: %s", label, e.msg.c_str());
        return nullptr;
    }
}

void destroy_context(CLCONTEXT* cp)
{
    {
        std::unique_lock<std::shared_mutex> lock(contexts().mu);
        contexts().live.erase(cp);
    }
    for (auto& d : cp->devs) clFinish(d.queue);
    for (unsigned i = 0; i < cp->devs.size(); ++i) {
        auto& ev = *cp->devs[i].events;
        std::lock_guard<std::mutex> lock(ev.mu);
        for (cl_event e : ev.kernel) clReleaseEvent(e);
        for (cl_event e : ev.mem) clReleaseEvent(e);
        ev.kernel.clear();
        ev.mem.clear();
    }
    context_release_programs(cp);
    memory_forget_context(cp);
    for (auto& d : cp->devs) clReleaseCommandQueue(d.queue);
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

__attribute__((constructor)) void init_defaults()
{
    auto plats = list_platforms();
    if (plats.empty()) {
        trace(Trace::ctx, "no OpenCL platform found (check the ICD loader and /etc/OpenCL/vendors)");
    } else {
        for (const auto& p : plats) trace(Trace::ctx, "platform '%s' (%s)", p.name.c_str(), p.vendor.c_str());
    }
    stddev = make_default(plats, "DEV", "stddev", CL_DEVICE_TYPE_ALL);
    stdcpu = make_default(plats, "CPU", "stdcpu", CL_DEVICE_TYPE_CPU);
    stdgpu = make_default(plats, "GPU", "stdgpu", CL_DEVICE_TYPE_GPU);
    stdacc = make_default(plats, "ACC", "stdacc", CL_DEVICE_TYPE_ACCELERATOR);
    atexit(release_defaults);
}

}  // namespace

std::vector<std::string> split_list(const std::string& s, char sep)
{
    std::vector<std::string> out;
    size_t pos = 0;
    while (pos <= s.size()) {
        size_t end = s.find(sep, pos);
        if (end == std::string::npos) end = s.size();
        std::string w = s.substr(pos, end - pos);
        size_t a = w.find_first_not_of(" \t"), b = w.find_last_not_of(" \t");
        if (a != std::string::npos) out.push_back(w.substr(a, b - a + 1));
        pos = end + 1;
    }
    return out;
}

CLCONTEXT* context_check(CLCONTEXT* cp)
{
    if (!cp) fail(STDCL_EINVAL, "the context is NULL (no such devices, or disabled)%s", lease_null_reasons().c_str());
    if (cp == stdcpu || cp == stdgpu || cp == stddev || cp == stdacc) return cp;
    std::shared_lock<std::shared_mutex> lock(contexts().mu);
    if (!contexts().live.count(cp)) fail(STDCL_EINVAL, "%p is not a live libstdcl context", (void*)cp);
    return cp;
}

Device& context_device(CLCONTEXT* cp, unsigned devnum)
{
    context_check(cp);
    if (devnum >= cp->devs.size())
        fail(STDCL_EINVAL, "device number %u is out of range: %s has %zu device(s)", devnum, cp->label.c_str(),
             cp->devs.size());
    return cp->devs[devnum];
}

CLCONTEXT* context_of_cl(cl_context c)
{
    std::shared_lock<std::shared_mutex> lock(contexts().mu);
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
    return guarded<const char*>(nullptr, [&] { return context_check(cp)->why.c_str(); });
}

STDCL_API CLCONTEXT* clcontext_create(const char* platform_names, cl_device_type devtype, unsigned int max_ndev,
                                      int flags)
{
    return guarded<CLCONTEXT*>(nullptr, [&]() -> CLCONTEXT* {
        if (flags != 0) fail(STDCL_EINVAL, "clcontext_create: flags must be 0 (got %d)", flags);
        if (devtype == 0) fail(STDCL_EINVAL, "clcontext_create: devtype is 0");
        auto plats = list_platforms();
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
        return make_context("user context", *c.plat, c.devs, c.why);
    });
}

STDCL_API int clcontext_destroy(CLCONTEXT* cp)
{
    return guarded_int([&] {
        context_check(cp);
        if (cp->is_default) fail(STDCL_EINVAL, "clcontext_destroy: %s is a default context", cp->label.c_str());
        destroy_context(cp);
        return 0;
    });
}

STDCL_API cl_platform_id stdcl_platform(CLCONTEXT* cp)
{
    return guarded<cl_platform_id>(nullptr, [&] { return context_check(cp)->platform; });
}

STDCL_API cl_context stdcl_clcontext(CLCONTEXT* cp)
{
    return guarded<cl_context>(nullptr, [&] { return context_check(cp)->ctx; });
}

STDCL_API cl_device_id stdcl_device(CLCONTEXT* cp, unsigned int devnum)
{
    return guarded<cl_device_id>(nullptr, [&] { return context_device(cp, devnum).id; });
}

STDCL_API cl_command_queue stdcl_queue(CLCONTEXT* cp, unsigned int devnum)
{
    return guarded<cl_command_queue>(nullptr, [&] { return context_device(cp, devnum).queue; });
}

}  // extern "C"
