// stdcl-cache.cpp: looks after libstdcl's on-disk program cache.
//
//   stdcl-cache [-d DIR] list            one line per entry, least recently used first
//   stdcl-cache [-d DIR] stat            folder, entries, bytes, bound, hits, misses
//   stdcl-cache [-d DIR] verify [--remove]
//                                        checks every entry's checksum and key;
//                                        exit 1 if any is damaged (--remove
//                                        deletes those and exits 0 unless
//                                        one could not be removed)
//   stdcl-cache [-d DIR] clear           removes every entry and the counters
//   stdcl-cache [-d DIR] dir             prints the folder
//
// The folder is found as the library finds it: -d DIR, else STDCL_CACHE_DIR,
// else $XDG_CACHE_HOME/stdcl, else ~/.cache/stdcl.  STDCL_CACHE_MAX is shown
// by stat as the bound.  Needs no OpenCL.
//
// The tool keeps the library's rules (cache_store.hpp, CacheDir): it refuses
// a folder that is not the user's own or that others can write (exit 2),
// reaches every file through the folder's descriptor without following a
// symbolic link, and removes only regular files with a cache file's name
// (verify --remove also removes what has an entry's name but is not a
// regular file: the link itself, never what it points to).
#include "../libstdcl/internal/cache_store.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace {

void usage(FILE* to)
{
    std::fprintf(to,
                 "usage: stdcl-cache [-d DIR] list|stat|verify [--remove]|clear|dir\n"
                 "  list    entries, least recently used first\n"
                 "  stat    folder, entries, bytes, size bound, hits and misses\n"
                 "  verify  checks every entry (exit 1 if one is damaged;\n"
                 "          --remove deletes damaged ones)\n"
                 "  clear   removes every entry\n"
                 "  dir     prints the cache folder\n"
                 "The folder: -d DIR, else STDCL_CACHE_DIR, else $XDG_CACHE_HOME/stdcl,\n"
                 "else ~/.cache/stdcl.\n");
}

std::string human(std::uint64_t n)
{
    char buf[32];
    if (n < 10 * 1024)
        std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(n));
    else if (n < 10ull * 1024 * 1024)
        std::snprintf(buf, sizeof buf, "%.0f KiB", n / 1024.0);
    else if (n < 10ull * 1024 * 1024 * 1024)
        std::snprintf(buf, sizeof buf, "%.0f MiB", n / (1024.0 * 1024));
    else
        std::snprintf(buf, sizeof buf, "%.0f GiB", n / (1024.0 * 1024 * 1024));
    return buf;
}

std::string when(const struct timespec& t)
{
    char buf[32];
    struct tm tm;
    time_t s = t.tv_sec;
    localtime_r(&s, &tm);
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
    return buf;
}

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

// Prints what the store noted (files left alone ...).
void print_notes(stdcl::CacheDir& dir)
{
    for (const std::string& n : dir.take_notes()) std::fprintf(stderr, "stdcl-cache: %s\n", n.c_str());
}

int cmd_list(const stdcl::CacheDir& dir)
{
    std::vector<stdcl::EntryFile> files;
    if (dir.is_open()) files = stdcl::list_entry_files(dir, true);
    std::printf("%-16s  %9s  %-19s  %4s  %-28s  %s\n", "KEY", "SIZE", "LAST USED", "DEVS",
                "DEVICE", "ORIGIN");
    for (const stdcl::EntryFile& f : files) {
        stdcl::EntryHeader h;
        std::string why;
        if (f.odd) {
            std::printf("%-16.16s  %9s  %-19s  %4s  (%s, not a cache entry)\n", f.name.c_str(),
                        "-", when(f.mtime).c_str(), "?", f.odd);
            continue;
        }
        if (!stdcl::read_entry_header(dir, f.name, &h, &why)) {
            std::printf("%-16.16s  %9s  %-19s  %4s  (unreadable: %s)\n", f.name.c_str(),
                        human(f.bytes).c_str(), when(f.mtime).c_str(), "?", why.c_str());
            continue;
        }
        std::string dev = first_device(h.key_text);
        if (dev.size() > 28) dev = dev.substr(0, 25) + "...";
        std::printf("%-16.16s  %9s  %-19s  %4u  %-28s  %s\n", f.name.c_str(),
                    human(f.bytes).c_str(), when(f.mtime).c_str(), h.ndevices, dev.c_str(),
                    h.origin.empty() ? "-" : h.origin.c_str());
    }
    return 0;
}

