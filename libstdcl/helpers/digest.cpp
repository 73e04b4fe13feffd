// SPDX-License-Identifier: MIT
// digest.cpp: SHA-256 for the program cache, from nettle.
//
// Hashing a 130708-byte entry (the NBody kernel's, two devices) takes about
// 80 us with nettle on a core with SHA-NI, about as long as with OpenSSL's
// libcrypto; in a warm clopen (bench/bench_clopen.c) the hash is lost in the
// rest (reading the entry, the driver loading the binary).  nettle is used
// because:
// - its SHA-256 is a function over a context on the stack: no allocation and
//   no failure path (libcrypto's SHA256() fetches an algorithm object and may
//   return NULL; its library initialisation also costs each process);
// - Debian builds it "fat": the SHA-NI code is picked at run time;
// - it stays SHA-256, so keys and entries are the bytes they were (entries
//   written before still hit), and a cryptographic hash keeps the property
//   the cache relies on, that two programs never share a key, even when one
//   was made to collide (XXH3 makes no such promise).
#include "helpers/digest.hpp"

#include <nettle/sha2.h>

#include <cstdint>

namespace stdcl {

void digest(const void* data, std::size_t size, unsigned char out[digest_size])
{
    static_assert(digest_size == SHA256_DIGEST_SIZE, "digest_size is SHA-256's");
    struct sha256_ctx ctx;
    sha256_init(&ctx);
    sha256_update(&ctx, size, static_cast<const std::uint8_t*>(data));
    sha256_digest(&ctx, SHA256_DIGEST_SIZE, out);
}

std::string digest_hex(const void* data, std::size_t size)
{
    unsigned char d[digest_size];
    digest(data, size, d);
    return to_hex(d, sizeof d);
}

std::string to_hex(const unsigned char* bytes, std::size_t n)
{
    static const char k_digits[] = "0123456789abcdef";
    std::string s(2 * n, '0');
    for (std::size_t i = 0; i < n; ++i) {
        s[2 * i] = k_digits[bytes[i] >> 4];
        s[2 * i + 1] = k_digits[bytes[i] & 15];
    }
    return s;
}

}  // namespace stdcl
