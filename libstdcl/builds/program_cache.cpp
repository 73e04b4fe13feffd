// SPDX-License-Identifier: MIT
// program_cache.cpp: build_program(): looks a build up in the on-disk program
// cache before compiling, and stores what it compiles.
//
// A hit creates the program from the stored binaries (clCreateProgramWithBinary
// + clBuildProgram, milliseconds).  A miss takes the key's lock (so that of
// several processes missing the same key one compiles and the others wait),
// looks again, compiles with compile_program(), and publishes the binaries
// atomically.  A damaged, foreign or rejected entry is a miss and is
// replaced.  Anything that goes wrong with the cache itself falls back to a
// plain compile: the cache never makes a build fail.
#include "helpers/cl_util.hpp"
#include "builds/program_build.hpp"

#include "builds/cache_key.hpp"
#include "builds/cache_store.hpp"
#include "helpers/diag.hpp"
#include "helpers/digest.hpp"
#include "helpers/host_state.hpp"

#include "stdcl_version.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace stdcl {
namespace {

// How long a process waits for another one's build of the same key before
// compiling on its own.
constexpr double k_lock_timeout_s = 600.0;

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

std::string short_key(const std::string& key_hex) { return key_hex.substr(0, 16); }

std::string human_bytes(std::uint64_t n)
{
    char buf[32];
    if (n < 10 * 1024)
        std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(n));
    else if (n < 10ull * 1024 * 1024)
        std::snprintf(buf, sizeof buf, "%llu KiB", static_cast<unsigned long long>(n >> 10));
    else
        std::snprintf(buf, sizeof buf, "%llu MiB", static_cast<unsigned long long>(n >> 20));
    return buf;
}

// A key part the driver would not give: no key can be trusted, so the build goes
// on without the cache (build_program catches it).
struct KeyQueryFailed : std::runtime_error {
    using std::runtime_error::runtime_error;
};

void key_query(cl_int err, const char* what)
{
    if (err != CL_SUCCESS) throw KeyQueryFailed(strprintf("%s failed: %s (%d)", what, cl_error_name(err), int(err)));
}

std::string platform_info(cl_platform_id p, cl_platform_info what)
{
    std::string s;
    key_query(platform_string(p, what, &s), "clGetPlatformInfo");
    return s;
}

std::string device_info(cl_device_id d, cl_device_info what)
{
    std::string s;
    key_query(device_string(d, what, &s), "clGetDeviceInfo");
    return s;
}

using ProgramRef = ClRef<cl_program>;

// Runs bookkeeping (counters, traces, eviction) whose failure must not fail a
// build that succeeded.
template <class F> void quietly(F&& f) noexcept
{
    try {
        f();
    } catch (...) {}
}

// What the cache needs to know about one build.
struct KeyInfo {
    std::string text;
    std::string hex;
    bool identical_devices = false;  // every device has the same description
};

KeyInfo compute_key(const BuildRequest& req)
{
    KeyParts parts;
    parts.library = STDCL_VERSION_STRING;
    cl_platform_id platform = req.platform;
    if (!platform && !req.devices.empty())
        key_query(clGetDeviceInfo(req.devices[0], CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr),
                  "clGetDeviceInfo");
    parts.platform = platform
        ? platform_info(platform, CL_PLATFORM_NAME) + " | " + platform_info(platform, CL_PLATFORM_VERSION)
        : "?";
    for (cl_device_id d : req.devices)
        parts.devices.push_back(device_info(d, CL_DEVICE_NAME) + " | " + device_info(d, CL_DEVICE_VENDOR) + " | " +
                                device_info(d, CL_DEVICE_VERSION) + " | " + device_info(d, CL_DRIVER_VERSION));
    parts.env = compiler_environment();
    parts.source = req.source;
    parts.includes = scan_includes(req.source, search_dirs(req.options));
    // The -I folders matter only through the files found, which the key
    // holds; unless an include is computed (#include MACRO).
    bool computed = false;
    for (const IncludeRecord& r : parts.includes)
        computed = computed || (r.spelled.empty() || (r.spelled[0] != '"' && r.spelled[0] != '<'));
    parts.options = key_options(req.options, !computed);

    KeyInfo k;
    k.text = make_key_text(parts);
    k.hex = digest_hex(k.text);
    k.identical_devices = parts.devices.size() > 1;
    for (const std::string& d : parts.devices) k.identical_devices = k.identical_devices && d == parts.devices[0];
    return k;
}

