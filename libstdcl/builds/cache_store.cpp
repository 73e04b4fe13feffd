// SPDX-License-Identifier: MIT
// cache_store.cpp: the program cache's files: folder rules (the entry format is
// cache_entry.cpp's), atomic publication, flock-based key locks, LRU eviction, counters.
#include "builds/cache_store.hpp"
#include "builds/cache_format.hpp"
#include "config/config.hpp"

#include "helpers/digest.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <random>
#include <thread>

namespace stdcl {
namespace {

constexpr char k_entry_suffix[] = ".clbin";
constexpr char k_lock_suffix[] = ".lock";
constexpr char k_tmp_prefix[] = ".tmp-";

std::string errno_text(int e) { return std::strerror(e); }

bool ends_with(const std::string& s, const char* suffix)
{
    std::size_t n = std::strlen(suffix);
    return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

bool is_hex64(const std::string& s, std::size_t len)
{
    if (len != 64 || s.size() < 64) return false;
    for (std::size_t i = 0; i < 64; ++i) {
        char c = s[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    }
    return true;
}

bool is_entry_name(const std::string& name)
{
    return ends_with(name, k_entry_suffix) && is_hex64(name, name.size() - (sizeof k_entry_suffix - 1));
}

bool is_lock_name(const std::string& name)
{
    return ends_with(name, k_lock_suffix) && is_hex64(name, name.size() - (sizeof k_lock_suffix - 1));
}

bool is_tmp_name(const std::string& name) { return name.compare(0, sizeof k_tmp_prefix - 1, k_tmp_prefix) == 0; }

// A name no other writer (thread or process) can pick at the same time.
std::string unique_suffix()
{
    static std::atomic<unsigned long> counter{0};
    thread_local std::mt19937_64 rng{std::random_device{}() ^ static_cast<std::uint64_t>(getpid())};
    char buf[80];
    std::snprintf(buf, sizeof buf, "%ld-%lu-%llx", static_cast<long>(getpid()), counter.fetch_add(1),
                  static_cast<unsigned long long>(rng()));
    return buf;
}

bool write_all(int fd, const char* p, std::size_t n)
{
    while (n > 0) {
        ssize_t w = ::write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        p += w;
        n -= static_cast<std::size_t>(w);
    }
    return true;
}

// Makes dir and its missing parents, each with mode 0700.  Existing
// components are followed as they are (see CacheDir in the header).
bool mkdirs(const std::string& dir, std::string* reason)
{
    if (dir.empty()) {
        *reason = "empty path";
        return false;
    }
    std::string path;
    std::size_t pos = 0;
    while (pos != std::string::npos) {
        std::size_t next = dir.find('/', pos + 1);
        path = dir.substr(0, next);
        pos = next;
        if (path.empty() || path == "/") continue;
        struct stat st;
        if (::stat(path.c_str(), &st) == 0) {
            if (!S_ISDIR(st.st_mode)) {
                *reason = path + " is not a folder";
                return false;
            }
            continue;
        }
        if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
            *reason = "cannot create " + path + ": " + errno_text(errno);
            return false;
        }
    }
    return true;
}

// What is at name instead of a regular file, from its mode.
const char* kind_of(mode_t mode)
{
    if (S_ISLNK(mode)) return "a symbolic link";
    if (S_ISDIR(mode)) return "a folder";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
    return "not a regular file";
}

// Opens name in the folder dfd as a regular file: never through a symbolic
// link (O_NOFOLLOW: ELOOP), never blocking on a FIFO (O_NONBLOCK), and only
// if fstat says it is a regular file, with one link when opened for writing
// (a hard link could lead a write in place out of the folder).  Returns the descriptor, or -1 with
// errno set; *odd (when given) then says what is there instead of a regular
// file, or stays null when the failure is another one (ENOENT ...).
int open_regular(int dfd, const std::string& name, int flags, mode_t mode, const char** odd)
{
    if (odd) *odd = nullptr;
    int fd = ::openat(dfd, name.c_str(), flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode);
    if (fd < 0) {
        int e = errno;
        struct stat st;
        if ((e == ELOOP || e == EISDIR || e == ENXIO || e == EMLINK) &&
            ::fstatat(dfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(st.st_mode)) {
            if (odd) *odd = kind_of(st.st_mode);
        }
        errno = e;
        return -1;
    }
    struct stat st;
    if (::fstat(fd, &st) != 0) {
        int e = errno;
        ::close(fd);
        errno = e;
        return -1;
    }
    bool writes = (flags & O_ACCMODE) != O_RDONLY;
    if (!S_ISREG(st.st_mode) || (writes && st.st_nlink != 1)) {
        ::close(fd);
        if (odd) *odd = S_ISREG(st.st_mode) ? "a file with several links" : kind_of(st.st_mode);
        errno = EINVAL;
        return -1;
    }
    return fd;
}

// open_regular for a file the cache creates and rewrites (a lock, stats):
// something else in its place (a symbolic link, dangling or not; a FIFO) is
// removed and noted, and the file created afresh.  A folder in its place
// is not removed.
int open_own_file(CacheDir& dir, const std::string& name, int flags, std::string* reason)
{
    for (int attempt = 0;; ++attempt) {
        const char* odd = nullptr;
        int fd = open_regular(dir.fd(), name, flags | O_CREAT, 0600, &odd);
        if (fd >= 0) return fd;
        int e = errno;
        if (!odd || attempt > 0 || std::strcmp(odd, "a folder") == 0 || ::unlinkat(dir.fd(), name.c_str(), 0) != 0) {
            if (reason)
                *reason = odd ? dir.path_of(name) + " is " + odd + ", not a cache file"
                              : "cannot open " + dir.path_of(name) + ": " + errno_text(e);
            if (odd) dir.note(name + " is " + odd + ": not followed, left alone");
            errno = e;
            return -1;
        }
        dir.note(std::string("replaced ") + name + ": it was " + odd + " (not followed)");
    }
}

bool mtime_before(const EntryFile& a, const EntryFile& b)
{
    if (a.mtime.tv_sec != b.mtime.tv_sec) return a.mtime.tv_sec < b.mtime.tv_sec;
    if (a.mtime.tv_nsec != b.mtime.tv_nsec) return a.mtime.tv_nsec < b.mtime.tv_nsec;
    return a.name < b.name;
}

}  // namespace

CacheConfig cache_config_from_env()
{
    CacheConfig c;
    c.enabled = true;
    const char* on = env_value("STDCL_CACHE");
    switch (parse_switch(on)) {
    case Switch::off:
        c.enabled = false;
        c.off_reason = "STDCL_CACHE=0";
        break;
    case Switch::invalid:
        c.warnings.push_back(std::string("STDCL_CACHE='") + on +
                             "' is not on or off (1/0, on/off, yes/no, true/false); the program cache stays on");
        break;
    default: break;
    }
    if (const char* d = env_value("STDCL_CACHE_DIR"); d && *d) {
        c.dir = d;
    } else if (const char* x = env_value("XDG_CACHE_HOME"); x && x[0] == '/') {
        c.dir = std::string(x) + "/stdcl";
    } else if (const char* h = env_value("HOME"); h && *h) {
        c.dir = std::string(h) + "/.cache/stdcl";
    } else {
        struct passwd pw, *res = nullptr;
        char buf[4096];
        if (getpwuid_r(getuid(), &pw, buf, sizeof buf, &res) == 0 && res && res->pw_dir && res->pw_dir[0])
            c.dir = std::string(res->pw_dir) + "/.cache/stdcl";
    }
    while (c.dir.size() > 1 && c.dir.back() == '/') c.dir.pop_back();
    if (c.dir.empty() && c.enabled) {
        c.enabled = false;
        c.off_reason = "no cache folder (set STDCL_CACHE_DIR or HOME)";
    }
    if (const char* m = env_value("STDCL_CACHE_MAX"); m && *m) {
        std::uint64_t v;
        if (parse_size(m, &v))
            c.max_bytes = v;
        else
            c.warnings.push_back(std::string("STDCL_CACHE_MAX='") + m + "' is not a size such as 256M; using 256M");
    }
    return c;
}

std::vector<std::string> CacheDir::take_notes()
{
    std::vector<std::string> n;
    n.swap(notes_);
    return n;
}

void CacheDir::close()
{
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
}

bool CacheDir::open(const std::string& dir, bool create, std::string* reason)
{
    close();
    missing_ = false;
    path_ = dir;
    if (create && !mkdirs(dir, reason)) return false;
    // The one place the folder's path is resolved (see the header).
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        missing_ = errno == ENOENT;
        *reason = "cannot open " + dir + ": " + errno_text(errno);
        return false;
    }
    struct stat st;
    if (::fstat(fd, &st) != 0) {
        *reason = "cannot stat " + dir + ": " + errno_text(errno);
        ::close(fd);
        return false;
    }
    char buf[160];
    if (st.st_uid != ::geteuid()) {
        std::snprintf(buf, sizeof buf, " is owned by uid %ld, not by this user (uid %ld)", static_cast<long>(st.st_uid),
                      static_cast<long>(::geteuid()));
        *reason = dir + buf;
        ::close(fd);
        return false;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        std::snprintf(buf, sizeof buf, " is writable by %s (mode %04o)",
                      (st.st_mode & S_IWOTH) ? "others" : "its group", static_cast<unsigned>(st.st_mode & 07777));
        *reason = dir + buf;
        ::close(fd);
        return false;
    }
    fd_ = fd;
    return true;
}

bool prepare_cache_dir(CacheDir* dir, const std::string& path, std::string* reason)
{
    if (!dir->open(path, true, reason)) return false;
    std::string probe = std::string(k_tmp_prefix) + "probe-" + unique_suffix();
    int fd = ::openat(dir->fd(), probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        *reason = "cannot write in " + path + ": " + errno_text(errno);
        dir->close();
        return false;
    }
    ::close(fd);
    ::unlinkat(dir->fd(), probe.c_str(), 0);
    return true;
}

bool read_entry_header(const CacheDir& dir, const std::string& name, EntryHeader* out, std::string* reason)
{
    const char* odd = nullptr;
    int fd = open_regular(dir.fd(), name, O_RDONLY, 0, &odd);
    if (fd < 0) {
        *reason = odd ? std::string(odd) + ", not followed" : errno_text(errno);
        return false;
    }
    struct stat st;
    if (::fstat(fd, &st) != 0) {
        *reason = errno_text(errno);
        ::close(fd);
        return false;
    }
    // Reads in growing steps, never past the file's size: a header that
    // claims a huge key text is "truncated" without a huge allocation.
    const std::size_t file_size = static_cast<std::size_t>(st.st_size);
    std::string buf(std::min<std::size_t>(4096, file_size), '\0');
    std::size_t have = 0;
    bool ok = false;
    for (;;) {
        ssize_t r = buf.size() > have ? ::read(fd, &buf[have], buf.size() - have) : 0;
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            *reason = errno_text(errno);
            break;
        }
        have += static_cast<std::size_t>(r);
        std::size_t after;
        std::string why;
        if (parse_header(reinterpret_cast<const unsigned char*>(buf.data()), have, out, &after, &why)) {
            ok = true;
            break;
        }
        if (why != "truncated" || have >= file_size || (r == 0 && have < buf.size())) {
            *reason = why;
            break;
        }
        std::size_t want = std::min(file_size, buf.size() * 2);
        if (have >= k_header_size) {
            // The header says how much follows: more than the file holds is
            // "truncated" now, without reading on.
            const unsigned char* h = reinterpret_cast<const unsigned char*>(buf.data());
            std::uint64_t need = k_header_size + std::uint64_t(get_u32(h + 12)) + get_u32(h + 16);
            if (need > file_size) {
                *reason = "truncated";
                break;
            }
            want = static_cast<std::size_t>(need);
        }
        if (have == buf.size()) buf.resize(want);
    }
    ::close(fd);
    return ok;
}

std::string entry_name(const std::string& key_hex) { return key_hex + k_entry_suffix; }

std::string lock_name(const std::string& key_hex) { return key_hex + k_lock_suffix; }

ReadStatus read_cache_file(const CacheDir& dir, const std::string& name, std::uint64_t max_bytes, std::string* out,
                           std::string* reason)
{
    const char* odd = nullptr;
    int fd = open_regular(dir.fd(), name, O_RDONLY, 0, &odd);
    if (fd < 0) {
        int e = errno;
        if (odd) {
            *reason = std::string(odd) + ", not a regular file (not followed)";
            return ReadStatus::not_regular;
        }
        *reason = errno_text(e);
        return e == ENOENT ? ReadStatus::absent : ReadStatus::error;
    }
    struct stat st;
    if (::fstat(fd, &st) != 0) {
        *reason = errno_text(errno);
        ::close(fd);
        return ReadStatus::error;
    }
    if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
        *reason = "larger than " + std::to_string(max_bytes) + " bytes";
        ::close(fd);
        return ReadStatus::too_large;
    }
    ReadStatus status = ReadStatus::ok;
    try {
        out->assign(static_cast<std::size_t>(st.st_size), '\0');
        std::size_t have = 0;
        for (;;) {
            if (have == out->size()) {
                // The file grew since fstat: read on, within the bound.
                if (out->size() >= max_bytes) {
                    *reason = "larger than " + std::to_string(max_bytes) + " bytes";
                    status = ReadStatus::too_large;
                    break;
                }
                out->resize(static_cast<std::size_t>(std::min<std::uint64_t>(max_bytes, out->size() + 65536)));
            }
            ssize_t r = ::read(fd, &(*out)[have], out->size() - have);
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) {
                *reason = errno_text(errno);
                status = ReadStatus::error;
                break;
            }
            if (r == 0) break;
            have += static_cast<std::size_t>(r);
        }
        if (status == ReadStatus::ok) out->resize(have);
    } catch (const std::bad_alloc&) {
        *reason = "too large to read (" + std::to_string(st.st_size) + " bytes)";
        status = ReadStatus::too_large;
    }
    ::close(fd);
    if (status != ReadStatus::ok) out->clear();
    return status;
}

