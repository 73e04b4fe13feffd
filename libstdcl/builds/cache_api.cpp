// SPDX-License-Identifier: MIT
// cache_api.cpp: the public face of the program cache on disk
// (include/stdcl_cache.h), over cache_store.hpp, for tools such as
// stdcl-cache: open a folder, list, stat, verify and clear it.
#include "stdcl_cache.h"

#include "builds/cache_store.hpp"
#include "helpers/diag.hpp"

#include <cstdint>
#include <deque>
#include <memory>
#include <string>

struct stdcl_cache {
    stdcl::CacheConfig cfg;
    stdcl::CacheDir dir;  // not open when the folder does not exist
    std::deque<std::string> notes;  // not yet handed out
    std::string note;  // the one last handed out
};

namespace stdcl {
namespace {

// The name of the first device in a key text ("device 0 NAME | ...").
std::string first_device(const std::string& key_text)
{
    std::size_t p = key_text.find("\ndevice 0 ");
    if (p == std::string::npos) return "?";
    p += 10;
    std::size_t e = key_text.find(" | ", p);
    std::size_t nl = key_text.find('\n', p);
    if (e == std::string::npos || e > nl) e = nl;
    return key_text.substr(p, e - p);
}

void take_notes(stdcl_cache* c)
{
    for (std::string& n : c->dir.take_notes()) c->notes.push_back(std::move(n));
}

void check_handle(const stdcl_cache* c, const char* call)
{
    if (!c) fail(STDCL_EINVAL, "%s: the cache handle is NULL", call);
}

stdcl_cache_entry entry_of(const EntryFile& f)
{
    stdcl_cache_entry e{};
    std::string key = f.name.substr(0, 64);
    key.copy(e.key, 64);
    e.key[64] = '\0';
    e.bytes = f.bytes;
    e.last_used = f.mtime;
    e.device = "?";
    e.origin = "";
    e.problem = f.odd;
    e.regular = f.odd ? 0 : 1;
    return e;
}

// Largest entry verify reads, as the library (a larger one is damaged).
constexpr std::uint64_t k_max_entry_bytes = 4ull << 30;

}  // namespace
}  // namespace stdcl

using namespace stdcl;

