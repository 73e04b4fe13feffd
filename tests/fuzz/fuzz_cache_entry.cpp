// SPDX-License-Identifier: MIT
// fuzz_cache_entry.cpp: the program cache's entry decoder
// (libstdcl/builds/cache_entry.cpp: decode_entry; cache_store.cpp: read_entry_header) and the key
// text every entry carries (cache_key.cpp: describe_key_change,
// key_source_digest), fed the bytes of one cache file: what a damaged,
// truncated or planted <64 hex>.clbin in the cache folder holds.
//
// Each input is decoded twice:
//   1. as it is.  Nearly every mutation then fails the trailing SHA-256,
//      which is the first thing checked after the fixed header;
//   2. "resealed": the key hash (bytes 32..63, when the key length fits) and
//      the trailing SHA-256 are recomputed first, so that the counts, tables
//      and lengths behind the checksum are fuzzed too.
// Checks, besides no crash and no sanitizer report:
//   - an entry that decodes re-encodes to exactly its bytes
//     (encode_entry(decode_entry(x)) == x: the format has one encoding);
//   - it decodes the same with its own key given, and not with another key;
//   - read_entry_header, on the same bytes as a file in a cache folder,
//     accepts every entry decode_entry accepts, and whatever it accepts it
//     reads as the bytes say (key hash, key text, origin, counts);
//   - describe_key_change of a key text with itself is empty.
#include "fuzz_common.hpp"

#include "builds/cache_key.hpp"
#include "builds/cache_store.hpp"
#include "helpers/digest.hpp"

#include <cstdint>
#include <cstring>
#include <string>

namespace {

constexpr std::size_t k_header = 64;  // the fixed header (cache_store.hpp)
constexpr std::size_t k_sum = 32;  // the trailing SHA-256

std::uint32_t u32_at(const std::string& b, std::size_t at)
{
    std::uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
    return v;
}

// A key text like the ones the library writes (cache_key.cpp), to compare
// the input's against.
const char k_reference_key[] =
    "stdcl program cache key v1\n"
    "library 1.0.0\n"
    "platform Portable Computing Language | OpenCL 3.0 PoCL 3.1\n"
    "device 0 cpu | GenuineIntel | OpenCL 3.0 PoCL HSTR | 3.1\n"
    "options \"-D\" \"__STDCL__\" \"-cl-kernel-arg-info\"\n"
    "env POCL_WORK_GROUP_METHOD=cbs\n"
    "source 5feceb66ffc86f38d952786c6d696c79c2dbc239dd4e91b46729d73a27fb57e9 1\n"
    "include \"val.h\" /k/val.h 6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b\n"
    "include <missing.h> missing\n";

// Recomputes the key hash and the trailing checksum (see the top).
std::string reseal(std::string b)
{
    if (b.size() < k_header + k_sum) return b;
    std::uint64_t klen = u32_at(b, 12);
    if (k_header + klen <= b.size() - k_sum) {
        unsigned char d[stdcl::digest_size];
        stdcl::digest(b.data() + k_header, static_cast<std::size_t>(klen), d);
        std::memcpy(&b[32], d, sizeof d);
    }
    unsigned char sum[stdcl::digest_size];
    stdcl::digest(b.data(), b.size() - k_sum, sum);
    std::memcpy(&b[b.size() - k_sum], sum, sizeof sum);
    return b;
}

// The folder read_entry_header reads from (the library's own CacheDir rules:
// owned by this user, mode 0700).
stdcl::CacheDir& cache_dir()
{
    static stdcl::CacheDir dir;
    if (!dir.is_open()) {
        std::string why;
        FUZZ_CHECK(stdcl::prepare_cache_dir(&dir, fuzz::scratch_dir() + "/cache", &why), "%s", why.c_str());
    }
    return dir;
}

void check_key_text(const std::string& text)
{
    FUZZ_CHECK(stdcl::describe_key_change(text, text).empty(), "a key text differs from itself");
    (void)stdcl::describe_key_change(k_reference_key, text);
    (void)stdcl::describe_key_change(text, k_reference_key);
    (void)stdcl::key_source_digest(text);
}

void check_entry(const std::string& bytes)
{
    stdcl::CacheEntry e;
    std::string why;
    bool ok = stdcl::decode_entry(bytes, std::string(), &e, &why);
    FUZZ_CHECK(ok || !why.empty(), "decode_entry failed without a reason");

    // The header reader, on the same bytes as a cache file.
    const std::string name = stdcl::entry_name(std::string(64, 'a'));
    std::string pub_why;
    FUZZ_CHECK(stdcl::publish_file(cache_dir(), name, bytes, &pub_why), "%s", pub_why.c_str());
    stdcl::EntryHeader h;
    std::string h_why;
    bool h_ok = stdcl::read_entry_header(cache_dir(), name, &h, &h_why);
    FUZZ_CHECK(h_ok || !ok, "read_entry_header refused an entry decode_entry accepts: %s", h_why.c_str());
    if (h_ok) {
        // What the bytes say, read here independently of the library.
        FUZZ_CHECK(bytes.size() >= k_header, "header read from %zu bytes", bytes.size());
        std::uint64_t klen = u32_at(bytes, 12), olen = u32_at(bytes, 16);
        FUZZ_CHECK(k_header + klen + olen <= bytes.size(), "header read past the end");
        FUZZ_CHECK(h.key_hex == stdcl::to_hex(reinterpret_cast<const unsigned char*>(bytes.data()) + 32, 32),
                   "key hash");
        FUZZ_CHECK(h.key_text == bytes.substr(k_header, klen), "key text");
        FUZZ_CHECK(h.origin == bytes.substr(k_header + klen, olen), "origin");
        FUZZ_CHECK(h.ndevices == u32_at(bytes, 20) && h.nblobs == u32_at(bytes, 24), "counts");
        check_key_text(h.key_text);
    }
    if (!ok) return;

    FUZZ_CHECK(stdcl::encode_entry(e) == bytes, "the entry does not re-encode to its bytes");
    FUZZ_CHECK(h.key_text == e.key_text && h.origin == e.origin, "header and entry disagree");
    FUZZ_CHECK(h.ndevices == e.device_blob.size() && h.nblobs == e.blobs.size(), "header and entry counts");
    for (std::uint32_t idx : e.device_blob) FUZZ_CHECK(idx < e.blobs.size(), "blob index %u", idx);
    FUZZ_CHECK(e.logs.empty() || e.logs.size() == e.device_blob.size(), "log count");

    stdcl::CacheEntry again;
    FUZZ_CHECK(stdcl::decode_entry(bytes, h.key_hex, &again, &why), "refused with its own key: %s", why.c_str());
    std::string other = h.key_hex;
    other[0] = other[0] == '0' ? '1' : '0';
    FUZZ_CHECK(!stdcl::decode_entry(bytes, other, &again, &why), "accepted with another key");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    std::string bytes(reinterpret_cast<const char*>(data), size);
    check_entry(bytes);
    std::string sealed = reseal(bytes);
    if (sealed != bytes) check_entry(sealed);
    return 0;
}