// Traces what the store noted (a symbolic link replaced ...).
void trace_notes(CacheDir& dir)
{
    for (const std::string& n : dir.take_notes()) trace(Trace::cache, "%s", n.c_str());
}

// The cache's folder, opened, if it may be used now.  A folder that cannot
// be written, or that is not the user's own (another owner; writable by
// group or others: see CacheDir), turns the cache off for this process
// with one warning.  A usable folder is opened again for each build, so a
// folder removed meanwhile is made again.
bool usable_config(CacheConfig* cfg, CacheDir* dir)
{
    *cfg = cache_config_from_env();
    for (const std::string& w : cfg->warnings) warn_once(w.c_str(), "%s", w.c_str());
    if (!cfg->enabled) return false;
    static std::mutex m;
    static std::map<std::string, std::string> refused;  // folder -> why not
    std::string why;
    {
        std::lock_guard<std::mutex> lock(m);
        auto it = refused.find(cfg->dir);
        if (it != refused.end()) {
            why = it->second;
        } else if (!prepare_cache_dir(dir, cfg->dir, &why)) {
            if (why.empty()) why = "unusable";
            refused[cfg->dir] = why;
        }
    }
    if (!why.empty()) {
        std::string key = "program-cache-folder:" + cfg->dir;
        warn_once(key.c_str(), "program cache off: %s", why.c_str());
        cfg->enabled = false;
        cfg->off_reason = why;
        return false;
    }
    return true;
}

// Binaries of program for devices, in that order.  The program may hold
// more devices (a program from source holds the context's).
bool extract_binaries(cl_program program, const std::vector<cl_device_id>& devices, std::vector<std::string>* out,
                      std::string* why)
{
    cl_uint n = 0;
    cl_int err = clGetProgramInfo(program, CL_PROGRAM_NUM_DEVICES, sizeof n, &n, nullptr);
    if (err != CL_SUCCESS || n == 0) {
        *why = "CL_PROGRAM_NUM_DEVICES failed (" + std::to_string(err) + ")";
        return false;
    }
    std::vector<cl_device_id> pdev(n);
    std::vector<size_t> sizes(n);
    err = clGetProgramInfo(program, CL_PROGRAM_DEVICES, n * sizeof(cl_device_id), pdev.data(), nullptr);
    if (err == CL_SUCCESS)
        err = clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, n * sizeof(size_t), sizes.data(), nullptr);
    if (err != CL_SUCCESS) {
        *why = "CL_PROGRAM_BINARY_SIZES failed (" + std::to_string(err) + ")";
        return false;
    }
    std::vector<std::size_t> index(devices.size());
    std::vector<bool> wanted(n, false);
    for (std::size_t i = 0; i < devices.size(); ++i) {
        std::size_t j = 0;
        while (j < n && pdev[j] != devices[i]) ++j;
        if (j == n || sizes[j] == 0) {
            *why = "no binary for device " + std::to_string(i);
            return false;
        }
        index[i] = j;
        wanted[j] = true;
    }
    std::vector<std::string> bins(n);
    std::vector<unsigned char*> ptrs(n, nullptr);
    for (cl_uint j = 0; j < n; ++j) {
        // Every device gets a buffer: not all drivers accept NULL entries.
        bins[j].assign(sizes[j], '\0');
        ptrs[j] = sizes[j] ? reinterpret_cast<unsigned char*>(&bins[j][0]) : nullptr;
    }
    err = clGetProgramInfo(program, CL_PROGRAM_BINARIES, n * sizeof(unsigned char*), ptrs.data(), nullptr);
    if (err != CL_SUCCESS) {
        *why = "CL_PROGRAM_BINARIES failed (" + std::to_string(err) + ")";
        return false;
    }
    out->clear();
    for (std::size_t i = 0; i < devices.size(); ++i) out->push_back(bins[index[i]]);
    return true;
}

