// SPDX-License-Identifier: MIT
// include_scan.cpp: the #include directives of an OpenCL C text, and the
// file each names (shared by the program cache and clcc).
#include "internal/include_scan.hpp"

#include "internal/fsutil.hpp"

namespace stdcl {

std::vector<IncludeDirective> find_includes(const std::string& text)
{
    std::vector<IncludeDirective> found;
    bool in_block = false;
    int line = 0;
    std::size_t i = 0, n = text.size();
    while (i < n) {
        // One line: the directive counts if only spaces and comments precede '#'.
        ++line;
        bool at_start = true;
        bool started_in_block = in_block;
        while (i < n && text[i] != '\n') {
            char c = text[i];
            if (in_block) {
                if (c == '*' && i + 1 < n && text[i + 1] == '/') {
                    in_block = false;
                    i += 2;
                } else {
                    ++i;
                }
                continue;
            }
            if (c == '/' && i + 1 < n && text[i + 1] == '*') {
                in_block = true;
                i += 2;
                continue;
            }
            if (c == '/' && i + 1 < n && text[i + 1] == '/') {
                while (i < n && text[i] != '\n') ++i;
                break;
            }
            if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
                ++i;
                continue;
            }
            if (c == '#' && at_start) {
                std::size_t j = i + 1;
                while (j < n && (text[j] == ' ' || text[j] == '\t')) ++j;
                if (text.compare(j, 7, "include") == 0 &&
                    (j + 7 >= n || text[j + 7] == ' ' || text[j + 7] == '\t' || text[j + 7] == '"' ||
                     text[j + 7] == '<')) {
                    j += 7;
                    while (j < n && (text[j] == ' ' || text[j] == '\t')) ++j;
                    IncludeDirective d{0, {}, line, started_in_block};
                    if (j < n && (text[j] == '"' || text[j] == '<')) {
                        char close = text[j] == '"' ? '"' : '>';
                        std::size_t e = text.find_first_of(std::string(1, close) + "\n", j + 1);
                        if (e != std::string::npos && text[e] == close) {
                            d.delim = text[j];
                            d.name = text.substr(j + 1, e - j - 1);
                        }
                    }
                    if (!d.delim) {
                        std::size_t e = text.find('\n', j);
                        d.name = text.substr(j, e == std::string::npos ? n - j : e - j);
                    }
                    found.push_back(d);
                }
                // The rest of a directive line holds no comment start we
                // need to track except a block comment; scan on normally.
                at_start = false;
                ++i;
                continue;
            }
            at_start = false;
            if (c == '"' || c == '\'') {
                ++i;
                while (i < n && text[i] != c && text[i] != '\n') {
                    if (text[i] == '\\' && i + 1 < n) ++i;
                    ++i;
                }
                if (i < n && text[i] == c) ++i;
                continue;
            }
            ++i;
        }
        if (i < n) ++i;  // the newline
    }
    return found;
}

std::string resolve_include(const std::string& from_dir, char delim, const std::string& name,
                            const std::vector<std::string>& dirs)
{
    if (name.empty()) return std::string();
    if (name[0] == '/') return is_regular_file(name) ? name : std::string();
    if (delim == '"' && !from_dir.empty()) {
        std::string c = join_path(from_dir, name);
        if (is_regular_file(c)) return c;
    }
    for (const std::string& d : dirs) {
        std::string c = join_path(d, name);
        if (is_regular_file(c)) return c;
    }
    return std::string();
}

}  // namespace stdcl
