// SPDX-License-Identifier: MIT
// fuzz_include_scan.cpp: the #include scanner (libstdcl/helpers/include_scan.cpp:
// find_includes, resolve_include), fed one OpenCL C text: a kernel file, a
// header it includes, or a clsopen string.  The program cache's key (which
// headers a program depends on) and clcc (which headers it inlines) both
// rest on it.
//
// Checks, besides no crash and no sanitizer report:
//   - each directive's line is a line of the text, in increasing order, and
//     that line holds a '#' and the word "include"; its name lies on that
//     line and holds no line break; a quoted name holds no '"', an angled one
//     no '>' (they end at the first), a computed one (delim 0) is the rest of
//     the line;
//   - a text and the same text after a leading line break give the same
//     directives, one line further down (the scan starts each line afresh);
//     a line without '#' appended after the last line break adds none and
//     changes none;
//   - resolve_include of each name gives "" or a regular file;
//   - the directives are those a C preprocessor sees (the model below, C11
//     5.1.1.2 phases 2-4: backslash-newline joins lines, a comment is one
//     space, a directive's '#' (or '%:') is the first token of its line): the
//     same quoted and angled names in the same order (form feed and vertical
//     tab are blanks inside a directive too, as clang takes them).
#include "fuzz_common.hpp"

#include "helpers/fsutil.hpp"
#include "helpers/include_scan.hpp"

#include <sys/stat.h>

#include <cctype>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace {

