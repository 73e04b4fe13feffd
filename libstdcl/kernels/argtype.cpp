// SPDX-License-Identifier: MIT
// argtype.cpp: kernel parameter types (built-in names, vectors, typedefs found in
// the program's source) and the conversion of a host value to a parameter's type,
// as C converts an argument to a prototyped parameter.
#include "kernels/argtype.hpp"

#include "helpers/diag.hpp"
#include "helpers/fsutil.hpp"
#include "helpers/include_scan.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>

namespace stdcl {

namespace {

bool ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }

// The tokens of an OpenCL C text that a typedef is made of: identifiers, numbers
// and single punctuation characters; comments, string and character literals and
// preprocessor lines (with their continuations) dropped.
std::vector<std::string> tokens_of(const std::string& s)
{
    std::vector<std::string> out;
    size_t i = 0, n = s.size();
    bool line_start = true;
    while (i < n) {
        char c = s[i];
        if (c == '\n') {
            line_start = true;
            ++i;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            ++i;
            continue;
        }
        if (c == '/' && i + 1 < n && s[i + 1] == '/') {
            while (i < n && s[i] != '\n') i += (s[i] == '\\' && i + 1 < n) ? 2 : 1;
            continue;
        }
        if (c == '/' && i + 1 < n && s[i + 1] == '*') {
            size_t e = s.find("*/", i + 2);
            i = e == std::string::npos ? n : e + 2;
            continue;
        }
        if (c == '#' && line_start) {  // a directive: to the end of its (joined) line
            while (i < n && s[i] != '\n') {
                if (s[i] == '/' && i + 1 < n && s[i + 1] == '*') {
                    size_t e = s.find("*/", i + 2);
                    i = e == std::string::npos ? n : e + 2;
                    continue;
                }
                i += (s[i] == '\\' && i + 1 < n) ? 2 : 1;
            }
            continue;
        }
        line_start = false;
        if (c == '"' || c == '\'') {
            ++i;
            while (i < n && s[i] != c && s[i] != '\n') i += (s[i] == '\\' && i + 1 < n) ? 2 : 1;
            ++i;
            continue;
        }
        if (c == '\\') {  // a line continuation outside a directive
            ++i;
            continue;
        }
        if (ident_char(c)) {
            size_t b = i;
            while (i < n && ident_char(s[i])) ++i;
            out.emplace_back(s, b, i - b);
            continue;
        }
        out.emplace_back(1, c);
        ++i;
    }
    return out;
}

// Adds the typedefs among toks to t.
void collect_typedefs(const std::vector<std::string>& toks, TypedefTable& t)
{
    for (size_t i = 0; i < toks.size(); ++i) {
        if (toks[i] != "typedef") continue;
        // The declaration, to its ';' at depth 0.
        size_t j = i + 1;
        int depth = 0;
        size_t brace_end = 0;  // one past the '}' closing a struct body
        std::string tag;  // "struct", "union" or "enum" with a body
        for (; j < toks.size(); ++j) {
            const std::string& k = toks[j];
            if (k == "{" || k == "(" || k == "[") {
                if (k == "{" && depth == 0 && tag.empty()) {
                    for (size_t q = i + 1; q < j; ++q)
                        if (toks[q] == "struct" || toks[q] == "union" || toks[q] == "enum") tag = toks[q];
                    if (tag.empty()) tag = "struct";
                }
                ++depth;
            } else if (k == "}" || k == ")" || k == "]") {
                if (--depth == 0 && k == "}") brace_end = j + 1;
                if (depth < 0) break;
            } else if (k == ";" && depth == 0) {
                break;
            }
        }
        if (j >= toks.size() || depth != 0) break;  // unterminated: nothing more to find
        // Base type tokens, then declarators separated by commas.
        std::string base;
        size_t d = i + 1;
        if (brace_end) {
            base = tag == "enum" ? "int" : tag;
            d = brace_end;
        } else {
            // The base type runs to the first declarator: the tokens before the
            // last identifier of the first comma-separated part, less its '*'s.
            size_t first_end = d;
            int dd = 0;
            while (first_end < j && !(toks[first_end] == "," && dd == 0)) {
                if (toks[first_end] == "(" || toks[first_end] == "[") ++dd;
                if (toks[first_end] == ")" || toks[first_end] == "]") --dd;
                ++first_end;
            }
            size_t name_at = first_end;
            for (size_t q = d; q < first_end; ++q)
                if (ident_start(toks[q][0]) && toks[q] != "const" && toks[q] != "volatile" && toks[q] != "restrict")
                    name_at = q;
            size_t base_end = name_at;
            for (size_t q = d; q < name_at; ++q)
                if (toks[q] == "*" || toks[q] == "(") {
                    base_end = q;
                    break;
                }
            for (size_t q = d; q < base_end; ++q) base += (base.empty() ? "" : " ") + toks[q];
            d = base_end;
        }
        // Each declarator: its name (the last identifier), a pointer or an array
        // or a function type when it has '*', '[' or '('.
        size_t q = d;
        while (q < j) {
            std::string name;
            bool derived = false;
            int dd = 0;
            for (; q < j && !(toks[q] == "," && dd == 0); ++q) {
                const std::string& k = toks[q];
                if (k == "(" || k == "[") ++dd, derived = true;
                if (k == ")" || k == "]") --dd;
                if (k == "*") derived = true;
                if (dd == 0 && ident_start(k[0]) && k != "const" && k != "volatile" && k != "restrict") name = k;
            }
            if (!name.empty() && !base.empty()) t[name].push_back(derived ? std::string("<derived>") : base);
            ++q;  // past the comma
        }
        i = j;
    }
}

void scan_file(const std::string& text, const std::string& dir, const std::vector<std::string>& dirs,
               std::set<std::string>& seen, TypedefTable& t, int depth)
{
    collect_typedefs(tokens_of(text), t);
    if (depth > 16) return;
    for (const IncludeDirective& inc : find_includes(text)) {
        if (!inc.delim) continue;  // computed: the compiler's business
        std::string path = resolve_include(dir, inc.delim, inc.name, dirs);
        if (path.empty() || !seen.insert(path).second) continue;
        std::string body;
        if (!read_file(path, &body)) continue;
        scan_file(body, dirname_of(path), dirs, seen, t, depth + 1);
    }
}

struct Builtin {
    const char* name;
    ParamType::Class cls;
    size_t size;  // 0: the device's address width
};
constexpr Builtin kBuiltins[] = {
    {"char", ParamType::sint, 1},      {"uchar", ParamType::uint, 1},     {"short", ParamType::sint, 2},
    {"ushort", ParamType::uint, 2},    {"int", ParamType::sint, 4},       {"uint", ParamType::uint, 4},
    {"long", ParamType::sint, 8},      {"ulong", ParamType::uint, 8},     {"float", ParamType::real, 4},
    {"double", ParamType::real, 8},    {"half", ParamType::half, 2},      {"size_t", ParamType::uint, 0},
    {"uintptr_t", ParamType::uint, 0}, {"ptrdiff_t", ParamType::sint, 0}, {"intptr_t", ParamType::sint, 0},
};

// "unsigned int" -> "uint", qualifiers and extra spaces dropped.
std::string canonical(const std::string& name)
{
    std::vector<std::string> words;
    size_t i = 0;
    while (i < name.size()) {
        if (ident_char(name[i])) {
            size_t b = i;
            while (i < name.size() && ident_char(name[i])) ++i;
            std::string w = name.substr(b, i - b);
            if (w != "const" && w != "volatile" && w != "restrict" && w != "__private" && w != "private" &&
                w != "signed")
                words.push_back(w);
        } else if (name[i] == '*') {
            words.emplace_back("*");
            ++i;
        } else {
            ++i;
        }
    }
    if (words.empty()) return name.find("signed") != std::string::npos ? "int" : "";
    bool unsig = words[0] == "unsigned";
    if (unsig) words.erase(words.begin());
    if (words.size() >= 2 && words[words.size() - 1] == "int" &&
        (words[words.size() - 2] == "short" || words[words.size() - 2] == "long"))
        words.pop_back();  // "short int", "long int"
    std::string s;
    for (const auto& w : words) s += (s.empty() || w == "*" ? "" : " ") + w;
    if (unsig) {
        if (s.empty() || s == "int") return "uint";
        if (s == "char" || s == "short" || s == "long") return "u" + s;
    }
    return s;
}

ParamType resolve(const std::string& raw, const TypedefTable* typedefs, size_t addr_bytes, int depth)
{
    ParamType p;
    std::string name = canonical(raw);
    if (name.empty()) return p;
    if (name.back() == '*') {
        p.cls = ParamType::pointer;
        p.size = addr_bytes;
        return p;
    }
    if (name.compare(0, 7, "struct ") == 0 || name.compare(0, 6, "union ") == 0 || name == "struct" ||
        name == "union" || name == "<derived>") {
        p.cls = ParamType::other;
        return p;
    }
    if (name.compare(0, 5, "enum ") == 0) name = "int";
    for (const Builtin& b : kBuiltins)
        if (name == b.name) {
            p.cls = b.cls;
            p.size = b.size ? b.size : addr_bytes;
            return p;
        }
    // A vector: a built-in scalar name and 2, 3, 4, 8 or 16.
    size_t digits = name.size();
    while (digits > 0 && name[digits - 1] >= '0' && name[digits - 1] <= '9') --digits;
    if (digits < name.size() && digits > 0) {
        std::string elem = name.substr(0, digits);
        int count = std::atoi(name.c_str() + digits);
        if (count == 2 || count == 3 || count == 4 || count == 8 || count == 16)
            for (const Builtin& b : kBuiltins)
                if (elem == b.name && b.size) {
                    p.cls = ParamType::vector;
                    p.size = b.size * size_t(count == 3 ? 4 : count);
                    return p;
                }
    }
    if (!typedefs || depth > 8) return p;
    auto it = typedefs->find(name);
    if (it == typedefs->end()) return p;
    ParamType agreed;
    bool first = true;
    for (const std::string& def : it->second) {
        ParamType d = resolve(def, typedefs, addr_bytes, depth + 1);
        if (d.resolved.empty()) d.resolved = canonical(def);
        if (first) {
            agreed = d;
            first = false;
        } else if (d.cls != agreed.cls || d.size != agreed.size) {
            return ParamType{};  // defined differently under #if: not known
        }
    }
    return agreed;
}

// A value read as the widest type of its class.
struct Num {
    int cls;
    long long s = 0;
    unsigned long long u = 0;
    long double r = 0;
};

bool read_num(int cls, size_t size, const void* v, Num* n)
{
    n->cls = cls;
    if (cls == v_sint || cls == v_uint) {
        unsigned long long u = 0;
        switch (size) {
        case 1: u = *static_cast<const std::uint8_t*>(v); break;
        case 2: {
            std::uint16_t x;
            std::memcpy(&x, v, 2);
            u = x;
        } break;
        case 4: {
            std::uint32_t x;
            std::memcpy(&x, v, 4);
            u = x;
        } break;
        case 8: {
            std::uint64_t x;
            std::memcpy(&x, v, 8);
            u = x;
        } break;
        default: return false;
        }
        if (cls == v_sint && size < 8 && (u >> (size * 8 - 1)) & 1) u |= ~0ull << (size * 8);  // sign-extend
        n->u = u;
        n->s = (long long)u;
        return true;
    }
    if (cls == v_real) {
        if (size == sizeof(float)) {
            float x;
            std::memcpy(&x, v, size);
            n->r = x;
            return true;
        }
        if (size == sizeof(double)) {
            double x;
            std::memcpy(&x, v, size);
            n->r = x;
            return true;
        }
        if (size == sizeof(long double)) {
            long double x;
            std::memcpy(&x, v, size);
            n->r = x;
            return true;
        }
    }
    return false;
}

// IEEE binary16 from a float, rounded to nearest even.
std::uint16_t to_half(float f)
{
    std::uint32_t x;
    std::memcpy(&x, &f, 4);
    std::uint32_t sign = (x >> 16) & 0x8000u;
    std::uint32_t exp = (x >> 23) & 0xffu;
    std::uint32_t man = x & 0x7fffffu;
    if (exp == 0xff) return std::uint16_t(sign | 0x7c00u | (man ? 0x200u : 0));
    int e = int(exp) - 127 + 15;
    if (e >= 31) return std::uint16_t(sign | 0x7c00u);
    if (e <= 0) {
        if (e < -10) return std::uint16_t(sign);
        man |= 0x800000u;
        int shift = 14 - e;
        std::uint32_t h = man >> shift, rest = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
        if (rest > mid || (rest == mid && (h & 1))) ++h;
        return std::uint16_t(sign | h);
    }
    std::uint32_t h = (std::uint32_t(e) << 10) | (man >> 13), rest = man & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1))) ++h;
    return std::uint16_t(sign | h);
}

