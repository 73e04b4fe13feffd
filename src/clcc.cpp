// SPDX-License-Identifier: MIT
// clcc.cpp: turns OpenCL C files into object files that carry the kernels
// inside the program: linked into an executable or shared library, each
// registers its source with libstdcl when loaded (a constructor calls
// stdcl_embed_register), and clopen(cp, NULL, flags) builds them with no
// kernel file on disk.
//
//   clcc [-c | -S | -E] [-o OUT] [-I DIR]... [--name NAME] [-MD] [-MF DEPFILE]
//        [--cc COMPILER] [-v] FILE.cl...
//
//   -c            an object file (the default): writes C, compiles it with
//                 $CC (default cc) -c -fPIC, so it links into programs and
//                 shared libraries alike
//   -S, --emit-c  the C source instead (compile it yourself)
//   -E            the OpenCL C as it will be embedded (includes inlined)
//   -o OUT        output (default: FILE.o, FILE.c; -E: standard output)
//   -I DIR        where #include looks, after the including file's folder
//                 (the first FILE's folder is searched first, as clopen does)
//   --name NAME   the name registered (default: FILE's base name; one FILE)
//   -MD, -MF F    also write make dependencies (OUT.d, or F): edit a header,
//                 make remakes the object
//   --cc CMD      the C compiler for -c (default $CC, else cc)
//   -v            prints the C compiler's command line
//
// #include "x" and #include <x> are replaced by the file's text (with #line
// lines so compiler messages name the right file and line), transitively;
// a file with #pragma once is inlined once.  An include that cannot be found
// is left in place with a warning; #include <stdcl.h> is always left in place
// (libstdcl's builds pass -I its installed include folder and -D
// __stdcl_kernel__).  Which lines are #includes and which file each names is
// decided by the code the program cache uses for its key
// (libstdcl/helpers/include_scan.hpp), so the two always agree.  Uses no
// OpenCL (it links those parts of libstdcl.a only).
//
// Linking: an object in a static archive (.a) is only linked when something
// else pulls it in; link clcc objects directly (or use --whole-archive).  A
// shared library holding only clcc objects is dropped by linkers running
// with --as-needed unless the program calls into it: link it between
// -Wl,--no-as-needed and -Wl,--as-needed.
#include "../libstdcl/helpers/fsutil.hpp"
#include "../libstdcl/helpers/include_scan.hpp"

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

extern char** environ;

namespace {

const char* g_prog = "clcc";

struct Options {
    enum Mode { object, c_source, preprocess } mode = object;
    std::string out;
    std::vector<std::string> include_dirs;
    std::string name;
    bool depfile = false;
    std::string depfile_path;
    std::string cc;
    bool verbose = false;
    std::vector<std::string> inputs;
};

void usage(FILE* to)
{
    std::fprintf(to,
                 "usage: %s [-c | -S | -E] [-o OUT] [-I DIR]... [--name NAME] [-MD] [-MF DEPFILE]\n"
                 "            [--cc COMPILER] [-v] FILE.cl...\n"
                 "Embeds OpenCL C files in an object file that registers them with libstdcl\n"
                 "when the program (or shared library) it is linked into loads;\n"
                 "clopen(cp, NULL, flags) then opens them.\n"
                 "  -c           object file (default; compiled with $CC, default cc)\n"
                 "  -S, --emit-c C source instead of an object\n"
                 "  -E           the OpenCL C as embedded (includes inlined)\n"
                 "  -o OUT       output file (default FILE.o / FILE.c; -E: stdout)\n"
                 "  -I DIR       include search folder (after the including file's)\n"
                 "  --name NAME  registered name (default: FILE's base name)\n"
                 "  -MD, -MF F   write make dependencies to OUT.d (or F)\n"
                 "  --cc CMD     C compiler for -c\n"
                 "  -v           show the C compiler command\n",
                 g_prog);
}

bool read_text(const std::string& path, std::string* out)
{
    stdcl::ReadError e;
    if (stdcl::read_file(path, out, &e)) return true;
    errno = e.err;
    return false;
}

std::string basename_of(const std::string& path)
{
    std::size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string canonical(const std::string& path)
{
    char buf[PATH_MAX];
    return ::realpath(path.c_str(), buf) ? std::string(buf) : path;
}

// A string as a C/OpenCL string literal body (for #line and the name).
std::string quoted(const std::string& s)
{
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
        } else if (c < 32 || c >= 127) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\%03o", c);
            out += buf;
        } else {
            out += static_cast<char>(c);
        }
    }
    return out + "\"";
}

// Inlines the #includes of one file's text.
class Inliner {
public:
    Inliner(const std::vector<std::string>& dirs) : dirs_(dirs) {}

    bool ok = true;
    std::vector<std::string> deps;  // every file read, for -MD