// Line n (1-based) of text, without its line break.
std::string line_of(const std::string& text, int n)
{
    std::size_t start = 0;
    for (int i = 1; i < n; ++i) {
        start = text.find('\n', start);
        if (start == std::string::npos) return std::string();
        ++start;
    }
    std::size_t end = text.find('\n', start);
    return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

int line_count(const std::string& text)
{
    int n = 1;
    for (char c : text) n += c == '\n';
    return n;
}

bool same(const std::vector<stdcl::IncludeDirective>& a, const std::vector<stdcl::IncludeDirective>& b, int line_shift)
{
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (a[i].delim != b[i].delim || a[i].name != b[i].name || a[i].line + line_shift != b[i].line ||
            a[i].after_comment != b[i].after_comment)
            return false;
    return true;
}

// Two folders to resolve names in, with a header in each.
const std::vector<std::string>& search_dirs()
{
    static std::vector<std::string> dirs;
    if (dirs.empty()) {
        std::string root = fuzz::scratch_dir();
        dirs = {root + "/own", root + "/inc"};
        for (const std::string& d : dirs) {
            ::mkdir(d.c_str(), 0700);
            fuzz::write_file(d + "/a.h", "#define A 1\n");
        }
        fuzz::write_file(dirs[1] + "/b.h", "#define B 2\n");
    }
    return dirs;
}

// What a C preprocessor takes for #include directives (phases 2-4 of
// translation, no macro expansion and no #if): the reference the scanner is
// compared with.
struct ModelDirective {
    char delim;
    std::string name;  // for a computed include: unused
    bool odd_form;  // a comment between '#' and the name, or '%:'
};

std::vector<ModelDirective> model_includes(const std::string& physical)
{
    // Phase 2: a backslash before a line break (LF or CR LF) joins the two lines.
    std::string t;
    for (std::size_t i = 0; i < physical.size(); ++i) {
        if (physical[i] == '\\' && i + 1 < physical.size() && physical[i + 1] == '\n')
            ++i;
        else if (physical[i] == '\\' && i + 2 < physical.size() && physical[i + 1] == '\r' && physical[i + 2] == '\n')
            i += 2;
        else
            t += physical[i];
    }
    const std::size_t n = t.size();
    std::size_t i = 0;
    bool comment = false;  // a comment was skipped by the last skip()
    // Skips blanks (not line breaks) and comments; a block comment, line
    // breaks and all, is one space (phase 3), so the line goes on after it.
    auto skip = [&](const char* blanks) {
        comment = false;
        for (;;) {
            if (i < n && std::strchr(blanks, t[i]) && t[i] != '\0') {
                ++i;
            } else if (t.compare(i, 2, "/*") == 0) {
                std::size_t e = t.find("*/", i + 2);
                i = e == std::string::npos ? n : e + 2;
                comment = true;
            } else if (t.compare(i, 2, "//") == 0) {
                while (i < n && t[i] != '\n') ++i;
                comment = true;
            } else {
                return;
            }
        }
    };
    std::vector<ModelDirective> out;
    while (i < n) {
        // A line's first token.
        skip(" \t\r\f\v");
        bool digraph = t.compare(i, 2, "%:") == 0;
        if (i < n && (t[i] == '#' || digraph)) {
            i += digraph ? 2 : 1;
            skip(" \t\r\f\v");  // clang takes every blank but a line break here (with a pedantic warning)
            bool odd = digraph || comment;
            std::size_t w = i;
            while (i < n && (std::isalnum(static_cast<unsigned char>(t[i])) || t[i] == '_')) ++i;
            if (t.compare(w, i - w, "include") == 0 && i - w == 7) {
                skip(" \t\r\f\v");
                odd = odd || comment;
                ModelDirective d{0, std::string(), odd};
                if (i < n && (t[i] == '"' || t[i] == '<')) {
                    char close = t[i] == '"' ? '"' : '>';
                    std::size_t e = t.find_first_of(std::string(1, close) + "\n", i + 1);
                    if (e != std::string::npos && t[e] == close) {
                        d.delim = t[i];
                        d.name = t.substr(i + 1, e - i - 1);
                        i = e + 1;
                    }
                }
                out.push_back(d);
            }
        }
        // The rest of the line: literals end at their quote or the line's end.
        while (i < n && t[i] != '\n') {
            if (t.compare(i, 2, "/*") == 0 || t.compare(i, 2, "//") == 0) {
                skip("");
            } else if (t[i] == '"' || t[i] == '\'') {
                char q = t[i++];
                while (i < n && t[i] != q && t[i] != '\n') i += t[i] == '\\' && i + 1 < n && t[i + 1] != '\n' ? 2 : 1;
                if (i < n && t[i] == q) ++i;
            } else {
                ++i;
            }
        }
        if (i < n) ++i;
    }
    return out;
}

// Does the scanner agree with the model on the quoted and angled names, in
// order?  (Computed includes are not compared: the model also counts malformed
// ones such as "#include;", which the compiler rejects anyway.)
bool agrees(const std::vector<stdcl::IncludeDirective>& found, const std::vector<ModelDirective>& model)
{
    std::vector<std::pair<char, std::string>> a, b;
    for (const auto& d : found)
        if (d.delim) a.emplace_back(d.delim, d.name);
    for (const auto& d : model)
        if (d.delim) b.emplace_back(d.delim, d.name);
    return a == b;
}

// "delim name" of each directive, for a failure's message.
template <class D> std::string listing(const std::vector<D>& ds)
{
    std::string s;
    for (const D& d : ds) {
        s += std::string(" [") + (d.delim ? d.delim : '0');
        for (unsigned char c : d.name) {
            char buf[8];
            std::snprintf(buf, sizeof buf, c < 32 || c > 126 ? "\\x%02x" : "%c", c);
            s += buf;
        }
        s += "]";
    }
    return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    const std::vector<stdcl::IncludeDirective> found = stdcl::find_includes(text);

    const int lines = line_count(text);
    int last = 0;
    for (const stdcl::IncludeDirective& d : found) {
        FUZZ_CHECK(d.name.find('\n') == std::string::npos, "a name holds a line break");
        FUZZ_CHECK(d.line > last && d.line <= d.end_line && d.end_line <= lines,
                   "directive lines %d to %d after %d (of %d)", d.line, d.end_line, last, lines);
        last = d.end_line;
        // The directive's lines, joined as the preprocessor joins them.
        std::string line;
        for (int l = d.line; l <= d.end_line; ++l) {
            std::string part = line_of(text, l);
            if (l < d.end_line && !part.empty() && part.back() == '\r') part.pop_back();  // a CR LF line break
            if (l < d.end_line && !part.empty() && part.back() == '\\') part.pop_back();
            line += part;
        }
        FUZZ_CHECK((line.find('#') != std::string::npos || line.find("%:") != std::string::npos) &&
                       line.find("include") != std::string::npos,
                   "lines %d to %d hold no #include", d.line, d.end_line);
        FUZZ_CHECK(line.find(d.name) != std::string::npos, "the name is not on lines %d to %d", d.line, d.end_line);
        if (d.delim == '"')
            FUZZ_CHECK(d.name.find('"') == std::string::npos, "quoted name holds '\"'");
        else if (d.delim == '<')
            FUZZ_CHECK(d.name.find('>') == std::string::npos, "angled name holds '>'");
        else
            FUZZ_CHECK(d.delim == 0, "delimiter %d", d.delim);

        // Where the cache and clcc would look for it.
        const std::vector<std::string>& dirs = search_dirs();
        std::string file = stdcl::resolve_include(dirs[0], d.delim, d.name, {dirs[1]});
        FUZZ_CHECK(file.empty() || stdcl::is_regular_file(file), "resolved to a non-file");
    }

    // The same directives as a model of the C preprocessor finds.
    const std::vector<ModelDirective> model = model_includes(text);
    FUZZ_CHECK(agrees(found, model), "the scanner found%s; a C preprocessor%s", listing(found).c_str(),
               listing(model).c_str());

    FUZZ_CHECK(same(found, stdcl::find_includes("\n" + text), 1), "a leading line break changed the directives");
    // (Only after a complete last line: "#include" as the very last bytes counts
    // as a computed include with an empty name, "#include\n" does not.)
    // (And not after a backslash ending the last line: it joins the appended one.)
    const bool spliced_end = text.size() >= 2 && text.compare(text.size() - 2, 2, "\\\n") == 0;
    if (!text.empty() && text.back() == '\n' && !spliced_end &&
        !(text.size() >= 3 && text.compare(text.size() - 3, 3, "\\\r\n") == 0))
        FUZZ_CHECK(same(found, stdcl::find_includes(text + "int x; /* \" ' */\n"), 0),
                   "an appended line changed the directives");
    return 0;
}