// The value n as C converts it to p (arithmetic, p.size bytes) into out.
void write_num(const Num& n, const ParamType& p, unsigned char* out)
{
    if (p.cls == ParamType::real || p.cls == ParamType::half) {
        long double r = n.cls == v_real ? n.r : n.cls == v_sint ? (long double)n.s : (long double)n.u;
        if (p.cls == ParamType::half) {
            std::uint16_t h = to_half(float(r));
            std::memcpy(out, &h, 2);
        } else if (p.size == 4) {
            float f = float(r);
            std::memcpy(out, &f, 4);
        } else {
            double d = double(r);
            std::memcpy(out, &d, 8);
        }
        return;
    }
    // An integer: from a real, truncated toward zero (C leaves values out of range
    // undefined: they wrap here); from an integer, modulo 2^bits.
    unsigned long long u;
    if (n.cls == v_real) {
        long double r = std::trunc(n.r);
        if (std::isnan(r))
            u = 0;
        else if (r < 0)
            u = (unsigned long long)(long long)(r < -9.2e18L ? -9.2e18L : r);
        else
            u = (unsigned long long)(r > 1.8e19L ? 1.8e19L : r);
    } else {
        u = n.u;
    }
    switch (p.size) {
    case 1: {
        std::uint8_t x = std::uint8_t(u);
        std::memcpy(out, &x, 1);
    } break;
    case 2: {
        std::uint16_t x = std::uint16_t(u);
        std::memcpy(out, &x, 2);
    } break;
    case 4: {
        std::uint32_t x = std::uint32_t(u);
        std::memcpy(out, &x, 4);
    } break;
    default: {
        std::uint64_t x = u;
        std::memcpy(out, &x, 8);
    } break;
    }
}

