// SPDX-License-Identifier: MIT
// cache_store.hpp: the program cache on disk: folder rules, entry format,
// atomic publication, per-key locks, LRU eviction and hit/miss counters.
//
// Shared by the library (program_cache.cpp) and the stdcl-cache tool; it
// knows nothing of OpenCL and prints nothing (callers report errors).
//
// Folder: $STDCL_CACHE_DIR, else $XDG_CACHE_HOME/stdcl, else ~/.cache/stdcl.
// STDCL_CACHE=0 turns the cache off; STDCL_CACHE_MAX bounds its size (bytes,
// with an optional K/M/G/T suffix; 0 means no bound; default 256M).
//
// Files in the folder:
//   <64 hex>.clbin   one entry: the binaries of one key (format below)
//   <64 hex>.lock    a process is building that key: it holds flock() on
//                    this file, and removes it when done (a file left by a
//                    process that died is unlocked, so nobody waits on it)
//   .tmp-*           an entry being written (renamed onto its .clbin)
//   stats            hit and miss counters (two little-endian u64)
//   evict.lock       flock-held while a process evicts
//
// Entry format, version 2 (integers little-endian; version 1 had no logs:
// its offset 28 was 0 and it is read as "other format version", a miss):
//   0   char[8]  magic "STDCLPC\x01"
//   8   u32      format version (2)
//   12  u32      key text length K
//   16  u32      origin length O
//   20  u32      device count D
//   24  u32      blob count B
//   28  u32      log count L: 0, or D (one compiler log per device)
//   32  u8[32]   SHA-256 of the key text (the file's name is its hex)
//   64  K bytes  key text;  O bytes origin (informational, not in the key)
//       D x u32  blob index of each device (identical binaries are stored once)
//       B x u64  blob sizes
//       L x u32  log lengths
//       blobs, concatenated;  logs, concatenated
//   end u8[32]   SHA-256 of every byte before it
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

namespace stdcl {

constexpr std::uint64_t cache_default_max_bytes = 256ull << 20;

struct CacheConfig {
    bool enabled = false;
    std::string dir;  // the folder (not yet checked for writing)
    std::uint64_t max_bytes = cache_default_max_bytes;  // 0: no bound
    std::string off_reason;  // why enabled is false
    std::vector<std::string> warnings;  // malformed variables (defaults used)
};

// Reads STDCL_CACHE, STDCL_CACHE_DIR, XDG_CACHE_HOME, HOME and STDCL_CACHE_MAX.
CacheConfig cache_config_from_env();

// The cache folder, open.  Every file of the cache is reached through this
// descriptor (openat/renameat/unlinkat/fstatat with O_NOFOLLOW,
// AT_SYMLINK_NOFOLLOW), never through a path string, so a symbolic link
// planted where a cache file should be is never followed: it is treated as
// a damaged file (replaced or skipped, and said in a note), and nothing
// outside the folder is created, written or removed.
//
// The folder's own path is resolved once, when it is opened: symbolic links
// in it, the last component included, are followed then (a user may point
// ~/.cache/stdcl at a bigger disk; Linux's fs.protected_symlinks already
// refuses a link planted in a sticky world-writable folder such as /tmp).
// What was opened must then be a folder owned by the effective user and not
// writable by its group or others (ccache's and pocl's rule): anyone else
// who can write in it could plant entries the library would load, or links.
// Since the descriptor is used from then on, renaming or replacing the path
// afterwards does not redirect the cache.
class CacheDir {
public:
    CacheDir() = default;
    ~CacheDir() { close(); }
    CacheDir(const CacheDir&) = delete;
    CacheDir& operator=(const CacheDir&) = delete;

    // Opens dir (with create: making it and its missing parents, mode 0700)
    // and checks its owner and mode.  False with a reason naming the folder;
    // missing() then says whether it does not exist.
    bool open(const std::string& dir, bool create, std::string* reason);
    void close();
    bool is_open() const { return fd_ >= 0; }
    bool missing() const { return missing_; }
    int fd() const { return fd_; }
    const std::string& path() const { return path_; }
    std::string path_of(const std::string& name) const { return path_ + "/" + name; }