extern "C" {

STDCL_API const char* stdcl_cache_dir(void)
{
    return guarded<const char*>(nullptr, [&]() -> const char* {
        thread_local std::string dir;
        CacheConfig cfg = cache_config_from_env();
        if (cfg.dir.empty()) fail(STDCL_ENOENT, "stdcl_cache_dir: no cache folder (set STDCL_CACHE_DIR or HOME)");
        dir = cfg.dir;
        return dir.c_str();
    });
}

STDCL_API stdcl_cache* stdcl_cache_open(const char* dir)
{
    return guarded<stdcl_cache*>(nullptr, [&]() -> stdcl_cache* {
        auto c = std::make_unique<stdcl_cache>();
        c->cfg = cache_config_from_env();
        for (const std::string& w : c->cfg.warnings) c->notes.push_back("warning: " + w);
        if (dir) {
            if (!*dir) fail(STDCL_EINVAL, "stdcl_cache_open: the folder name is empty");
            c->cfg.dir = dir;
        }
        if (c->cfg.dir.empty()) fail(STDCL_ENOENT, "stdcl_cache_open: no cache folder (set STDCL_CACHE_DIR or HOME)");
        std::string why;
        if (!c->dir.open(c->cfg.dir, false, &why) && !c->dir.missing())
            fail(STDCL_EINVAL, "stdcl_cache_open: %s; not used as a cache folder", why.c_str());
        return c.release();
    });
}

STDCL_API void stdcl_cache_close(stdcl_cache* cache) { delete cache; }

STDCL_API int stdcl_cache_list(stdcl_cache* cache, stdcl_cache_entry_fn fn, void* arg)
{
    return guarded_int([&] {
        check_handle(cache, "stdcl_cache_list");
        if (!fn) fail(STDCL_EINVAL, "stdcl_cache_list: the callback is NULL");
        if (!cache->dir.is_open()) return 0;
        for (const EntryFile& f : list_entry_files(cache->dir, true)) {
            stdcl_cache_entry e = entry_of(f);
            EntryHeader h;
            std::string why, device;
            if (!f.odd) {
                if (read_entry_header(cache->dir, f.name, &h, &why)) {
                    device = first_device(h.key_text);
                    e.device = device.c_str();
                    e.origin = h.origin.c_str();
                    e.ndevices = h.ndevices;
                } else {
                    e.problem = why.c_str();
                }
            }
            if (int r = fn(&e, arg)) return r;
        }
        take_notes(cache);
        return 0;
    });
}

STDCL_API int stdcl_cache_stat(stdcl_cache* cache, stdcl_cache_info* info)
{
    return guarded_int([&] {
        check_handle(cache, "stdcl_cache_stat");
        if (!info) fail(STDCL_EINVAL, "stdcl_cache_stat: info is NULL");
        stdcl_cache_info s{};
        s.dir = cache->cfg.dir.c_str();
        s.enabled = cache->cfg.enabled;
        s.off_reason = cache->cfg.off_reason.c_str();
        s.max_bytes = cache->cfg.max_bytes;
        if (cache->dir.is_open()) {
            for (const EntryFile& f : list_entry_files(cache->dir)) {
                ++s.entries;
                s.bytes += f.bytes;
            }
            CacheStats st = read_stats(cache->dir);
            s.hits = st.hits;
            s.misses = st.misses;
        }
        *info = s;
        return 0;
    });
}

STDCL_API long stdcl_cache_verify(stdcl_cache* cache, int remove, stdcl_cache_entry_fn fn, void* arg)
{
    return guarded<long>(STDCL_EINVAL, [&]() -> long {
        try {
            check_handle(cache, "stdcl_cache_verify");
            if (!cache->dir.is_open()) return 0;
            long left = 0;
            for (const EntryFile& f : list_entry_files(cache->dir, true)) {
                stdcl_cache_entry e = entry_of(f);
                std::string bytes, why, device;
                CacheEntry ce;
                EntryHeader h;
                // Anything the library would not load is damaged here too.
                bool good = !f.odd &&
                    read_cache_file(cache->dir, f.name, k_max_entry_bytes, &bytes, &why) == ReadStatus::ok &&
                    decode_entry(bytes, e.key, &ce, &why);
                if (good) {
                    device = first_device(ce.key_text);
                    e.device = device.c_str();
                    e.origin = ce.origin.c_str();
                    e.ndevices = static_cast<unsigned>(ce.device_blob.size());
                } else {
                    if (!f.odd) e.problem = why.c_str();
                    std::string rm_why;
                    if (remove && remove_cache_file(cache->dir, f.name, &rm_why)) {
                        e.removed = 1;
                    } else {
                        ++left;
                        if (remove) {
                            why = std::string(e.problem) + " (not removed: " + rm_why + ")";
                            e.problem = why.c_str();
                        }
                    }
                }
                if (fn)
                    if (int r = fn(&e, arg)) return r;
            }
            take_notes(cache);
            return left;
        } catch (...) {
            return record_current_exception();
        }
    });
}

STDCL_API long stdcl_cache_clear(stdcl_cache* cache)
{
    return guarded<long>(STDCL_EINVAL, [&]() -> long {
        try {
            check_handle(cache, "stdcl_cache_clear");
            if (!cache->dir.is_open())
                fail(STDCL_ENOENT, "stdcl_cache_clear: %s does not exist", cache->cfg.dir.c_str());
            long n = clear_cache_dir(cache->dir);
            take_notes(cache);
            return n;
        } catch (...) {
            return record_current_exception();
        }
    });
}

STDCL_API const char* stdcl_cache_note(stdcl_cache* cache)
{
    return guarded<const char*>(nullptr, [&]() -> const char* {
        check_handle(cache, "stdcl_cache_note");
        take_notes(cache);
        if (cache->notes.empty()) return nullptr;
        cache->note = std::move(cache->notes.front());
        cache->notes.pop_front();
        return cache->note.c_str();
    });
}

}  // extern "C"
