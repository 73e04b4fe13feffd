// sha256.hpp: SHA-256 (FIPS 180-4), used for program-cache keys and entry checksums.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace stdcl {

// Incremental SHA-256: update() any number of times, then digest() once.
class Sha256 {
public:
    Sha256();
    void update(const void* data, std::size_t size);
    void update(const std::string& s) { update(s.data(), s.size()); }
    // Finishes the hash and writes 32 bytes to out; the object is then spent.
    void digest(unsigned char out[32]);
    // Finishes the hash and returns it as 64 lowercase hex digits.
    std::string hex_digest();

private:
    void block(const unsigned char* p);
    std::uint32_t h_[8];
    unsigned char buf_[64];
    std::size_t buflen_ = 0;
    std::uint64_t total_ = 0;
};

// SHA-256 of size bytes at data, as 64 lowercase hex digits.
std::string sha256_hex(const void* data, std::size_t size);
inline std::string sha256_hex(const std::string& s) { return sha256_hex(s.data(), s.size()); }

// 32 raw bytes as 64 lowercase hex digits.
std::string to_hex(const unsigned char* bytes, std::size_t n);

}  // namespace stdcl