    std::string run(const std::string& path)
    {
        std::string text;
        if (!read_text(path, &text)) {
            std::fprintf(stderr, "%s: cannot read %s: %s\n", g_prog, path.c_str(),
                         std::strerror(errno ? errno : ENOENT));
            ok = false;
            return std::string();
        }
        deps.push_back(path);
        return expand(path, text, 0);
    }

private:
    const std::vector<std::string>& dirs_;
    std::set<std::string> once_;  // canonical paths of #pragma once files seen
    std::vector<std::string> stack_;  // canonical paths being expanded

    // Is line (from pos, not inside a comment) a directive "#word ..."?
    // Returns the word and sets rest to what follows it.
    static std::string directive(const std::string& line, std::string* rest)
    {
        std::size_t i = line.find_first_not_of(" \t");
        if (i == std::string::npos || line[i] != '#') return std::string();
        i = line.find_first_not_of(" \t", i + 1);
        if (i == std::string::npos) return std::string();
        std::size_t e = i;
        while (e < line.size() && (std::isalnum(static_cast<unsigned char>(line[e])) || line[e] == '_')) ++e;
        *rest = line.substr(e);
        return line.substr(i, e - i);
    }

    // Updates in_block for the comment state at the end of line.
    static void track_comments(const std::string& line, bool* in_block)
    {
        for (std::size_t i = 0; i < line.size(); ++i) {
            char c = line[i];
            if (*in_block) {
                if (c == '*' && i + 1 < line.size() && line[i + 1] == '/') {
                    *in_block = false;
                    ++i;
                }
            } else if (c == '/' && i + 1 < line.size() && line[i + 1] == '/') {
                return;
            } else if (c == '/' && i + 1 < line.size() && line[i + 1] == '*') {
                *in_block = true;
                ++i;
            } else if (c == '"' || c == '\'') {
                for (++i; i < line.size() && line[i] != c; ++i)
                    if (line[i] == '\\') ++i;
            }
        }
    }

    std::string expand(const std::string& path, const std::string& text, int depth)
    {
        std::string canon = canonical(path);
        if (depth > 200) {
            std::fprintf(stderr, "%s: %s: includes nested too deeply\n", g_prog, path.c_str());
            ok = false;
            return std::string();
        }
        stack_.push_back(canon);
        // The includes as the program cache reads them (include_scan.hpp).
        std::map<int, stdcl::IncludeDirective> includes;
        for (stdcl::IncludeDirective& d : stdcl::find_includes(text)) includes[d.line] = d;
        std::string out = "#line 1 " + quoted(path) + "\n";
        std::istringstream in(text);
        std::string line;
        int lineno = 0;
        bool in_block = false;
        int joined_to = 0;  // the lines of an inlined directive joined with '\\' end here
        bool joined_keep = false;  // ... and are kept as empty lines (no #line follows)
        while (std::getline(in, line)) {
            ++lineno;
            bool starts_in_block = in_block;
            track_comments(line, &in_block);
            if (lineno <= joined_to) {
                if (joined_keep) out += "\n";
                continue;
            }
            std::string rest, word = starts_in_block ? std::string() : directive(line, &rest);
            if (word == "pragma") {
                std::size_t p = rest.find_first_not_of(" \t");
                if (p != std::string::npos && rest.compare(p, 4, "once") == 0 &&
                    rest.find_first_not_of(" \t\r", p + 4) == std::string::npos) {
                    once_.insert(canon);
                    out += "\n";
                    continue;
                }
            }
            auto inc_at = includes.find(lineno);
            if (inc_at != includes.end() && inc_at->second.delim) {
                const stdcl::IncludeDirective& d = inc_at->second;
                // <stdcl.h> stays: libstdcl builds every program with -I its own
                // installed include folder and -D __stdcl_kernel__.
                bool keep_stdcl = d.delim == '<' && d.name == "stdcl.h";
                std::string found = keep_stdcl
                    ? std::string()
                    : stdcl::resolve_include(stdcl::dirname_of(path), d.delim, d.name, dirs_);
                if (found.empty()) {
                    if (!keep_stdcl)
                        std::fprintf(stderr,
                                     "%s: warning: %s:%d: cannot find '%s'; the #include is "
                                     "left in place (it must resolve at run time)\n",
                                     g_prog, path.c_str(), lineno, d.name.c_str());
                } else {
                    // A comment that began on an earlier line ends before
                    // the '#': keep it closed.
                    std::string close = d.after_comment ? "*/\n" : "\n";
                    std::string fc = canonical(found);
                    bool cycle = false;
                    for (const std::string& s : stack_) cycle = cycle || s == fc;
                    joined_to = d.end_line;
                    if (once_.count(fc) || cycle) {
                        joined_keep = true;
                        out += close;
                        continue;
                    }
                    joined_keep = false;
                    std::string inc;
                    if (!read_text(found, &inc)) {
                        std::fprintf(stderr, "%s: %s:%d: cannot read %s\n", g_prog, path.c_str(), lineno,
                                     found.c_str());
                        ok = false;
                        continue;
                    }
                    deps.push_back(found);
                    if (d.after_comment) out += "*/\n";
                    out += expand(found, inc, depth + 1);
                    if (!out.empty() && out.back() != '\n') out += "\n";
                    out += "#line " + std::to_string(d.end_line + 1) + " " + quoted(path) + "\n";
                    continue;
                }
            }
            out += line;
            out += "\n";
        }
        stack_.pop_back();
        return out;
    }
};

