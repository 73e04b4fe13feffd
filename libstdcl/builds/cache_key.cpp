// SPDX-License-Identifier: MIT
// cache_key.cpp: the program cache's key: include scanning, key text, and
// the description of what changed between two keys.
#include "builds/cache_key.hpp"
#include "config/config.hpp"

#include "helpers/digest.hpp"
#include "helpers/fsutil.hpp"
#include "helpers/include_scan.hpp"

#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

namespace stdcl {
namespace {

constexpr char k_key_header[] = "stdcl program cache key v1";
constexpr int k_max_include_depth = 200;

// Values are written on one line: escape backslashes and line breaks.
std::string escape(const std::string& s)
{
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '\n')
            out += "\\n";
        else if (c == '\r')
            out += "\\r";
        else
            out += c;
    }
    return out;
}

void scan_file(const std::string& text, const std::string& own_dir, const std::vector<std::string>& dirs, int depth,
               std::set<std::string>& seen, std::vector<IncludeRecord>& out)
{
    if (depth > k_max_include_depth) return;
    for (const IncludeDirective& d : find_includes(text)) {
        IncludeRecord rec;
        rec.spelled = d.delim == '"' ? "\"" + d.name + "\"" : d.delim == '<' ? "<" + d.name + ">" : d.name;
        std::string content;
        if (d.delim) {
            std::string found = resolve_include(own_dir, d.delim, d.name, dirs);
            if (!found.empty() && read_file(found, &content)) rec.path = found;
        }
        if (rec.path.empty()) {
            // Not found (or computed): the name is all the key can hold.
            std::string id = "missing " + rec.spelled + " from " + own_dir;
            if (seen.insert(id).second) out.push_back(rec);
            continue;
        }
        if (!seen.insert(rec.path).second) continue;
        rec.digest = digest_hex(content);
        out.push_back(rec);
        scan_file(content, dirname_of(rec.path), dirs, depth + 1, seen, out);
    }
}

// Splits a key text into component -> value.
std::map<std::string, std::string> components(const std::string& text)
{
    std::map<std::string, std::string> m;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line == k_key_header) continue;
        std::string comp, value;
        std::size_t sp = line.find(' ');
        comp = line.substr(0, sp);
        value = sp == std::string::npos ? "" : line.substr(sp + 1);
        if (comp == "device" || comp == "env") {
            // "device 3 ..." and "env NAME=..." are keyed by index / name.
            std::size_t sep = comp == "device" ? value.find(' ') : value.find('=');
            comp += " " + value.substr(0, sep);
            value = sep == std::string::npos ? "" : value.substr(sep + 1);
        } else if (comp == "include") {
            // "include <spelled> <path> <digest>" or "include <spelled> missing":
            // keyed by the name and file found, valued by the file's digest.
            std::size_t last = value.rfind(' ');
            std::string head = value.substr(0, last), tail = value.substr(last + 1);
            if (tail == "missing") {
                comp += " " + head;
                value = "missing";
            } else {
                comp += " " + head;  // the spelling and the path found
                value = tail;
            }
        }
        m[comp] = value;
    }
    return m;
}

}  // namespace

std::vector<IncludeRecord> scan_includes(const std::string& source, const std::vector<std::string>& dirs)
{
    std::vector<IncludeRecord> out;
    std::set<std::string> seen;
    scan_file(source, std::string(), dirs, 0, seen, out);
    return out;
}

std::vector<std::string> compiler_environment()
{
    static const char* const names[] = {// PoCL
                                        "POCL_EXTRA_BUILD_FLAGS", "POCL_WORK_GROUP_METHOD",
                                        "POCL_WORK_GROUP_SPECIALIZATION", "POCL_FULL_REPLICATION_THRESHOLD",
                                        "POCL_WILOOPS_MAX_UNROLL_COUNT", "POCL_BITCODE_FINALIZER",
                                        "POCL_MAX_WORK_GROUP_SIZE", "POCL_VECTORIZER_REMARKS",
                                        // Which work-group variants PoCL puts in the binaries we store
                                        "POCL_BINARY_SPECIALIZE_WG",
                                        // AMD, Intel, Mesa
                                        "AMD_OCL_BUILD_OPTIONS", "AMD_OCL_BUILD_OPTIONS_APPEND", "IGC_Options",
                                        "CLOVER_EXTRA_COMPILE_OPTIONS", "RUSTICL_CL_VERSION",
                                        // NVIDIA: the JIT target follows these
                                        "CUDA_FORCE_PTX_JIT", "CUDA_DISABLE_PTX_JIT"};
    return env_values(names, sizeof names / sizeof names[0]);
}

std::string make_key_text(const KeyParts& p)
{
    std::string t = k_key_header;
    t += "\nlibrary " + escape(p.library);
    t += "\nplatform " + escape(p.platform);
    for (std::size_t i = 0; i < p.devices.size(); ++i)
        t += "\ndevice " + std::to_string(i) + " " + escape(p.devices[i]);
    t += "\noptions " + escape(p.options);
    for (const std::string& e : p.env) t += "\nenv " + escape(e);
    t += "\nsource " + digest_hex(p.source) + " " + std::to_string(p.source.size());
    for (const IncludeRecord& r : p.includes) {
        if (r.path.empty())
            t += "\ninclude " + escape(r.spelled) + " missing";
        else
            t += "\ninclude " + escape(r.spelled) + " " + escape(r.path) + " " + r.digest;
    }
    t += "\n";
    return t;
}

std::string describe_key_change(const std::string& old_text, const std::string& new_text)
{
    std::map<std::string, std::string> a = components(old_text), b = components(new_text);
    std::string out;
    auto add = [&out](const std::string& s) {
        if (!out.empty()) out += ", ";
        out += s;
    };
    for (const auto& [comp, value] : b) {
        auto it = a.find(comp);
        if (it == a.end())
            add(comp + " (added)");
        else if (it->second != value)
            add(comp.compare(0, 8, "include ") == 0 ? comp + " (content changed)" : comp);
    }
    for (const auto& [comp, value] : a)
        if (!b.count(comp)) add(comp + " (removed)");
    return out;
}

std::string key_source_digest(const std::string& key_text)
{
    std::size_t pos = key_text.find("\nsource ");
    if (pos == std::string::npos) return "";
    pos += 8;
    std::size_t end = key_text.find_first_of(" \n", pos);
    return key_text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
}

}  // namespace stdcl
