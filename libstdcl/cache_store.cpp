// cache_store.cpp: the program cache's files: folder rules, entry format,
// atomic publication, flock-based key locks, LRU eviction, counters.
#include "internal/cache_store.hpp"

#include "internal/sha256.hpp"

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
#include <random>
#include <thread>

namespace stdcl {
namespace {

const char k_magic[8] = {'S', 'T', 'D', 'C', 'L', 'P', 'C', 1};
constexpr std::uint32_t k_format_version = 2;  // 2: compiler logs
constexpr std::size_t k_header_size = 64;
constexpr std::size_t k_sum_size = 32;
constexpr char k_entry_suffix[] = ".clbin";
constexpr char k_lock_suffix[] = ".lock";
constexpr char k_tmp_prefix[] = ".tmp-";

std::string errno_text(int e) { return std::strerror(e); }

void put_u32(std::string& s, std::uint32_t v)
{
    for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void put_u64(std::string& s, std::uint64_t v)
{
    for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint32_t get_u32(const unsigned char* p)
{
    return std::uint32_t(p[0]) | (std::uint32_t(p[1]) << 8) | (std::uint32_t(p[2]) << 16) |
           (std::uint32_t(p[3]) << 24);
}

std::uint64_t get_u64(const unsigned char* p)
{
    return std::uint64_t(get_u32(p)) | (std::uint64_t(get_u32(p + 4)) << 32);
}

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
    return ends_with(name, k_entry_suffix) &&
           is_hex64(name, name.size() - (sizeof k_entry_suffix - 1));
}

bool is_lock_name(const std::string& name)
{
    return ends_with(name, k_lock_suffix) &&
           is_hex64(name, name.size() - (sizeof k_lock_suffix - 1));
}

bool is_tmp_name(const std::string& name)
{
    return name.compare(0, sizeof k_tmp_prefix - 1, k_tmp_prefix) == 0;
}

// A name no other writer (thread or process) can pick at the same time.
std::string unique_suffix()
{
    static std::atomic<unsigned long> counter{0};
    thread_local std::mt19937_64 rng{std::random_device{}() ^
                                     static_cast<std::uint64_t>(getpid())};
    char buf[80];
    std::snprintf(buf, sizeof buf, "%ld-%lu-%llx", static_cast<long>(getpid()),
                  counter.fetch_add(1), static_cast<unsigned long long>(rng()));
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

bool equal_ci(const char* a, const char* b)
{
    for (; *a && *b; ++a, ++b)
        if (std::tolower(static_cast<unsigned char>(*a)) !=
            std::tolower(static_cast<unsigned char>(*b)))
            return false;
    return *a == *b;
}

bool mtime_before(const EntryFile& a, const EntryFile& b)
{
    if (a.mtime.tv_sec != b.mtime.tv_sec) return a.mtime.tv_sec < b.mtime.tv_sec;
    if (a.mtime.tv_nsec != b.mtime.tv_nsec) return a.mtime.tv_nsec < b.mtime.tv_nsec;
    return a.name < b.name;
}

}  // namespace

bool parse_size(const char* text, std::uint64_t* bytes)
{
    if (!text) return false;
    const char* p = text;
    while (*p == ' ') ++p;
    if (*p < '0' || *p > '9') return false;
    std::uint64_t v = 0;
    for (; *p >= '0' && *p <= '9'; ++p) {
        if (v > (UINT64_MAX - 9) / 10) return false;
        v = v * 10 + static_cast<std::uint64_t>(*p - '0');
    }
    int shift = 0;
    switch (*p) {
    case 'k': case 'K': shift = 10; ++p; break;
    case 'm': case 'M': shift = 20; ++p; break;
    case 'g': case 'G': shift = 30; ++p; break;
    case 't': case 'T': shift = 40; ++p; break;
    default: break;
    }
    if (shift && (*p == 'i' || *p == 'I')) {
        ++p;
        if (*p != 'b' && *p != 'B') return false;
    }
    if (*p == 'b' || *p == 'B') ++p;
    while (*p == ' ') ++p;
    if (*p != '\0') return false;
    if (shift && v > (UINT64_MAX >> shift)) return false;
    *bytes = v << shift;
    return true;
}

CacheConfig cache_config_from_env()
{
    CacheConfig c;
    c.enabled = true;
    if (const char* on = std::getenv("STDCL_CACHE"); on && *on) {
        if (!std::strcmp(on, "0") || equal_ci(on, "off") || equal_ci(on, "no") ||
            equal_ci(on, "false")) {
            c.enabled = false;
            c.off_reason = "STDCL_CACHE=0";
        } else if (std::strcmp(on, "1") && !equal_ci(on, "on") && !equal_ci(on, "yes") &&
                   !equal_ci(on, "true")) {
            c.warnings.push_back(std::string("STDCL_CACHE='") + on +
                                 "' is not 0 or 1; the program cache stays on");
        }
    }
    if (const char* d = std::getenv("STDCL_CACHE_DIR"); d && *d) {
        c.dir = d;
    } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x && x[0] == '/') {
        c.dir = std::string(x) + "/stdcl";
    } else if (const char* h = std::getenv("HOME"); h && *h) {
        c.dir = std::string(h) + "/.cache/stdcl";
    } else {
        struct passwd pw, *res = nullptr;
        char buf[4096];
        if (getpwuid_r(getuid(), &pw, buf, sizeof buf, &res) == 0 && res && res->pw_dir &&
            res->pw_dir[0])
            c.dir = std::string(res->pw_dir) + "/.cache/stdcl";
    }
    while (c.dir.size() > 1 && c.dir.back() == '/') c.dir.pop_back();
    if (c.dir.empty() && c.enabled) {
        c.enabled = false;
        c.off_reason = "no cache folder (set STDCL_CACHE_DIR or HOME)";
    }
    if (const char* m = std::getenv("STDCL_CACHE_MAX"); m && *m) {
        std::uint64_t v;
        if (parse_size(m, &v))
            c.max_bytes = v;
        else
            c.warnings.push_back(std::string("STDCL_CACHE_MAX='") + m +
                                 "' is not a size such as 256M; using 256M");
    }
    return c;
}

bool prepare_cache_dir(const std::string& dir, std::string* reason)
{
    if (!mkdirs(dir, reason)) return false;
    std::string probe = dir + "/" + k_tmp_prefix + "probe-" + unique_suffix();
    int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        *reason = "cannot write in " + dir + ": " + errno_text(errno);
        return false;
    }
    ::close(fd);
    ::unlink(probe.c_str());
    return true;
}

std::string encode_entry(const CacheEntry& e)
{
    std::string s;
    std::size_t payload = 0;
    for (const std::string& b : e.blobs) payload += b.size();
    s.reserve(k_header_size + e.key_text.size() + e.origin.size() + 4 * e.device_blob.size() +
              8 * e.blobs.size() + payload + k_sum_size);
    s.append(k_magic, sizeof k_magic);
    put_u32(s, k_format_version);
    put_u32(s, static_cast<std::uint32_t>(e.key_text.size()));
    put_u32(s, static_cast<std::uint32_t>(e.origin.size()));
    put_u32(s, static_cast<std::uint32_t>(e.device_blob.size()));
    put_u32(s, static_cast<std::uint32_t>(e.blobs.size()));
    put_u32(s, static_cast<std::uint32_t>(e.logs.size()));
    unsigned char key_sum[32];
    {
        Sha256 h;
        h.update(e.key_text);
        h.digest(key_sum);
    }
    s.append(reinterpret_cast<const char*>(key_sum), sizeof key_sum);
    s += e.key_text;
    s += e.origin;
    for (std::uint32_t idx : e.device_blob) put_u32(s, idx);
    for (const std::string& b : e.blobs) put_u64(s, b.size());
    for (const std::string& l : e.logs) put_u32(s, static_cast<std::uint32_t>(l.size()));
    for (const std::string& b : e.blobs) s += b;
    for (const std::string& l : e.logs) s += l;
    unsigned char sum[32];
    Sha256 h;
    h.update(s);
    h.digest(sum);
    s.append(reinterpret_cast<const char*>(sum), sizeof sum);
    return s;
}

namespace {

// Parses the fixed header and the variable-length fields after it, with
// every length checked against the file size.
bool parse_header(const unsigned char* p, std::size_t size, EntryHeader* h,
                  std::size_t* after, std::string* reason)
{
    if (size < sizeof k_magic || std::memcmp(p, k_magic, sizeof k_magic - 1) != 0) {
        *reason = size < sizeof k_magic ? "truncated" : "not a program-cache entry";
        return false;
    }
    if (static_cast<unsigned char>(p[7]) != static_cast<unsigned char>(k_magic[7]) ||
        (size >= 12 && get_u32(p + 8) != k_format_version)) {
        *reason = "other format version";
        return false;
    }
    if (size < k_header_size) {
        *reason = "truncated";
        return false;
    }
    std::uint64_t klen = get_u32(p + 12), olen = get_u32(p + 16);
    h->ndevices = get_u32(p + 20);
    h->nblobs = get_u32(p + 24);
    h->key_hex = to_hex(p + 32, 32);
    std::uint64_t need = k_header_size + klen + olen;
    if (need > size) {
        *reason = "truncated";
        return false;
    }
    h->key_text.assign(reinterpret_cast<const char*>(p) + k_header_size, klen);
    h->origin.assign(reinterpret_cast<const char*>(p) + k_header_size + klen, olen);
    *after = static_cast<std::size_t>(need);
    return true;
}

}  // namespace

bool decode_entry(const std::string& bytes, const std::string& expect_key_hex,
                  CacheEntry* out, std::string* reason)
{
    const unsigned char* p = reinterpret_cast<const unsigned char*>(bytes.data());
    std::size_t size = bytes.size();
    EntryHeader h;
    std::size_t pos = 0;
    if (!parse_header(p, size, &h, &pos, reason)) return false;
    if (size < pos + k_sum_size) {
        *reason = "truncated";
        return false;
    }
    std::size_t body_end = size - k_sum_size;
    // The checksum first: any damage anywhere shows here.
    unsigned char sum[32];
    {
        Sha256 s;
        s.update(p, body_end);
        s.digest(sum);
    }
    if (std::memcmp(sum, p + body_end, 32) != 0) {
        *reason = "checksum mismatch (truncated or damaged)";
        return false;
    }
    if (sha256_hex(h.key_text) != h.key_hex) {
        *reason = "key text does not match its hash";
        return false;
    }
    if (!expect_key_hex.empty() && h.key_hex != expect_key_hex) {
        *reason = "entry of another key (" + h.key_hex.substr(0, 16) + ")";
        return false;
    }
    std::uint32_t nlogs = get_u32(p + 28);
    if (nlogs != 0 && nlogs != h.ndevices) {
        *reason = "bad log count";
        return false;
    }
    std::uint64_t tables = 4ull * h.ndevices + 8ull * h.nblobs + 4ull * nlogs;
    if (tables > body_end - pos) {
        *reason = "bad device or blob count";
        return false;
    }
    out->key_text = std::move(h.key_text);
    out->origin = std::move(h.origin);
    out->device_blob.resize(h.ndevices);
    for (std::uint32_t i = 0; i < h.ndevices; ++i, pos += 4) {
        out->device_blob[i] = get_u32(p + pos);
        if (out->device_blob[i] >= h.nblobs) {
            *reason = "bad blob index";
            return false;
        }
    }
    std::vector<std::uint64_t> sizes(h.nblobs);
    std::uint64_t total = 0;
    for (std::uint32_t i = 0; i < h.nblobs; ++i, pos += 8) {
        sizes[i] = get_u64(p + pos);
        if (sizes[i] > body_end) {
            *reason = "bad blob size";
            return false;
        }
        total += sizes[i];
    }
    std::vector<std::uint32_t> log_sizes(nlogs);
    for (std::uint32_t i = 0; i < nlogs; ++i, pos += 4) {
        log_sizes[i] = get_u32(p + pos);
        total += log_sizes[i];
    }
    if (total != body_end - pos) {
        *reason = "blob sizes do not add up";
        return false;
    }
    out->blobs.resize(h.nblobs);
    for (std::uint32_t i = 0; i < h.nblobs; ++i) {
        out->blobs[i].assign(bytes, pos, static_cast<std::size_t>(sizes[i]));
        pos += static_cast<std::size_t>(sizes[i]);
    }
    out->logs.resize(nlogs);
    for (std::uint32_t i = 0; i < nlogs; ++i) {
        out->logs[i].assign(bytes, pos, log_sizes[i]);
        pos += log_sizes[i];
    }
    return true;
}

bool read_entry_header(const std::string& path, EntryHeader* out, std::string* reason)
{
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        *reason = errno_text(errno);
        return false;
    }
    std::string buf(4096, '\0');
    std::size_t have = 0;
    bool ok = false;
    for (;;) {
        ssize_t r = ::read(fd, &buf[have], buf.size() - have);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            *reason = errno_text(errno);
            break;
        }
        have += static_cast<std::size_t>(r);
        std::size_t after;
        std::string why;
        if (parse_header(reinterpret_cast<const unsigned char*>(buf.data()), have, out, &after,
                         &why)) {
            ok = true;
            break;
        }
        if (r == 0 || why != "truncated") {
            *reason = why;
            break;
        }
        if (have == buf.size()) {
            if (buf.size() >= (64u << 20)) {
                *reason = "header too large";
                break;
            }
            buf.resize(buf.size() * 2);
        }
    }
    ::close(fd);
    return ok;
}