// The C file that embeds sources[i] under names[i].
std::string make_c(const std::vector<std::string>& names, const std::vector<std::string>& sources,
                   const std::vector<std::string>& files)
{
    std::string c = "/* Generated by clcc from";
    for (const std::string& f : files) c += " " + f;
    c += ".  Do not edit.\n"
         " * Linked into a program or shared library, it registers the OpenCL C\n"
         " * below with libstdcl when loaded; clopen(cp, NULL, flags) opens it. */\n"
         "#include <stddef.h>\n"
         "#ifdef __cplusplus\n"
         "extern \"C\"\n"
         "#endif\n"
         "int stdcl_embed_register(const char* name, const char* source, size_t size);\n";
    for (std::size_t k = 0; k < sources.size(); ++k) {
        const std::string& s = sources[k];
        c += "\nstatic const char stdcl_embed_name_" + std::to_string(k) + "[] = " + quoted(names[k]) + ";\n";
        c += "static const char stdcl_embed_text_" + std::to_string(k) + "[" + std::to_string(s.size() + 1) + "] = {";
        char buf[8];
        for (std::size_t i = 0; i < s.size(); ++i) {
            if (i % 16 == 0) c += "\n   ";
            std::snprintf(buf, sizeof buf, " %u,", static_cast<unsigned char>(s[i]));
            c += buf;
        }
        c += "\n    0};\n";
    }
    c += "\n__attribute__((constructor, used)) static void stdcl_embed_init(void)\n{\n";
    for (std::size_t k = 0; k < sources.size(); ++k) {
        std::string n = std::to_string(k);
        c += "    stdcl_embed_register(stdcl_embed_name_" + n + ", stdcl_embed_text_" + n +
            ", sizeof stdcl_embed_text_" + n + " - 1);\n";
    }
    c += "}\n";
    return c;
}

bool write_text(const std::string& path, const std::string& text)
{
    if (path == "-") return std::fwrite(text.data(), 1, text.size(), stdout) == text.size();
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) {
        std::fprintf(stderr, "%s: cannot write %s: %s\n", g_prog, path.c_str(), std::strerror(errno));
        return false;
    }
    bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    ok = (std::fclose(f) == 0) && ok;
    if (!ok) std::fprintf(stderr, "%s: cannot write %s\n", g_prog, path.c_str());
    return ok;
}

// Make-style escaping of a file name in a dependency line.
std::string make_escape(const std::string& s)
{
    std::string out;
    for (char c : s) {
        if (c == ' ' || c == '#') out += '\\';
        if (c == '$') out += '$';
        out += c;
    }
    return out;
}

std::vector<std::string> split_words(const std::string& s)
{
    std::vector<std::string> w;
    std::istringstream in(s);
    std::string x;
    while (in >> x) w.push_back(x);
    return w;
}

// Compiles c_path into obj_path with the C compiler; true on success.
bool compile_c(const Options& o, const std::string& c_path, const std::string& obj_path)
{
    std::string cc = o.cc;
    if (cc.empty()) {
        const char* env = std::getenv("CC");
        cc = env && *env ? env : "cc";
    }
    std::vector<std::string> args = split_words(cc);
    if (args.empty()) args.push_back("cc");
    for (const char* a : {"-c", "-fPIC", "-x", "c", "-o"}) args.push_back(a);
    args.push_back(obj_path);
    args.push_back(c_path);
    if (o.verbose) {
        for (const std::string& a : args) std::fprintf(stderr, "%s ", a.c_str());
        std::fprintf(stderr, "\n");
    }
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(&a[0]);
    argv.push_back(nullptr);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ);
    if (rc != 0) {
        std::fprintf(stderr, "%s: cannot run %s: %s\n", g_prog, argv[0], std::strerror(rc));
        return false;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return false;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "%s: %s failed on the generated C\n", g_prog, argv[0]);
        return false;
    }
    return true;
}