std::string num_text(const Num& n)
{
    if (n.cls == v_real) return strprintf("%.9Lg", n.r);
    if (n.cls == v_sint) return strprintf("%lld", n.s);
    return strprintf("%llu", n.u);
}

// "float 2.5": the converted value with the C name of its type.
std::string out_text(const ParamType& p, const unsigned char* out)
{
    Num n;
    if (p.cls == ParamType::half) {
        std::uint16_t h;
        std::memcpy(&h, out, 2);
        return strprintf("half 0x%04x", unsigned(h));
    }
    int cls = p.cls == ParamType::real ? v_real : p.cls == ParamType::sint ? v_sint : v_uint;
    read_num(cls, p.size, out, &n);
    return value_type_name(cls, p.size) + " " + num_text(n);
}

}  // namespace

TypedefTable scan_typedefs(const std::string& source, const std::string& dir, const std::vector<std::string>& dirs)
{
    TypedefTable t;
    std::set<std::string> seen;
    scan_file(source, dir, dirs, seen, t, 0);
    return t;
}

ParamType param_type(const std::string& name, const TypedefTable* typedefs, size_t addr_bytes)
{
    ParamType p = resolve(name, typedefs, addr_bytes, 0);
    if (p.resolved == canonical(name)) p.resolved.clear();
    return p;
}

