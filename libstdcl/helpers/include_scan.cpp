// SPDX-License-Identifier: MIT
// include_scan.cpp: the #include directives of an OpenCL C text, and the
// file each names (shared by the program cache and clcc).
#include "helpers/include_scan.hpp"

#include "helpers/fsutil.hpp"

#include <algorithm>

namespace stdcl {

namespace {

// The text as the preprocessor reads it after joining lines: every backslash at
// the end of a line removed with its line break.  line_of[k] is the 1-based line
// of the text that character k of the result comes from.
std::string join_lines(const std::string& text, std::vector<int>* line_of)
{
    std::string s;
    s.reserve(text.size());
    line_of->reserve(text.size());
    int line = 1;
    for (std::size_t i = 0, n = text.size(); i < n; ++i) {
        if (text[i] == '\\') {
            std::size_t j = i + 1;
            if (j + 1 < n && text[j] == '\r' && text[j + 1] == '\n') ++j;
            if (j < n && text[j] == '\n') {
                ++line;
                i = j;
                continue;
            }
        }
        s += text[i];
        line_of->push_back(line);
        if (text[i] == '\n') ++line;
    }
    return s;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }
bool is_ident(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

// A reading of s (joined lines) in which comments are spaces: a block comment
// ends at "*/" whatever lines it spans, a line comment at the line's end.
struct Reader {
    const std::string& s;
    const std::vector<int>& line_of;
    std::size_t i = 0;
    int spans_to = 0;  // the last line a block comment from an earlier line ended on

    // Skips spaces and comments, but no line break; true when it skipped any.
    bool skip_blank()
    {
        std::size_t start = i;
        while (i < s.size()) {
            if (is_space(s[i])) {
                ++i;
            } else if (s.compare(i, 2, "/*") == 0) {
                int from = line_of[i];
                std::size_t e = s.find("*/", i + 2);
                i = e == std::string::npos ? s.size() : e + 2;
                if (line_of[i - 1] > from) spans_to = line_of[i - 1];
            } else if (s.compare(i, 2, "//") == 0) {
                while (i < s.size() && s[i] != '\n') ++i;
            } else {
                break;
            }
        }
        return i != start;
    }
};

}  // namespace

std::vector<IncludeDirective> find_includes(const std::string& text)
{
    std::vector<int> line_of;
    const std::string s = join_lines(text, &line_of);
    const std::size_t n = s.size();
    std::vector<IncludeDirective> found;
    Reader r{s, line_of};
    while (r.i < n) {
        // One line: a directive when only spaces and comments precede '#' (or
        // its digraph "%:"); a block comment's line breaks do not end it.
        r.skip_blank();
        if (r.i >= n) break;
        bool hash = s[r.i] == '#' || s.compare(r.i, 2, "%:") == 0;
        if (hash) {
            int line = line_of[r.i];
            bool after_comment = r.spans_to == line;
            r.i += s[r.i] == '#' ? 1 : 2;
            r.skip_blank();
            if (s.compare(r.i, 7, "include") == 0 && (r.i + 7 >= n || !is_ident(s[r.i + 7]))) {
                r.i += 7;
                r.skip_blank();
                IncludeDirective d{0, {}, line, after_comment, line};
                if (r.i < n && (s[r.i] == '"' || s[r.i] == '<')) {
                    char close = s[r.i] == '"' ? '"' : '>';
                    std::size_t e = s.find_first_of(std::string(1, close) + "\n", r.i + 1);
                    if (e != std::string::npos && s[e] == close) {
                        d.delim = s[r.i];
                        d.name = s.substr(r.i + 1, e - r.i - 1);
                        r.i = e + 1;
                    }
                }
                if (!d.delim) {
                    std::size_t e = s.find('\n', r.i);
                    d.name = s.substr(r.i, e == std::string::npos ? n - r.i : e - r.i);
                }
                std::size_t last = r.i > 0 ? r.i - 1 : 0;
                if (!d.delim) last = std::min(n, s.find('\n', r.i)) - 1;
                d.end_line = last < n ? line_of[last] : line;
                if (d.end_line < line) d.end_line = line;
                found.push_back(d);
            }
        }
        // The rest of the line: strings, and comments that may run on.
        while (r.i < n && s[r.i] != '\n') {
            if (r.skip_blank()) continue;
            char c = s[r.i];
            if (c == '"' || c == '\'') {
                ++r.i;
                // After join_lines a backslash before a line break escapes
                // nothing: the literal ends, unterminated, with its line.
                while (r.i < n && s[r.i] != c && s[r.i] != '\n')
                    r.i += s[r.i] == '\\' && r.i + 1 < n && s[r.i + 1] != '\n' ? 2 : 1;
                if (r.i < n && s[r.i] == c) ++r.i;
                continue;
            }
            ++r.i;
        }
        if (r.i < n) ++r.i;  // the line break
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
