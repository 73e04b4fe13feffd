// SPDX-License-Identifier: MIT
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
// It uses only the public API of include/stdcl_cache.h (stdcl_cache_open(3)),
// which keeps the library's rules: it refuses a folder that is not the
// user's own or that others can write (exit 2), reaches every file through
// the folder's descriptor without following a symbolic link, and removes
// only regular files with a cache file's name (verify --remove also removes
// what has an entry's name but is not a regular file: the link itself,
// never what it points to).
#include <stdcl_cache.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>

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

// Prints what the store noted (files left alone, malformed variables ...).
void print_notes(stdcl_cache* c)
{
    while (const char* n = stdcl_cache_note(c)) std::fprintf(stderr, "stdcl-cache: %s\n", n);
}

int fail(const char* what)
{
    std::fprintf(stderr, "stdcl-cache: %s: %s\n", what, clerror());
    return 2;
}

int list_one(const stdcl_cache_entry* e, void*)
{
    if (!e->regular) {
        std::printf("%-16.16s  %9s  %-19s  %4s  (%s, not a cache entry)\n", e->key, "-", when(e->last_used).c_str(),
                    "?", e->problem);
        return 0;
    }
    if (e->problem) {
        std::printf("%-16.16s  %9s  %-19s  %4s  (unreadable: %s)\n", e->key, human(e->bytes).c_str(),
                    when(e->last_used).c_str(), "?", e->problem);
        return 0;
    }
    std::string dev = e->device;
    if (dev.size() > 28) dev = dev.substr(0, 25) + "...";
    std::printf("%-16.16s  %9s  %-19s  %4u  %-28s  %s\n", e->key, human(e->bytes).c_str(), when(e->last_used).c_str(),
                e->ndevices, dev.c_str(), *e->origin ? e->origin : "-");
    return 0;
}

int cmd_list(stdcl_cache* c)
{
    std::printf("%-16s  %9s  %-19s  %4s  %-28s  %s\n", "KEY", "SIZE", "LAST USED", "DEVS", "DEVICE", "ORIGIN");
    if (stdcl_cache_list(c, list_one, nullptr) < 0) return fail("list");
    print_notes(c);
    return 0;
}

int cmd_stat(stdcl_cache* c)
{
    stdcl_cache_info s;
    if (stdcl_cache_stat(c, &s) < 0) return fail("stat");
    std::printf("folder: %s\n", s.dir);
    std::printf("cache: %s\n", s.enabled ? "on" : (std::string("off (") + s.off_reason + ")").c_str());
    std::printf("entries: %llu\n", static_cast<unsigned long long>(s.entries));
    std::printf("bytes: %llu (%s)\n", static_cast<unsigned long long>(s.bytes), human(s.bytes).c_str());
    if (s.max_bytes)
        std::printf("bound: %llu (%s)\n", static_cast<unsigned long long>(s.max_bytes), human(s.max_bytes).c_str());
    else
        std::printf("bound: none\n");
    std::printf("hits: %llu\n", static_cast<unsigned long long>(s.hits));
    std::printf("misses: %llu\n", static_cast<unsigned long long>(s.misses));
    if (s.hits + s.misses) std::printf("hit rate: %.1f%%\n", 100.0 * s.hits / double(s.hits + s.misses));
    return 0;
}

struct VerifyCount {
    int good = 0, bad = 0;
};

int verify_one(const stdcl_cache_entry* e, void* arg)
{
    VerifyCount* n = static_cast<VerifyCount*>(arg);
    if (!e->problem) {
        ++n->good;
        return 0;
    }
    ++n->bad;
    std::printf("%.16s: damaged: %s%s\n", e->key, e->problem, e->removed ? " (removed)" : "");
    return 0;
}

int cmd_verify(stdcl_cache* c, bool remove)
{
    VerifyCount n;
    long left = stdcl_cache_verify(c, remove, verify_one, &n);
    if (left < 0) return fail("verify");
    std::printf("%d good, %d damaged\n", n.good, n.bad);
    return left ? 1 : 0;
}

int cmd_clear(stdcl_cache* c)
{
    long n = stdcl_cache_clear(c);
    print_notes(c);
    if (n < 0) return fail("clear");
    stdcl_cache_info s;
    stdcl_cache_stat(c, &s);
    std::printf("removed %ld entr%s from %s\n", n, n == 1 ? "y" : "ies", s.dir);
    return 0;
}

}  // namespace

int main(int argc, char** argv)
{
    const char* dir = nullptr;
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
    if (cmd == "dir") {
        const char* d = dir ? dir : stdcl_cache_dir();
        if (!d) return fail("dir");
        std::printf("%s\n", d);
        return 0;
    }
    if (cmd != "list" && cmd != "stat" && cmd != "verify" && cmd != "clear") {
        usage(stderr);
        return 2;
    }
    // A folder that does not exist is an empty cache (clear: an error); one
    // that exists but is refused is an error for every command.
    stdcl_cache* c = stdcl_cache_open(dir);
    if (!c) {
        std::fprintf(stderr, "stdcl-cache: %s\n", clerror());
        return 2;
    }
    print_notes(c);  // malformed variables
    int status = cmd == "list" ? cmd_list(c)
        : cmd == "stat"        ? cmd_stat(c)
        : cmd == "verify"      ? cmd_verify(c, remove)
                               : cmd_clear(c);
    stdcl_cache_close(c);
    return status;
}