int cmd_stat(const stdcl::CacheDir& dir, const stdcl::CacheConfig& cfg)
{
    std::vector<stdcl::EntryFile> files;
    stdcl::CacheStats s;
    if (dir.is_open()) {
        files = stdcl::list_entry_files(dir);
        s = stdcl::read_stats(dir);
    }
    std::uint64_t bytes = 0;
    for (const stdcl::EntryFile& f : files) bytes += f.bytes;
    std::printf("folder: %s\n", dir.path().c_str());
    std::printf("cache: %s\n", cfg.enabled ? "on" : ("off (" + cfg.off_reason + ")").c_str());
    std::printf("entries: %zu\n", files.size());
    std::printf("bytes: %llu (%s)\n", static_cast<unsigned long long>(bytes), human(bytes).c_str());
    if (cfg.max_bytes)
        std::printf("bound: %llu (%s)\n", static_cast<unsigned long long>(cfg.max_bytes),
                    human(cfg.max_bytes).c_str());
    else
        std::printf("bound: none\n");
    std::printf("hits: %llu\n", static_cast<unsigned long long>(s.hits));
    std::printf("misses: %llu\n", static_cast<unsigned long long>(s.misses));
    if (s.hits + s.misses)
        std::printf("hit rate: %.1f%%\n", 100.0 * s.hits / double(s.hits + s.misses));
    return 0;
}

int cmd_verify(const stdcl::CacheDir& dir, bool remove)
{
    std::vector<stdcl::EntryFile> files;
    if (dir.is_open()) files = stdcl::list_entry_files(dir, true);
    int good = 0, bad = 0, left = 0;  // left: damaged and still there
    for (const stdcl::EntryFile& f : files) {
        std::string bytes, why;
        stdcl::CacheEntry e;
        std::string key = f.name.substr(0, 64);
        // Anything the library would not load is damaged here too.
        if (stdcl::read_cache_file(dir, f.name, UINT64_MAX, &bytes, &why) ==
                stdcl::ReadStatus::ok &&
            stdcl::decode_entry(bytes, key, &e, &why)) {
            ++good;
            continue;
        }
        ++bad;
        std::string rm_why;
        bool removed = remove && stdcl::remove_cache_file(dir, f.name, &rm_why);
        if (!removed) ++left;
        std::printf("%.16s: damaged: %s%s%s%s\n", f.name.c_str(), why.c_str(),
                    removed ? " (removed)" : "", rm_why.empty() ? "" : " (",
                    rm_why.empty() ? "" : (rm_why + ")").c_str());
    }
    std::printf("%d good, %d damaged\n", good, bad);
    return left ? 1 : 0;
}

int cmd_clear(stdcl::CacheDir& dir)
{
    long n = stdcl::clear_cache_dir(dir);
    print_notes(dir);
    std::printf("removed %ld entr%s from %s\n", n, n == 1 ? "y" : "ies", dir.path().c_str());
    return 0;
}

}  // namespace

int main(int argc, char** argv)
{
    std::string dir;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; ++i) {
        if ((!std::strcmp(argv[i], "-d") || !std::strcmp(argv[i], "--dir")) && i + 1 < argc) {
            dir = argv[++i];
        } else if (!std::strcmp(argv[i], "-h") || !std::strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    std::string cmd = argv[i++];
    bool remove = false;
    for (; i < argc; ++i) {
        if (cmd == "verify" && !std::strcmp(argv[i], "--remove")) {
            remove = true;
        } else {
            usage(stderr);
            return 2;
        }
    }
    stdcl::CacheConfig cfg = stdcl::cache_config_from_env();
    for (const std::string& w : cfg.warnings) std::fprintf(stderr, "stdcl-cache: warning: %s\n", w.c_str());
    if (!dir.empty()) cfg.dir = dir;
    if (cfg.dir.empty()) {
        std::fprintf(stderr, "stdcl-cache: no cache folder (set STDCL_CACHE_DIR or HOME)\n");
        return 2;
    }
    if (cmd == "dir") {
        std::printf("%s\n", cfg.dir.c_str());
        return 0;
    }
    if (cmd != "list" && cmd != "stat" && cmd != "verify" && cmd != "clear") {
        usage(stderr);
        return 2;
    }
    // A folder that does not exist is an empty cache (clear: an error); one
    // that exists but is refused is an error for every command.
    stdcl::CacheDir d;
    std::string why;
    if (!d.open(cfg.dir, false, &why) && (!d.missing() || cmd == "clear")) {
        std::fprintf(stderr, "stdcl-cache: %s%s\n", why.c_str(),
                     d.missing() ? "" : "; not used as a cache folder");
        return 2;
    }
    if (cmd == "list") return cmd_list(d);
    if (cmd == "stat") return cmd_stat(d, cfg);
    if (cmd == "verify") return cmd_verify(d, remove);
    return cmd_clear(d);
}
