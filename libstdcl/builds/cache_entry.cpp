// SPDX-License-Identifier: MIT
// cache_entry.cpp: a program-cache entry as bytes: its encoding, its header's
// parsing and its decoding with every length and checksum verified (the layout
// is in cache_format.hpp; the files are cache_store.cpp's).
#include "builds/cache_format.hpp"
#include "helpers/digest.hpp"

#include <cstring>

namespace stdcl {

std::string encode_entry(const CacheEntry& e)
{
    std::string s;
    std::size_t payload = 0;
    for (const std::string& b : e.blobs) payload += b.size();
    s.reserve(k_header_size + e.key_text.size() + e.origin.size() + 4 * e.device_blob.size() + 8 * e.blobs.size() +
              payload + k_sum_size);
    s.append(k_magic, sizeof k_magic);
    put_u32(s, k_format_version);
    put_u32(s, static_cast<std::uint32_t>(e.key_text.size()));
    put_u32(s, static_cast<std::uint32_t>(e.origin.size()));
    put_u32(s, static_cast<std::uint32_t>(e.device_blob.size()));
    put_u32(s, static_cast<std::uint32_t>(e.blobs.size()));
    put_u32(s, static_cast<std::uint32_t>(e.logs.size()));
    unsigned char key_sum[digest_size];
    digest(e.key_text.data(), e.key_text.size(), key_sum);
    s.append(reinterpret_cast<const char*>(key_sum), sizeof key_sum);
    s += e.key_text;
    s += e.origin;
    for (std::uint32_t idx : e.device_blob) put_u32(s, idx);
    for (const std::string& b : e.blobs) put_u64(s, b.size());
    for (const std::string& l : e.logs) put_u32(s, static_cast<std::uint32_t>(l.size()));
    for (const std::string& b : e.blobs) s += b;
    for (const std::string& l : e.logs) s += l;
    unsigned char sum[digest_size];
    digest(s.data(), s.size(), sum);
    s.append(reinterpret_cast<const char*>(sum), sizeof sum);
    return s;
}

// Parses the fixed header and the variable-length fields after it, with
// every length checked against the file size.
bool parse_header(const unsigned char* p, std::size_t size, EntryHeader* h, std::size_t* after, std::string* reason)
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

bool decode_entry(const std::string& bytes, const std::string& expect_key_hex, CacheEntry* out, std::string* reason)
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
    unsigned char sum[digest_size];
    digest(p, body_end, sum);
    if (std::memcmp(sum, p + body_end, 32) != 0) {
        *reason = "checksum mismatch (truncated or damaged)";
        return false;
    }
    if (digest_hex(h.key_text) != h.key_hex) {
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
    // Each size is checked against what is left before it is added, so a
    // size that claims more than the file holds fails here, before any
    // allocation, and the sum cannot wrap.
    std::vector<std::uint64_t> sizes(h.nblobs);
    std::uint64_t total = 0;
    const std::uint64_t room = body_end - pos - 8ull * h.nblobs;
    for (std::uint32_t i = 0; i < h.nblobs; ++i, pos += 8) {
        sizes[i] = get_u64(p + pos);
        if (sizes[i] > room - total) {
            *reason = "bad blob size (more bytes than the file holds)";
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

}  // namespace stdcl