    // What the store did that a user may want to know (a symbolic link
    // replaced, a file that is not a cache file left alone); the caller
    // traces or prints them.
    void note(std::string text) { notes_.push_back(std::move(text)); }
    std::vector<std::string> take_notes();

private:
    int fd_ = -1;
    bool missing_ = false;
    std::string path_;
    std::vector<std::string> notes_;
};

// Opens the folder (creating it) as CacheDir::open does and checks that a
// file can be created in it.  False with a reason otherwise.
bool prepare_cache_dir(CacheDir* dir, const std::string& path, std::string* reason);

// One decoded entry.
struct CacheEntry {
    std::string key_text;
    std::string origin;  // e.g. the kernel file's path
    std::vector<std::uint32_t> device_blob;  // per device: index into blobs
    std::vector<std::string> blobs;
    std::vector<std::string> logs;  // per device (or none): compiler logs
};

// The entry's bytes (blobs deduplicated by the caller or not; any layout that
// device_blob describes is valid).
std::string encode_entry(const CacheEntry& e);

// Decodes and verifies bytes (magic, version, lengths, checksum, and that
// the key text hashes to expect_key_hex unless that is empty).  Every length
// and count read from the bytes is checked against their size before it is
// used.  False with a short reason ("truncated", "checksum mismatch", "not
// an entry", ...).
bool decode_entry(const std::string& bytes, const std::string& expect_key_hex, CacheEntry* out, std::string* reason);

// Reads only an entry's header, key text and origin (no checksum check);
// reads no more than the file holds.
struct EntryHeader {
    std::string key_hex;  // from the header
    std::string key_text;
    std::string origin;
    std::uint32_t ndevices = 0;
    std::uint32_t nblobs = 0;
};
bool read_entry_header(const CacheDir& dir, const std::string& name, EntryHeader* out, std::string* reason);

// Names of the files of key key_hex.
std::string entry_name(const std::string& key_hex);
std::string lock_name(const std::string& key_hex);

// Whole-file read of a regular file of the folder, at most max_bytes.  It is
// opened with O_NOFOLLOW | O_NONBLOCK (a FIFO does not block) and checked
// with fstat before a byte is read.
enum class ReadStatus { ok, absent, not_regular, too_large, error };
ReadStatus read_cache_file(const CacheDir& dir, const std::string& name, std::uint64_t max_bytes, std::string* out,
                           std::string* reason);

// Writes bytes to a temporary file of the folder and renames it onto name,
// so that readers see the old file or the new one, never a part; a symbolic
// link or FIFO at name is replaced, not written through.  On failure (disk
// full, file size limit) the temporary is removed and reason says why.
bool publish_file(const CacheDir& dir, const std::string& name, const std::string& bytes, std::string* reason);

// Marks an entry as just used (its mtime is the LRU clock).  Best effort.
void touch_entry(const CacheDir& dir, const std::string& name);

// Removes one file of the folder (a link itself, never what it points to).
bool remove_cache_file(const CacheDir& dir, const std::string& name, std::string* reason);

// An exclusive lock on one key, held with flock() so the kernel frees it if
// the holder dies.  The lock file is removed by the holder on release; a
// waiter that wakes on a removed file retries on the new one.
class KeyLock {
public:
    KeyLock() = default;
    ~KeyLock() { release(); }
    KeyLock(const KeyLock&) = delete;
    KeyLock& operator=(const KeyLock&) = delete;

    // Waits up to timeout_s for the lock on file name of dir.  False on
    // error or timeout (then the caller goes on without it).  waited_ms
    // says how long it waited.  Something other than a regular file at name
    // (a symbolic link, dangling or not) is removed and noted in dir.
    bool acquire(CacheDir& dir, const std::string& name, double timeout_s, double* waited_ms, std::string* reason);
    void release();
    bool held() const { return fd_ >= 0; }

private:
    int fd_ = -1;
    int dirfd_ = -1;  // a duplicate of the folder's descriptor
    std::string name_;
};

// One file of the folder named like an entry.
struct EntryFile {
    std::string name;  // "<64 hex>.clbin"
    std::uint64_t bytes = 0;
    struct timespec mtime {};
    const char* odd = nullptr;  // not a regular file: what it is instead
};
// The regular entry files, least recently used first; with include_odd,
// also what has an entry's name but is not a regular file (last).
std::vector<EntryFile> list_entry_files(const CacheDir& dir, bool include_odd = false);

// Removes least-recently-used entries until the folder's entries take at
// most max_bytes (0: no bound), never the entry named keep.  Also removes
// temporaries older than an hour.  Skipped when another process is
// evicting.  Returns the names removed.
std::vector<std::string> evict_entries(CacheDir& dir, std::uint64_t max_bytes, const std::string& keep);

// Hit and miss counters.
struct CacheStats {
    std::uint64_t hits = 0;
    std::uint64_t misses = 0;
};
void record_stat(CacheDir& dir, bool hit);
CacheStats read_stats(const CacheDir& dir);

// Removes every entry, temporary, stats file and unheld lock file that is
// a regular file; anything else with such a name is left and noted.
// Returns the number of entries removed.
long clear_cache_dir(CacheDir& dir);

}  // namespace stdcl