std::string value_type_name(int cls, size_t size)
{
    switch (cls) {
    case v_sint:
        return size == 1 ? "signed char"
            : size == 2  ? "short"
            : size == 4  ? "int"
            : size == 8  ? "long"
                         : strprintf("%zu-byte signed integer", size);
    case v_uint:
        return size == 1 ? "unsigned char"
            : size == 2  ? "unsigned short"
            : size == 4  ? "unsigned int"
            : size == 8  ? "unsigned long"
                         : strprintf("%zu-byte unsigned integer", size);
    case v_real: return size == sizeof(float) ? "float" : size == sizeof(double) ? "double" : "long double";
    case v_pointer: return "pointer";
    case v_other: return strprintf("%zu-byte struct, union or vector", size);
    default: return strprintf("%zu-byte value", size);
    }
}

int convert_value(const ParamType& p, int cls, size_t size, const void* value, unsigned char* out, std::string* why,
                  std::string* note)
{
    if (p.size == size &&
        ((p.cls == ParamType::sint && cls == v_sint) || (p.cls == ParamType::uint && cls == v_uint) ||
         (p.cls == ParamType::real && cls == v_real)))
        return 0;  // the parameter's own type: passed as it is (every launch of a stream)
    bool arith_param =
        p.cls == ParamType::sint || p.cls == ParamType::uint || p.cls == ParamType::real || p.cls == ParamType::half;
    if (p.cls == ParamType::unknown) return 0;
    if (cls == v_unknown) {  // an untyped form (stdcl_forka, stdcl_arg_set): sizes only
        if (p.size && size != p.size && p.cls != ParamType::pointer) {
            *why = strprintf("a %zu-byte value was given for a %zu-byte parameter", size, p.size);
            return -1;
        }
        return 0;
    }
    bool arith_value = cls == v_sint || cls == v_uint || cls == v_real;
    if (arith_param) {
        Num n;
        if (!arith_value || !read_num(cls, size, value, &n)) {
            *why = strprintf("a %s was given", value_type_name(cls, size).c_str());
            return -1;
        }
        bool same = (p.cls == ParamType::sint && cls == v_sint && p.size == size) ||
            (p.cls == ParamType::uint && cls == v_uint && p.size == size) ||
            (p.cls == ParamType::real && cls == v_real && p.size == size);
        if (same) return 0;
        write_num(n, p, out);
        *note = strprintf("%s %s converted to %s", value_type_name(cls, size).c_str(), num_text(n).c_str(),
                          out_text(p, out).c_str());
        return 1;
    }
    if (p.cls == ParamType::vector || p.cls == ParamType::other) {
        if (cls != v_other) {
            *why = strprintf("a %s was given", value_type_name(cls, size).c_str());
            return -1;
        }
        if (p.size && size != p.size) {
            *why = strprintf("a %s was given for a %zu-byte parameter", value_type_name(cls, size).c_str(), p.size);
            return -1;
        }
        return 0;
    }
    return 0;  // pointers: the caller binds them
}

}  // namespace stdcl
