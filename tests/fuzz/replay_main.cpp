// SPDX-License-Identifier: MIT
// replay_main.cpp: a main for the fuzz targets without libFuzzer, so that
// make check can run them with the gcc-built library (build/lib/libstdcl.a)
// in seconds instead of building the library again with clang.
//
//   build/fuzz-replay/replay_<name> [-m N] [-s SEED] [-x DICT] PATH...
//
// Each PATH is an input file or a folder of them (the seeds,
// tests/fuzz/corpus/<name>/).  Every input is run as it is, then N mutants
// of it (default 0): bytes flipped, inserted, removed or repeated, a run of
// another input spliced in, a word of DICT (libFuzzer's dictionary format,
// tests/fuzz/<name>.dict) put in.  The mutants come from a fixed seed (-s),
// so a run is the same every time and a failure is rerun by its command
// line; a failed check aborts (as under libFuzzer) after this program has
// written the input that failed to $REPLAY_ARTIFACTS/failed-input (default
// ./failed-input).  make fuzz, with libFuzzer and the sanitizers, is the
// deep search; this is the broad one.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

std::string g_current;  // the input being run, for the abort handler
std::string g_artifact;

void on_abort(int sig)
{
    FILE* f = std::fopen(g_artifact.c_str(), "wb");
    if (f) {
        std::fwrite(g_current.data(), 1, g_current.size(), f);
        std::fclose(f);
        std::fprintf(stderr, "replay: the input that failed is in %s\n", g_artifact.c_str());
    }
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

bool read_file(const std::string& path, std::string* out)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    std::ostringstream s;
    s << in.rdbuf();
    *out = s.str();
    return true;
}

void collect(const std::string& path, std::vector<std::string>* files)
{
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
        std::fprintf(stderr, "replay: %s: %s\n", path.c_str(), std::strerror(errno));
        std::exit(2);
    }
    if (!S_ISDIR(st.st_mode)) {
        files->push_back(path);
        return;
    }
    DIR* d = ::opendir(path.c_str());
    if (!d) return;
    std::vector<std::string> names;
    while (struct dirent* e = ::readdir(d))
        if (e->d_name[0] != '.') names.push_back(e->d_name);
    ::closedir(d);
    std::sort(names.begin(), names.end());
    for (const std::string& n : names) collect(path + "/" + n, files);
}

// A libFuzzer dictionary: one "word" a line, in double quotes, with \\, \"
// and \xHH escapes; other lines are comments.
std::vector<std::string> read_dict(const std::string& path)
{
    std::vector<std::string> words;
    std::string text;
    if (!read_file(path, &text)) {
        std::fprintf(stderr, "replay: cannot read the dictionary %s\n", path.c_str());
        std::exit(2);
    }
    std::istringstream lines(text);
    std::string line;
    while (std::getline(lines, line)) {
        std::size_t first = line.find_first_not_of(" \t");
        if (first == std::string::npos || line[first] == '#') continue;
        std::size_t q = line.find('"');
        std::size_t end = line.rfind('"');
        if (q == std::string::npos || end <= q) continue;
        std::string w;
        for (std::size_t i = q + 1; i < end; ++i) {
            if (line[i] == '\\' && i + 1 < end) {
                char c = line[++i];
                if (c == 'x' && i + 2 < end) {
                    w += static_cast<char>(std::strtol(line.substr(i + 1, 2).c_str(), nullptr, 16));
                    i += 2;
                } else {
                    w += c;
                }
            } else {
                w += line[i];
            }
        }
        if (!w.empty()) words.push_back(w);
    }
    return words;
}

struct Rng {
    std::uint64_t s;
    std::uint64_t next()
    {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return s;
    }
    std::size_t below(std::size_t n) { return n ? static_cast<std::size_t>(next() % n) : 0; }
};

std::string mutate(const std::string& in, const std::vector<std::string>& all, const std::vector<std::string>& dict,
                   Rng& r)
{
    std::string s = in;
    int steps = 1 + static_cast<int>(r.below(4));
    for (int k = 0; k < steps; ++k) {
        std::size_t at = r.below(s.size() + 1);
        switch (r.below(7)) {
        case 0:  // flip a bit
            if (!s.empty()) s[r.below(s.size())] ^= static_cast<char>(1u << r.below(8));
            break;
        case 1:  // a random byte in
            s.insert(at, 1, static_cast<char>(r.below(256)));
            break;
        case 2:  // a run out
            if (!s.empty()) s.erase(r.below(s.size()), 1 + r.below(8));
            break;
        case 3:  // a run repeated
            if (!s.empty()) {
                std::size_t b = r.below(s.size());
                std::string run = s.substr(b, 1 + r.below(16));
                s.insert(at, run);
            }
            break;
        case 4:  // a run of another input
            if (!all.empty()) {
                const std::string& o = all[r.below(all.size())];
                if (!o.empty()) {
                    std::size_t b = r.below(o.size());
                    s.insert(at, o.substr(b, 1 + r.below(64)));
                }
            }
            break;
        case 5:  // a dictionary word
            if (!dict.empty()) s.insert(at, dict[r.below(dict.size())]);
            break;
        default:  // a byte that often matters to a text format
            s.insert(at, 1, "\n\\\"'/*#<> \r\t\0"[r.below(13)]);
            break;
        }
        if (s.size() > 1 << 16) s.resize(1 << 16);
    }
    return s;
}

void run(const std::string& input)
{
    g_current = input;
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(g_current.data()), g_current.size());
}

}  // namespace

int main(int argc, char** argv)
{
    long mutants = 0;
    std::uint64_t seed = 1;
    std::string dict_path;
    std::vector<std::string> paths;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "-m" && i + 1 < argc) mutants = std::strtol(argv[++i], nullptr, 10);
        else if (a == "-s" && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 10);
        else if (a == "-x" && i + 1 < argc) dict_path = argv[++i];
        else if (!a.empty() && a[0] == '-') {
            std::fprintf(stderr, "usage: %s [-m MUTANTS] [-s SEED] [-x DICT] PATH...\n", argv[0]);
            return 2;
        } else paths.push_back(a);
    }
    if (paths.empty() || mutants < 0) {
        std::fprintf(stderr, "usage: %s [-m MUTANTS] [-s SEED] [-x DICT] PATH...\n", argv[0]);
        return 2;
    }
    const char* dir = std::getenv("REPLAY_ARTIFACTS");
    g_artifact = std::string(dir && *dir ? dir : ".") + "/failed-input";
    std::signal(SIGABRT, on_abort);
    std::signal(SIGSEGV, on_abort);
    std::signal(SIGBUS, on_abort);
    std::signal(SIGFPE, on_abort);

    if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
    std::vector<std::string> files;
    for (const std::string& p : paths) collect(p, &files);
    std::vector<std::string> inputs;
    for (const std::string& f : files) {
        std::string text;
        if (!read_file(f, &text)) {
            std::fprintf(stderr, "replay: cannot read %s\n", f.c_str());
            return 2;
        }
        inputs.push_back(text);
    }
    std::vector<std::string> dict;
    if (!dict_path.empty()) dict = read_dict(dict_path);

    Rng r{seed * 0x9e3779b97f4a7c15ull + 1};
    long runs = 0;
    for (const std::string& in : inputs) {
        run(in);
        ++runs;
        for (long m = 0; m < mutants; ++m) {
            run(mutate(in, inputs, dict, r));
            ++runs;
        }
    }
    std::printf("replay: %zu inputs, %ld runs (seed %llu), no check failed\n", inputs.size(), runs,
                static_cast<unsigned long long>(seed));
    return 0;
}
