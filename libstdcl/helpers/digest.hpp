// SPDX-License-Identifier: MIT
// digest.hpp: the program cache's hash (cache keys, #included files' contents
// and entry checksums): SHA-256, computed by nettle (digest.cpp says why).
#pragma once

#include <cstddef>
#include <string>

namespace stdcl {

// Bytes in a digest; a key's file name is its 2 * digest_size hex digits.
constexpr std::size_t digest_size = 32;

// The digest of size bytes at data, written to out.  Cannot fail.
void digest(const void* data, std::size_t size, unsigned char out[digest_size]);

// The digest as 2 * digest_size lowercase hex digits.
std::string digest_hex(const void* data, std::size_t size);
inline std::string digest_hex(const std::string& s) { return digest_hex(s.data(), s.size()); }

// n raw bytes as 2n lowercase hex digits.
std::string to_hex(const unsigned char* bytes, std::size_t n);

}  // namespace stdcl