std::string entry_path(const std::string& dir, const std::string& key_hex)
{
    return dir + "/" + key_hex + k_entry_suffix;
}

std::string lock_path(const std::string& dir, const std::string& key_hex)
{
    return dir + "/" + key_hex + k_lock_suffix;
}

bool read_file(const std::string& path, std::string* out, std::string* reason, bool* enoent)
{
    if (enoent) *enoent = false;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (enoent) *enoent = (errno == ENOENT);
        *reason = errno_text(errno);
        return false;
    }
    struct stat st;
    if (::fstat(fd, &st) != 0) {
        *reason = errno_text(errno);
        ::close(fd);
        return false;
    }
    out->assign(static_cast<std::size_t>(st.st_size), '\0');
    std::size_t have = 0;
    for (;;) {
        if (have == out->size()) out->resize(out->size() + 65536);
        ssize_t r = ::read(fd, &(*out)[have], out->size() - have);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            *reason = errno_text(errno);
            ::close(fd);
            return false;
        }
        if (r == 0) break;
        have += static_cast<std::size_t>(r);
    }
    out->resize(have);
    ::close(fd);
    return true;
}

bool publish_file(const std::string& dir, const std::string& name, const std::string& bytes,
                  std::string* reason)
{
    std::string tmp = dir + "/" + k_tmp_prefix + name + "-" + unique_suffix();
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
        *reason = "cannot create " + tmp + ": " + errno_text(errno);
        return false;
    }
    bool ok = write_all(fd, bytes.data(), bytes.size());
    int e = errno;
    if (::close(fd) != 0 && ok) {
        ok = false;
        e = errno;
    }
    if (ok && ::rename(tmp.c_str(), (dir + "/" + name).c_str()) != 0) {
        ok = false;
        e = errno;
    }
    if (!ok) {
        *reason = "cannot write " + dir + "/" + name + ": " + errno_text(e);
        ::unlink(tmp.c_str());
    }
    return ok;
}