// One entry holding binaries (one per device, identical ones stored once).
CacheEntry make_entry(const KeyInfo& key, const std::string& origin, std::vector<std::string> binaries,
                      std::vector<std::string> logs = {})
{
    CacheEntry e;
    e.key_text = key.text;
    e.origin = origin;
    if (logs.size() == binaries.size()) e.logs = std::move(logs);
    for (std::string& b : binaries) {
        std::uint32_t idx = 0;
        while (idx < e.blobs.size() && e.blobs[idx] != b) ++idx;
        if (idx == e.blobs.size()) e.blobs.push_back(std::move(b));
        e.device_blob.push_back(idx);
    }
    return e;
}

// A program built from an entry's binaries, or nullptr (err set); *used: the
// options it was built with.
cl_program program_from_entry(const BuildRequest& req, const CacheEntry& e, cl_int* err, std::string* used)
{
    std::size_t n = req.devices.size();
    if (e.device_blob.size() != n) {
        *err = CL_INVALID_BINARY;
        return nullptr;
    }
    std::vector<size_t> lengths(n);
    std::vector<const unsigned char*> ptrs(n);
    for (std::size_t i = 0; i < n; ++i) {
        const std::string& b = e.blobs[e.device_blob[i]];
        lengths[i] = b.size();
        ptrs[i] = reinterpret_cast<const unsigned char*>(b.data());
    }
    std::vector<cl_int> status(n, CL_SUCCESS);
    cl_program p = clCreateProgramWithBinary(req.context, static_cast<cl_uint>(n), req.devices.data(), lengths.data(),
                                             ptrs.data(), status.data(), err);
    ProgramRef ref(p);
    if (!p || *err != CL_SUCCESS) {
        if (*err == CL_SUCCESS) *err = CL_INVALID_BINARY;
        return nullptr;
    }
    *err = build_binary(p, req, used);
    if (*err != CL_SUCCESS) return nullptr;
    return ref.release();
}

// Publishes an entry and keeps the folder within its bound.  A write that
// fails (disk full, file size limit, a folder in the entry's place) leaves
// no file behind and gives one warning; the build goes on uncached.
void store(const CacheConfig& cfg, CacheDir& dir, const KeyInfo& key, const CacheEntry& e, const char* verb)
{
    std::string bytes = encode_entry(e);
    if (cfg.max_bytes && bytes.size() > cfg.max_bytes) {
        trace(Trace::cache, "not stored %s: %s exceeds STDCL_CACHE_MAX", short_key(key.hex).c_str(),
              human_bytes(bytes.size()).c_str());
        return;
    }
    std::string why;
    if (!publish_file(dir, entry_name(key.hex), bytes, &why)) {
        warn_once(("program-cache-write:" + cfg.dir).c_str(), "program cache: %s", why.c_str());
        return;
    }
    trace(Trace::cache, "%s %s (%s)", verb, short_key(key.hex).c_str(), human_bytes(bytes.size()).c_str());
    for (const std::string& name : evict_entries(dir, cfg.max_bytes, entry_name(key.hex)))
        trace(Trace::cache, "evicted %s (least recently used; bound %s)", name.substr(0, 16).c_str(),
              human_bytes(cfg.max_bytes).c_str());
    trace_notes(dir);
}

// For a miss: which part of the key changed since the most recently used
// entry of the same program (same origin, else same source).  Reads entry
// headers only, and only when tracing.
std::string what_changed(const CacheDir& dir, const KeyInfo& key, const std::string& origin)
{
    if (!trace_on(Trace::cache)) return std::string();
    std::string src = key_source_digest(key.text);
    std::vector<EntryFile> files = list_entry_files(dir);  // oldest first
    for (auto it = files.rbegin(); it != files.rend(); ++it) {
        EntryHeader h;
        std::string why;
        if (it->name.compare(0, 64, key.hex) == 0) continue;
        if (!read_entry_header(dir, it->name, &h, &why)) continue;
        bool same_program = !origin.empty() ? h.origin == origin : key_source_digest(h.key_text) == src;
        if (!same_program) continue;
        std::string change = describe_key_change(h.key_text, key.text);
        if (change.empty()) continue;
        return "changed since entry " + short_key(h.key_hex) + ": " + change;
    }
    return std::string();
}

