// SPDX-License-Identifier: MIT
// cache_format.hpp: the layout of a program-cache entry, shared by the entry's
// encoding (cache_entry.cpp) and the store that reads its header (cache_store.cpp).
#pragma once

#include "builds/cache_store.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace stdcl {

inline constexpr char k_magic[8] = {'S', 'T', 'D', 'C', 'L', 'P', 'C', 1};
inline constexpr std::uint32_t k_format_version = 2;  // 2: compiler logs
inline constexpr std::size_t k_header_size = 64;
inline constexpr std::size_t k_sum_size = 32;

// Little-endian fixed-width fields.
inline void put_u32(std::string& s, std::uint32_t v)
{
    for (int i = 0; i < 4; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

inline void put_u64(std::string& s, std::uint64_t v)
{
    for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

inline std::uint32_t get_u32(const unsigned char* p)
{
    return std::uint32_t(p[0]) | (std::uint32_t(p[1]) << 8) | (std::uint32_t(p[2]) << 16) | (std::uint32_t(p[3]) << 24);
}

inline std::uint64_t get_u64(const unsigned char* p)
{
    return std::uint64_t(get_u32(p)) | (std::uint64_t(get_u32(p + 4)) << 32);
}

// Parses the fixed header and the variable-length fields after it, with every
// length checked against the file size; *after: where the rest begins.
bool parse_header(const unsigned char* p, std::size_t size, EntryHeader* h, std::size_t* after, std::string* reason);

}  // namespace stdcl