bool publish_file(const CacheDir& dir, const std::string& name, const std::string& bytes, std::string* reason)
{
    std::string tmp = std::string(k_tmp_prefix) + name + "-" + unique_suffix();
    int fd = ::openat(dir.fd(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        *reason = "cannot create " + dir.path_of(tmp) + ": " + errno_text(errno);
        return false;
    }
    bool ok = write_all(fd, bytes.data(), bytes.size());
    int e = errno;
    if (::close(fd) != 0 && ok) {
        ok = false;
        e = errno;
    }
    // renameat replaces whatever is at name (a link is replaced, not
    // followed); a folder there makes it fail.
    if (ok && ::renameat(dir.fd(), tmp.c_str(), dir.fd(), name.c_str()) != 0) {
        ok = false;
        e = errno;
    }
    if (!ok) {
        *reason = "cannot write " + dir.path_of(name) + ": " + errno_text(e);
        ::unlinkat(dir.fd(), tmp.c_str(), 0);
    }
    return ok;
}

void touch_entry(const CacheDir& dir, const std::string& name)
{
    ::utimensat(dir.fd(), name.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
}

bool remove_cache_file(const CacheDir& dir, const std::string& name, std::string* reason)
{
    if (::unlinkat(dir.fd(), name.c_str(), 0) == 0) return true;
    *reason = "cannot remove " + dir.path_of(name) + ": " + errno_text(errno);
    return false;
}

bool KeyLock::acquire(CacheDir& dir, const std::string& name, double timeout_s, double* waited_ms, std::string* reason)
{
    release();
    auto start = std::chrono::steady_clock::now();
    auto elapsed_s = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    int sleep_us = 1000;
    for (;;) {
        int fd = open_own_file(dir, name, O_RDWR, reason);
        if (fd < 0) break;
        bool locked = false;
        for (;;) {
            if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
                locked = true;
                break;
            }
            if (errno != EWOULDBLOCK && errno != EINTR) {
                *reason = "cannot lock " + dir.path_of(name) + ": " + errno_text(errno);
                break;
            }
            if (elapsed_s() > timeout_s) {
                *reason = "timed out waiting for " + dir.path_of(name);
                break;
            }
            std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
            sleep_us = std::min(sleep_us * 2, 20000);
        }
        if (!locked) {
            ::close(fd);
            break;
        }
        // The previous holder may have removed the file after we opened it:
        // then the lock we hold is on a dead inode; retry on the live one.
        struct stat held, live;
        if (::fstat(fd, &held) == 0 && ::fstatat(dir.fd(), name.c_str(), &live, AT_SYMLINK_NOFOLLOW) == 0 &&
            held.st_ino == live.st_ino && held.st_dev == live.st_dev) {
            dirfd_ = ::fcntl(dir.fd(), F_DUPFD_CLOEXEC, 0);
            if (dirfd_ < 0) {
                *reason = "cannot duplicate the folder's descriptor: " + errno_text(errno);
                ::close(fd);
                break;
            }
            fd_ = fd;
            name_ = name;
            if (waited_ms) *waited_ms = elapsed_s() * 1e3;
            return true;
        }
        ::close(fd);
    }
    if (waited_ms) *waited_ms = elapsed_s() * 1e3;
    return false;
}

void KeyLock::release()
{
    if (fd_ < 0) return;
    // Remove the file while still holding it, so no lock file outlives its
    // build; waiters on this inode notice and retry (see acquire).
    ::unlinkat(dirfd_, name_.c_str(), 0);
    ::close(fd_);
    ::close(dirfd_);
    fd_ = -1;
    dirfd_ = -1;
    name_.clear();
}

namespace {

// The names in the folder (a fresh open of ".", so the folder's own
// descriptor keeps no directory position).
std::vector<std::string> names_in(const CacheDir& dir)
{
    std::vector<std::string> names;
    int fd = ::openat(dir.fd(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return names;
    DIR* d = ::fdopendir(fd);
    if (!d) {
        ::close(fd);
        return names;
    }
    std::unique_ptr<DIR, int (*)(DIR*)> closer(d, ::closedir);  // closed if push_back throws too
    while (struct dirent* de = ::readdir(d)) names.push_back(de->d_name);
    return names;
}

}  // namespace

std::vector<EntryFile> list_entry_files(const CacheDir& dir, bool include_odd)
{
    std::vector<EntryFile> files, odd;
    for (const std::string& name : names_in(dir)) {
        if (!is_entry_name(name)) continue;
        struct stat st;
        if (::fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        EntryFile f;
        f.name = name;
        f.bytes = static_cast<std::uint64_t>(st.st_size);
        f.mtime = st.st_mtim;
        if (S_ISREG(st.st_mode)) {
            files.push_back(std::move(f));
        } else if (include_odd) {
            f.odd = kind_of(st.st_mode);
            odd.push_back(std::move(f));
        }
    }
    std::sort(files.begin(), files.end(), mtime_before);
    for (EntryFile& f : odd) files.push_back(std::move(f));
    return files;
}

std::vector<std::string> evict_entries(CacheDir& dir, std::uint64_t max_bytes, const std::string& keep)
{
    std::vector<std::string> removed;
    int fd = open_own_file(dir, "evict.lock", O_RDWR, nullptr);
    if (fd < 0) return removed;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        ::close(fd);
        return removed;
    }
    // Temporaries left by a process that died while writing.
    time_t now = ::time(nullptr);
    for (const std::string& name : names_in(dir)) {
        if (!is_tmp_name(name)) continue;
        struct stat st;
        if (::fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode) &&
            now - st.st_mtime > 3600)
            ::unlinkat(dir.fd(), name.c_str(), 0);
    }
    if (max_bytes > 0) {
        std::vector<EntryFile> files = list_entry_files(dir);  // oldest first
        std::uint64_t total = 0;
        for (const EntryFile& f : files) total += f.bytes;
        for (const EntryFile& f : files) {
            if (total <= max_bytes) break;
            if (f.name == keep) continue;
            if (::unlinkat(dir.fd(), f.name.c_str(), 0) == 0) {
                removed.push_back(f.name);
                total -= f.bytes;
            }
        }
    }
    ::close(fd);
    return removed;
}

void record_stat(CacheDir& dir, bool hit)
{
    int fd = open_own_file(dir, "stats", O_RDWR, nullptr);
    if (fd < 0) return;
    if (::flock(fd, LOCK_EX) == 0) {
        unsigned char b[16] = {0};
        ssize_t r = ::pread(fd, b, sizeof b, 0);
        std::uint64_t hits = r == 16 ? get_u64(b) : 0, misses = r == 16 ? get_u64(b + 8) : 0;
        (hit ? hits : misses) += 1;
        std::string out;
        put_u64(out, hits);
        put_u64(out, misses);
        if (::pwrite(fd, out.data(), out.size(), 0) != 16) { /* best effort */
        }
    }
    ::close(fd);
}

CacheStats read_stats(const CacheDir& dir)
{
    CacheStats s;
    int fd = open_regular(dir.fd(), "stats", O_RDONLY, 0, nullptr);
    if (fd < 0) return s;
    ::flock(fd, LOCK_SH);
    unsigned char b[16];
    if (::pread(fd, b, sizeof b, 0) == 16) {
        s.hits = get_u64(b);
        s.misses = get_u64(b + 8);
    }
    ::close(fd);
    return s;
}

long clear_cache_dir(CacheDir& dir)
{
    long removed = 0;
    for (const std::string& name : names_in(dir)) {
        bool entry = is_entry_name(name), lock = is_lock_name(name) || name == "evict.lock";
        if (!entry && !lock && !is_tmp_name(name) && name != "stats") continue;
        struct stat st;
        if (::fstatat(dir.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (!S_ISREG(st.st_mode)) {
            dir.note("left " + name + ": " + kind_of(st.st_mode) + ", not a cache file");
            continue;
        }
        if (lock) {
            // Only a lock nobody holds; removing a held one would let a
            // second builder in.
            int fd = open_regular(dir.fd(), name, O_RDWR, 0, nullptr);
            if (fd < 0) continue;
            if (::flock(fd, LOCK_EX | LOCK_NB) == 0) ::unlinkat(dir.fd(), name.c_str(), 0);
            ::close(fd);
        } else if (::unlinkat(dir.fd(), name.c_str(), 0) == 0 && entry) {
            ++removed;
        }
    }
    return removed;
}

}  // namespace stdcl