// The miss path, under the key's lock: compile and store.  When all
// devices are alike, compiles for the first only and loads its binary on
// the others (the compiler runs once instead of once per device).
BuildResult compile_and_store(const BuildRequest& req, const CacheConfig& cfg, CacheDir& dir, const KeyInfo& key,
                              const std::string& origin)
{
    auto t0 = Clock::now();
    BuildResult r;
    std::vector<std::string> bins;
    std::string why;
    bool have_bins = false;
    ProgramRef prog;  // released here if anything below throws
    if (key.identical_devices) {
        BuildRequest one = req;
        one.devices.assign(1, req.devices[0]);
        BuildResult r1 = compile_program(one);
        if (!r1.program) return r1;
        ProgramRef p1(r1.program);
        std::vector<std::string> b1;
        if (extract_binaries(p1.get(), one.devices, &b1, &why)) {
            bins.assign(req.devices.size(), b1[0]);
            if (!r1.logs.empty()) r.logs.assign(req.devices.size(), r1.logs[0]);
            CacheEntry e = make_entry(key, origin, bins);
            cl_int err = CL_SUCCESS;
            prog.reset(program_from_entry(req, e, &err, &r.options));
            if (prog.get())
                have_bins = true;
            else
                trace(Trace::cache, "binary of device 0 not accepted by the others (%d)", err);
        }
        if (!prog.get()) bins.clear();
    }
    if (!prog.get()) {
        r = compile_program(req);
        if (!r.program) return r;
        prog.reset(r.program);
        have_bins = extract_binaries(prog.get(), req.devices, &bins, &why);
    }
    r.status = CL_SUCCESS;
    double compile_ms = ms_since(t0);
    r.from_cache = false;
    if (!have_bins) {
        trace(Trace::cache, "compiled %s in %.0f ms; not stored: %s", short_key(key.hex).c_str(), compile_ms,
              why.c_str());
    } else {
        quietly([&] { store(cfg, dir, key, make_entry(key, origin, std::move(bins), r.logs), "stored"); });
        trace(Trace::cache, "compiled %s in %.0f ms", short_key(key.hex).c_str(), compile_ms);
    }
    r.program = prog.release();
    return r;
}

enum class Lookup { hit, absent, bad };

// The largest entry read (a larger file is damaged, not read into memory).
// Not STDCL_CACHE_MAX: an entry stored under a larger bound is still good.
constexpr std::uint64_t k_max_entry_bytes = 4ull << 30;

// Tries the entry of key; on success r holds the program.  Anything but a
// regular file of the right size, format and key is a damaged entry: not
// loaded, rebuilt and replaced.
Lookup try_entry(const BuildRequest& req, const CacheDir& dir, const KeyInfo& key, BuildResult* r, std::string* why)
{
    std::string name = entry_name(key.hex);
    std::string bytes;
    switch (read_cache_file(dir, name, k_max_entry_bytes, &bytes, why)) {
    case ReadStatus::ok: break;
    case ReadStatus::absent: *why = "no entry"; return Lookup::absent;
    case ReadStatus::not_regular:
    case ReadStatus::too_large:
        trace(Trace::cache, "entry %s is damaged (%s): rebuilding it", short_key(key.hex).c_str(), why->c_str());
        *why = "damaged entry: " + *why;
        return Lookup::bad;
    case ReadStatus::error: *why = "cannot read entry: " + *why; return Lookup::bad;
    }
    CacheEntry e;
    std::string reason;
    if (!decode_entry(bytes, key.hex, &e, &reason)) {
        *why = "damaged entry: " + reason;
        trace(Trace::cache, "entry %s is damaged (%s): rebuilding it", short_key(key.hex).c_str(), reason.c_str());
        return Lookup::bad;
    }
    cl_int err = CL_SUCCESS;
    ProgramRef p(program_from_entry(req, e, &err, &r->options));  // released here if anything below throws
    if (!p.get()) {
        *why = "driver rejected the stored binary (error " + std::to_string(err) + ")";
        trace(Trace::cache, "entry %s: %s: rebuilding it", short_key(key.hex).c_str(), why->c_str());
        return Lookup::bad;
    }
    quietly([&] { touch_entry(dir, name); });
    r->logs = std::move(e.logs);
    if (r->logs.size() != req.devices.size()) r->logs.assign(req.devices.size(), std::string());
    r->program = p.release();
    r->status = CL_SUCCESS;
    r->from_cache = true;
    return Lookup::hit;
}

