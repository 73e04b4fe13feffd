// SPDX-License-Identifier: MIT
// fuzz_clcc.cpp: clcc's embedder (src/clcc.cpp), fed the files it reads: a
// kernel file and the headers it includes.  clcc has no library entry point:
// this file compiles src/clcc.cpp itself (its main renamed clcc_main), so it
// reaches the tool's own Inliner (#include inlining with #line lines, #pragma
// once, include cycles) and make_c (the C file that embeds the text).
//
// Input: up to four files, separated by NUL bytes (OpenCL C text holds none):
//   src/main.cl \0 src/a.h \0 inc/b.h \0 inc/sub/c.h
// written to a scratch folder (a missing part is an empty file); main.cl is
// expanded as `clcc -I inc src/main.cl` would.  An input whose #include names
// an absolute path or ".." is skipped: it would read files outside the folder
// (every file of the machine is fair game for clcc, not for a fuzzer).
//
// Checks, besides no crash and no sanitizer report:
//   - a main.cl without a #include "x" / <x> line and without "pragma" comes
//     out unchanged after clcc's first #line line (plus a final line break);
//   - any main.cl: every line without a '#' comes out as it was (only
//     directive lines are replaced);
//   - the C that make_c writes holds exactly the inlined text: its byte array
//     (and the size it declares) decodes back to the text, and its name literal
//     to the name given (the first line of inc/b.h, as if given with --name).
// clcc prints a warning for each #include it cannot find: run_fuzz.sh runs this
// target with -close_fd_mask=2 (the target's own stderr discarded; libFuzzer's
// and the sanitizers' reports, and these checks' messages, still come out).

// clcc.cpp's headers first, so that the `main` below renames only its main.
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#define main clcc_main
#include "../../src/clcc.cpp"
#undef main

#include "fuzz_common.hpp"

#include <cstdint>

namespace {

struct Files {
    std::string dir;  // the scratch folder
    std::vector<std::string> paths;  // main.cl, a.h, b.h, sub/c.h
    std::vector<std::string> search;  // as clcc's main builds it: main.cl's folder, then -I inc
};

const Files& files()
{
    static Files f;
    if (f.dir.empty()) {
        f.dir = fuzz::scratch_dir() + "/clcc";
        for (const char* d : {"", "/src", "/inc", "/inc/sub"}) ::mkdir((f.dir + d).c_str(), 0700);
        f.paths = {f.dir + "/src/main.cl", f.dir + "/src/a.h", f.dir + "/inc/b.h", f.dir + "/inc/sub/c.h"};
        f.search = {stdcl::dirname_of(f.paths[0]), f.dir + "/inc"};
    }
    return f;
}

// Does text name a file outside the scratch folder?
bool leaves_folder(const std::string& text)
{
    for (const stdcl::IncludeDirective& d : stdcl::find_includes(text))
        if (!d.name.empty() && (d.name[0] == '/' || d.name.find("..") != std::string::npos)) return true;
    return false;
}

// The bytes of the C array `stdcl_embed_text_0[N] = { b, b, ..., 0}`, and N.
bool embedded_bytes(const std::string& c, std::string* bytes, unsigned long* declared)
{
    // At a line's start: the name literal before it may hold these words too,
    // but never a raw line break.
    const std::string head = "\nstatic const char stdcl_embed_text_0[";
    std::size_t at = c.find(head);
    if (at == std::string::npos) return false;
    char* end = nullptr;
    *declared = std::strtoul(c.c_str() + at + head.size(), &end, 10);
    std::size_t pos = c.find("= {", at);
    if (pos == std::string::npos) return false;
    pos += 3;
    bytes->clear();
    for (;;) {
        unsigned long v = std::strtoul(c.c_str() + pos, &end, 10);
        std::size_t next = static_cast<std::size_t>(end - c.c_str());
        if (next == pos || v > 255) return false;
        pos = next;
        if (c.compare(pos, 2, "};") == 0) return v == 0;  // the terminating NUL
        if (c[pos] != ',') return false;
        ++pos;
        bytes->push_back(static_cast<char>(v));
    }
}

// The string literal after `stdcl_embed_name_0[] = `, unescaped as C would.
bool embedded_name(const std::string& c, std::string* name)
{
    const std::string head = "\nstatic const char stdcl_embed_name_0[] = \"";
    std::size_t pos = c.find(head);
    if (pos == std::string::npos) return false;
    pos += head.size();
    name->clear();
    while (pos < c.size() && c[pos] != '"') {
        if (c[pos] != '\\') {
            name->push_back(c[pos++]);
            continue;
        }
        ++pos;
        if (pos < c.size() && (c[pos] == '"' || c[pos] == '\\')) {
            name->push_back(c[pos++]);
            continue;
        }
        int v = 0, k = 0;
        for (; k < 3 && pos < c.size() && c[pos] >= '0' && c[pos] <= '7'; ++k, ++pos) v = v * 8 + (c[pos] - '0');
        if (k == 0) return false;
        name->push_back(static_cast<char>(v));
    }
    return pos < c.size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const Files& f = files();
    std::vector<std::string> parts(4);
    std::size_t start = 0;
    for (std::size_t k = 0; k < 4 && start <= size; ++k) {
        const char* s = reinterpret_cast<const char*>(data) + start;
        std::size_t n = k == 3 ? size - start : strnlen(s, size - start);
        parts[k].assign(s, n);
        start += n + 1;
    }
    for (const std::string& p : parts)
        if (leaves_folder(p)) return 0;
    for (std::size_t k = 0; k < 4; ++k) fuzz::write_file(f.paths[k], parts[k]);

    Inliner inl(f.search);
    const std::string out = inl.run(f.paths[0]);

    // A text with nothing to inline comes out as it went in.
    const std::string& text = parts[0];
    bool plain = text.find("pragma") == std::string::npos;
    for (const stdcl::IncludeDirective& d : stdcl::find_includes(text)) plain = plain && d.delim == 0;
    if (plain && inl.ok) {
        std::string want = "#line 1 " + quoted(f.paths[0]) + "\n" + text;
        if (!text.empty() && text.back() != '\n') want += '\n';
        FUZZ_CHECK(out == want, "a text without includes changed (%zu bytes in, %zu out)", text.size(), out.size());
    }
    if (!inl.ok) return 0;

    // Only directive lines are replaced: every line of main.cl without a '#'
    // (or its digraph "%:") that does not continue a line ending in '\\' is in
    // the output as it was.
    {
        std::istringstream in(text);
        std::string line;
        int lineno = 0;
        bool continued = false;
        while (std::getline(in, line)) {
            ++lineno;
            bool skip = continued || line.find("%:") != std::string::npos;
            continued = !line.empty() && line.back() == '\\';
            if (skip) continue;
            FUZZ_CHECK(line.find('#') != std::string::npos || out.find("\n" + line + "\n") != std::string::npos,
                       "line %d of main.cl is not in clcc's output", lineno);
        }
    }

    // The C file holds exactly that text, under the name given.
    const std::string name = parts[2].substr(0, std::min<std::size_t>(parts[2].find('\n'), 64));
    const std::string c = make_c({name}, {out}, {f.paths[0]});
    std::string bytes, back;
    unsigned long declared = 0;
    FUZZ_CHECK(embedded_bytes(c, &bytes, &declared), "no byte array in the C file");
    FUZZ_CHECK(declared == out.size() + 1, "array of %lu bytes for %zu", declared, out.size());
    FUZZ_CHECK(bytes == out, "the C file's bytes are not the text");
    FUZZ_CHECK(embedded_name(c, &back) && back == name, "the C file's name literal is not the name");
    return 0;
}