bool parse_args(int argc, char** argv, Options* o)
{
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&](std::string* dst) {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "%s: %s needs a value\n", g_prog, a.c_str());
                return false;
            }
            *dst = argv[++i];
            return true;
        };
        if (a == "-c") {
            o->mode = Options::object;
        } else if (a == "-S" || a == "--emit-c") {
            o->mode = Options::c_source;
        } else if (a == "-E") {
            o->mode = Options::preprocess;
        } else if (a == "-o") {
            if (!value(&o->out)) return false;
        } else if (a == "-I") {
            std::string d;
            if (!value(&d)) return false;
            o->include_dirs.push_back(d);
        } else if (a.compare(0, 2, "-I") == 0) {
            o->include_dirs.push_back(a.substr(2));
        } else if (a == "--name") {
            if (!value(&o->name)) return false;
        } else if (a == "-MD") {
            o->depfile = true;
        } else if (a == "-MF") {
            o->depfile = true;
            if (!value(&o->depfile_path)) return false;
        } else if (a == "--cc") {
            if (!value(&o->cc)) return false;
        } else if (a == "-v") {
            o->verbose = true;
        } else if (a == "-h" || a == "--help") {
            usage(stdout);
            std::exit(0);
        } else if (!a.empty() && a[0] == '-' && a != "-") {
            std::fprintf(stderr, "%s: unknown option %s\n", g_prog, a.c_str());
            return false;
        } else {
            o->inputs.push_back(a);
        }
    }
    if (o->inputs.empty()) {
        std::fprintf(stderr, "%s: no input file\n", g_prog);
        return false;
    }
    if (!o->name.empty() && o->inputs.size() > 1) {
        std::fprintf(stderr, "%s: --name needs exactly one input file\n", g_prog);
        return false;
    }
    return true;
}

std::string default_output(const Options& o)
{
    if (o.mode == Options::preprocess) return "-";
    std::string base = basename_of(o.inputs[0]);
    std::size_t dot = base.rfind('.');
    if (dot != std::string::npos && dot > 0) base = base.substr(0, dot);
    return base + (o.mode == Options::object ? ".o" : ".c");
}

}  // namespace

int main(int argc, char** argv)
{
    Options o;
    if (!parse_args(argc, argv, &o)) {
        usage(stderr);
        return 2;
    }
    if (o.out.empty()) o.out = default_output(o);

    // The first file's folder is searched as clopen's -I <file's folder> would.
    std::vector<std::string> dirs;
    std::vector<std::string> names, sources;
    std::vector<std::string> deps;
    bool ok = true;
    for (const std::string& in : o.inputs) {
        dirs = {stdcl::dirname_of(in)};
        dirs.insert(dirs.end(), o.include_dirs.begin(), o.include_dirs.end());
        Inliner inl(dirs);
        std::string text = inl.run(in);
        ok = ok && inl.ok;
        names.push_back(o.name.empty() ? basename_of(in) : o.name);
        sources.push_back(text);
        deps.insert(deps.end(), inl.deps.begin(), inl.deps.end());
    }
    if (!ok) return 1;

    if (o.mode == Options::preprocess) {
        std::string all;
        for (const std::string& s : sources) all += s;
        if (!write_text(o.out, all)) return 1;
    } else {
        std::string c = make_c(names, sources, o.inputs);
        if (o.mode == Options::c_source) {
            if (!write_text(o.out, c)) return 1;
        } else {
            const char* t = std::getenv("TMPDIR");
            std::string tmpl = std::string(t && *t ? t : "/tmp") + "/clcc-XXXXXX.c";
            std::vector<char> buf(tmpl.begin(), tmpl.end());
            buf.push_back('\0');
            int fd = ::mkstemps(buf.data(), 2);
            if (fd < 0) {
                std::fprintf(stderr, "%s: cannot create a temporary file: %s\n", g_prog, std::strerror(errno));
                return 1;
            }
            ::close(fd);
            std::string c_path = buf.data();
            bool good = write_text(c_path, c) && compile_c(o, c_path, o.out);
            ::unlink(c_path.c_str());
            if (!good) {
                ::unlink(o.out.c_str());
                return 1;
            }
        }
    }

    if (o.depfile && o.out != "-") {
        std::string path = o.depfile_path.empty() ? o.out + ".d" : o.depfile_path;
        std::string d = make_escape(o.out) + ":";
        std::set<std::string> seen;
        for (const std::string& f : deps)
            if (seen.insert(f).second) d += " " + make_escape(f);
        d += "\n";
        seen.clear();
        // Each header as a target with no recipe, so deleting one does not
        // stop make (as gcc -MP does).
        for (std::size_t i = 0; i < deps.size(); ++i)
            if (seen.insert(deps[i]).second && i > 0 &&
                std::find(o.inputs.begin(), o.inputs.end(), deps[i]) == o.inputs.end())
                d += make_escape(deps[i]) + ":\n";
        if (!write_text(path, d)) return 1;
    }
    return 0;
}