BuildResult build_with_cache(const BuildRequest& req)
{
    auto t0 = Clock::now();
    CacheConfig cfg;
    CacheDir dir;
    if (req.devices.empty() || !usable_config(&cfg, &dir)) {
        if (!req.devices.empty()) trace(Trace::cache, "off (%s): compiling", cfg.off_reason.c_str());
        BuildResult r = compile_program(req);
        return r;
    }
    KeyInfo key = compute_key(req);
    double key_ms = ms_since(t0);
    const std::string& origin = req.origin;
    std::string label = origin.empty() ? std::string() : origin + ", ";
    label += std::to_string(req.devices.size()) + (req.devices.size() == 1 ? " device" : " devices");

    BuildResult r;
    std::string why;
    Lookup first = try_entry(req, dir, key, &r, &why);
    if (first == Lookup::hit) {
        quietly([&] {
            record_stat(dir, true);
            trace_notes(dir);
            trace(Trace::cache, "hit %s (%s; %.1f ms, key %.1f ms)", short_key(key.hex).c_str(), label.c_str(),
                  ms_since(t0), key_ms);
        });
        r.cache_on = true;
        return r;
    }

    // Miss: one process builds, the others wait for it and then hit.
    KeyLock lock;
    double waited_ms = 0;
    std::string lock_why;
    bool locked = lock.acquire(dir, lock_name(key.hex), k_lock_timeout_s, &waited_ms, &lock_why);
    trace_notes(dir);
    if (!locked) trace(Trace::cache, "building %s without its lock: %s", short_key(key.hex).c_str(), lock_why.c_str());
    // Look again under the lock: another process may have published the
    // entry while this one waited (or just before it locked).  A damaged
    // entry is not read twice unless someone else held the lock meanwhile.
    if (first == Lookup::absent || waited_ms > 1.0) {
        std::string why2;
        if (try_entry(req, dir, key, &r, &why2) == Lookup::hit) {
            quietly([&] {
                lock.release();
                record_stat(dir, true);
                trace_notes(dir);
                trace(Trace::cache, "hit %s (%s; built by another process, waited %.0f ms)", short_key(key.hex).c_str(),
                      label.c_str(), waited_ms);
            });
            r.cache_on = true;
            return r;
        }
        why = why2;
    }
    std::string change = why == "no entry" ? what_changed(dir, key, origin) : std::string();
    trace(Trace::cache, "miss %s (%s): %s", short_key(key.hex).c_str(), label.c_str(),
          change.empty() ? why.c_str() : change.c_str());
    r = compile_and_store(req, cfg, dir, key, origin);
    quietly([&] {
        lock.release();
        if (r.program) record_stat(dir, false);
        trace_notes(dir);
    });
    r.cache_on = true;
    return r;
}

}  // namespace

BuildResult build_program(const BuildRequest& req)
{
    try {
        return build_with_cache(req);
    } catch (const std::bad_alloc&) {
        BuildResult r;
        r.status = CL_OUT_OF_HOST_MEMORY;
        r.log = "out of host memory while looking up the program cache";
        return r;
    } catch (const std::exception& e) {
        trace(Trace::cache, "cache error (%s): compiling without it", e.what());
        BuildResult r = compile_program(req);
        return r;
    }
}

}  // namespace stdcl