void touch_entry(const std::string& path)
{
    ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);
}

bool KeyLock::acquire(const std::string& path, double timeout_s, double* waited_ms,
                      std::string* reason)
{
    release();
    auto start = std::chrono::steady_clock::now();
    auto elapsed_s = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    int sleep_us = 1000;
    for (;;) {
        int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0) {
            *reason = "cannot open " + path + ": " + errno_text(errno);
            break;
        }
        bool locked = false;
        for (;;) {
            if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
                locked = true;
                break;
            }
            if (errno != EWOULDBLOCK && errno != EINTR) {
                *reason = "cannot lock " + path + ": " + errno_text(errno);
                break;
            }
            if (elapsed_s() > timeout_s) {
                *reason = "timed out waiting for " + path;
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
        if (::fstat(fd, &held) == 0 && ::stat(path.c_str(), &live) == 0 &&
            held.st_ino == live.st_ino && held.st_dev == live.st_dev) {
            fd_ = fd;
            path_ = path;
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
    ::unlink(path_.c_str());
    ::close(fd_);
    fd_ = -1;
    path_.clear();
}

std::vector<EntryFile> list_entry_files(const std::string& dir)
{
    std::vector<EntryFile> files;
    DIR* d = ::opendir(dir.c_str());
    if (!d) return files;
    while (struct dirent* de = ::readdir(d)) {
        std::string name = de->d_name;
        if (!is_entry_name(name)) continue;
        EntryFile f;
        f.name = name;
        f.path = dir + "/" + name;
        struct stat st;
        if (::stat(f.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
        f.bytes = static_cast<std::uint64_t>(st.st_size);
        f.mtime = st.st_mtim;
        files.push_back(std::move(f));
    }
    ::closedir(d);
    std::sort(files.begin(), files.end(), mtime_before);
    return files;
}

std::vector<std::string> evict_entries(const std::string& dir, std::uint64_t max_bytes,
                                       const std::string& keep)
{
    std::vector<std::string> removed;
    std::string lock = dir + "/evict.lock";
    int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) return removed;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        ::close(fd);
        return removed;
    }
    // Temporaries left by a process that died while writing.
    if (DIR* d = ::opendir(dir.c_str())) {
        time_t now = ::time(nullptr);
        while (struct dirent* de = ::readdir(d)) {
            std::string name = de->d_name;
            if (!is_tmp_name(name)) continue;
            std::string path = dir + "/" + name;
            struct stat st;
            if (::stat(path.c_str(), &st) == 0 && now - st.st_mtime > 3600)
                ::unlink(path.c_str());
        }
        ::closedir(d);
    }
    if (max_bytes > 0) {
        std::vector<EntryFile> files = list_entry_files(dir);  // oldest first
        std::uint64_t total = 0;
        for (const EntryFile& f : files) total += f.bytes;
        for (const EntryFile& f : files) {
            if (total <= max_bytes) break;
            if (f.name == keep) continue;
            if (::unlink(f.path.c_str()) == 0) {
                removed.push_back(f.name);
                total -= f.bytes;
            }
        }
    }
    ::close(fd);
    return removed;
}

void record_stat(const std::string& dir, bool hit)
{
    std::string path = dir + "/stats";
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) return;
    if (::flock(fd, LOCK_EX) == 0) {
        unsigned char b[16] = {0};
        ssize_t r = ::pread(fd, b, sizeof b, 0);
        std::uint64_t hits = r == 16 ? get_u64(b) : 0, misses = r == 16 ? get_u64(b + 8) : 0;
        (hit ? hits : misses) += 1;
        std::string out;
        put_u64(out, hits);
        put_u64(out, misses);
        if (::pwrite(fd, out.data(), out.size(), 0) != 16) { /* best effort */ }
    }
    ::close(fd);
}

CacheStats read_stats(const std::string& dir)
{
    CacheStats s;
    int fd = ::open((dir + "/stats").c_str(), O_RDONLY | O_CLOEXEC);
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

long clear_cache_dir(const std::string& dir, std::string* reason)
{
    DIR* d = ::opendir(dir.c_str());
    if (!d) {
        *reason = "cannot read " + dir + ": " + errno_text(errno);
        return -1;
    }
    std::vector<std::string> names;
    while (struct dirent* de = ::readdir(d)) names.push_back(de->d_name);
    ::closedir(d);
    long removed = 0;
    for (const std::string& name : names) {
        std::string path = dir + "/" + name;
        if (is_entry_name(name)) {
            if (::unlink(path.c_str()) == 0) ++removed;
        } else if (is_tmp_name(name) || name == "stats") {
            ::unlink(path.c_str());
        } else if (is_lock_name(name) || name == "evict.lock") {
            // Only a lock nobody holds; removing a held one would let a
            // second builder in.
            int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
            if (fd < 0) continue;
            if (::flock(fd, LOCK_EX | LOCK_NB) == 0) ::unlink(path.c_str());
            ::close(fd);
        }
    }
    return removed;
}

}  // namespace stdcl
