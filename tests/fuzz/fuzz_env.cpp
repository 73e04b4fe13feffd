// SPDX-License-Identifier: MIT
// fuzz_env.cpp: the environment reader (libstdcl/config/config.cpp, config/config.hpp:
// parse_switch, parse_uint, parse_size, env_switch, env_setting, env_values) and
// the program cache's settings built on it (cache_store.cpp:
// cache_config_from_env), fed an environment.
//
// Input: text, one variable a line, NAME=VALUE (split at the first '='; a
// value ends at a NUL byte, as in a real environment).  The variables below
// are set as the lines say and every other one of them is unset; a line that
// names none of them (a "# comment" in the seeds) only feeds the parsers.
// Every line's value (the whole line when it has no '=') also goes through
// each value parser.
//
// Checks, besides no crash and no sanitizer report, each parser against a
// model of its documented grammar, written here from config.hpp:
//   - parse_switch: unset for NULL and "", on for 1/on/yes/true, off for
//     0/off/no/false (any case), invalid for anything else;
//   - parse_uint(v, max): decimal digits only, the value exactly, refused
//     above max (two maxima);
//   - parse_size: spaces, digits, an optional K/M/G/T (any case) with an
//     optional "i" + "B" or "B", spaces (config.cpp's grammar, wider than
//     the header says: it takes "12b", " 1 k", lower case); the value is
//     digits * 1024^k exactly, and anything that does not fit in 64 bits is
//     refused.  (It also refuses a few 20-digit values just below 2^64: that
//     conservatism is allowed.);
//   - env_setting: STDX_KEY, else the key=value clause of STDX (clauses
//     split at ':', spaces and tabs around them dropped, key matched in any
//     case), else for no key the plain STDX or its bare clause;
//   - env_switch: parse_switch's answer, the default otherwise;
//   - cache_config_from_env: on unless STDCL_CACHE is off or there is no
//     folder; the folder from STDCL_CACHE_DIR, else XDG_CACHE_HOME/stdcl (an
//     absolute one), else HOME/.cache/stdcl, without trailing slashes; the
//     bound from STDCL_CACHE_MAX when parse_size takes it (else 256M and a
//     warning);
//   - env_values lists exactly the variables that are set.
// Not reachable for fuzzing (read once per process, or in an anonymous
// namespace): settings() (read_settings in config.cpp) and STDCL_TRACE's
// category list (parse_trace_mask in diag.cpp); see tests/fuzz/README.
#include "fuzz_common.hpp"

#include "builds/cache_store.hpp"
#include "config/config.hpp"

#include <strings.h>

#include <cctype>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

namespace {

// The variables this target sets.  STDGPU* are read by the library only
// when it loads (the default contexts), so setting them later is harmless.
const char* const k_vars[] = {
    "STDCL_CACHE", "STDCL_CACHE_DIR", "XDG_CACHE_HOME",       "HOME",        "STDCL_CACHE_MAX",
    "STDGPU",      "STDGPU_MAX_NDEV", "STDGPU_PLATFORM_NAME", "STDGPU_LOCK", "STDCL_FUZZ_SWITCH",
};
const char* const k_keys[] = {nullptr, "max_ndev", "platform_name", "lock"};

bool is_one_of(const char* v, std::initializer_list<const char*> words)
{
    for (const char* w : words)
        if (strcasecmp(v, w) == 0) return true;
    return false;
}

stdcl::Switch model_switch(const char* v)
{
    if (!v || !*v) return stdcl::Switch::unset;
    if (is_one_of(v, {"1", "on", "yes", "true"})) return stdcl::Switch::on;
    if (is_one_of(v, {"0", "off", "no", "false"})) return stdcl::Switch::off;
    return stdcl::Switch::invalid;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Decimal digits only; the value, or -1 for more than 128 bits can hold.
bool model_uint(const std::string& v, unsigned __int128* out)
{
    if (v.empty()) return false;
    unsigned __int128 n = 0;
    for (char c : v) {
        if (!is_digit(c)) return false;
        if (n > (~static_cast<unsigned __int128>(0)) / 100)
            n = ~static_cast<unsigned __int128>(0) / 100;
        else
            n = n * 10 + static_cast<unsigned>(c - '0');
    }
    *out = n;
    return true;
}

// parse_size's grammar: the exact value to *out (saturated far above 2^64),
// and the value of the digits alone to *digits.
bool model_size(const std::string& v, unsigned __int128* out, unsigned __int128* digits)
{
    std::size_t i = 0, n = v.size();
    while (i < n && v[i] == ' ') ++i;
    std::size_t d = i;
    while (i < n && is_digit(v[i])) ++i;
    if (i == d) return false;
    model_uint(v.substr(d, i - d), digits);
    int shift = 0;
    if (i < n) {
        switch (v[i]) {
        case 'k':
        case 'K': shift = 10; break;
        case 'm':
        case 'M': shift = 20; break;
        case 'g':
        case 'G': shift = 30; break;
        case 't':
        case 'T': shift = 40; break;
        default: break;
        }
    }
    if (shift) {
        ++i;
        if (i < n && (v[i] == 'i' || v[i] == 'I')) {
            ++i;
            if (i >= n || (v[i] != 'b' && v[i] != 'B')) return false;
        }
    }
    if (i < n && (v[i] == 'b' || v[i] == 'B')) ++i;
    while (i < n && v[i] == ' ') ++i;
    if (i != n) return false;
    const unsigned __int128 cap = static_cast<unsigned __int128>(1) << 100;
    *out = *digits > cap ? cap : *digits << shift;
    return true;
}

std::string trimmed(const std::string& s)
{
    std::size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

// env_setting as config.hpp describes it; *found false for NULL.
std::string model_setting(const std::string& var, const char* key, bool* found)
{
    *found = true;
    if (key) {
        std::string name = var + "_";
        for (const char* k = key; *k; ++k) name += static_cast<char>(std::toupper(static_cast<unsigned char>(*k)));
        if (const char* v = std::getenv(name.c_str())) return v;
    }
    const char* whole = std::getenv(var.c_str());
    if (!whole) {
        *found = false;
        return std::string();
    }
    std::string w = whole;
    if (w.find(':') == std::string::npos && w.find('=') == std::string::npos) {
        *found = !key;
        return key ? std::string() : w;
    }
    std::size_t pos = 0;
    while (pos <= w.size()) {
        std::size_t end = w.find(':', pos);
        if (end == std::string::npos) end = w.size();
        std::string clause = trimmed(w.substr(pos, end - pos));
        pos = end + 1;
        if (clause.empty()) continue;
        std::size_t eq = clause.find('=');
        if (eq == std::string::npos) {
            if (!key) return clause;
        } else if (key && eq == std::strlen(key) && strncasecmp(clause.c_str(), key, eq) == 0) {
            return clause.substr(eq + 1);
        }
    }
    *found = false;
    return std::string();
}

void check_value(const std::string& v)
{
    const char* s = v.c_str();
    stdcl::Switch sw = stdcl::parse_switch(s);
    FUZZ_CHECK(sw == model_switch(s), "parse_switch('%s') = %d", s, static_cast<int>(sw));

    unsigned __int128 want = 0;
    bool want_ok = model_uint(v, &want);
    for (unsigned long long max : {1ull << 20, ~0ull}) {
        unsigned long long got = 0;
        bool ok = stdcl::parse_uint(s, max, &got);
        FUZZ_CHECK(ok == (want_ok && want <= max), "parse_uint('%s', %llu) = %d", s, max, ok);
        FUZZ_CHECK(!ok || got == want, "parse_uint('%s') = %llu", s, got);
    }

    std::uint64_t bytes = 0;
    bool ok = stdcl::parse_size(s, &bytes);
    unsigned __int128 digits = 0;
    want_ok = model_size(v, &want, &digits);
    FUZZ_CHECK(!ok || (want_ok && want == bytes), "parse_size('%s') = %llu", s, static_cast<unsigned long long>(bytes));
    // A value that fits may be refused only when its digits come within 10 of
    // 2^64 (see the top).
    const unsigned __int128 max64 = ~0ull, near = max64 - max64 % 10;
    FUZZ_CHECK(ok || !want_ok || want > max64 || digits >= near, "parse_size('%s') refused", s);
    if (ok && bytes < near) {
        // The same value as plain digits.
        std::string plain = std::to_string(bytes);
        std::uint64_t again = 0;
        FUZZ_CHECK(stdcl::parse_size(plain.c_str(), &again) && again == bytes, "parse_size('%s') != parse_size('%s')",
                   plain.c_str(), s);
    }
}

void check_cache_config()
{
    const stdcl::CacheConfig c = stdcl::cache_config_from_env();
    const char* on = std::getenv("STDCL_CACHE");
    const char* d = std::getenv("STDCL_CACHE_DIR");
    const char* x = std::getenv("XDG_CACHE_HOME");
    const char* h = std::getenv("HOME");
    const char* m = std::getenv("STDCL_CACHE_MAX");

    std::string dir;
    bool from_passwd = false;
    if (d && *d)
        dir = d;
    else if (x && x[0] == '/')
        dir = std::string(x) + "/stdcl";
    else if (h && *h)
        dir = std::string(h) + "/.cache/stdcl";
    else
        from_passwd = true;
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    if (!from_passwd) FUZZ_CHECK(c.dir == dir, "folder '%s', want '%s'", c.dir.c_str(), dir.c_str());

    bool off = model_switch(on) == stdcl::Switch::off;
    FUZZ_CHECK(c.enabled == (!off && !c.dir.empty()), "enabled %d with STDCL_CACHE='%s', folder '%s'", c.enabled,
               on ? on : "(unset)", c.dir.c_str());
    FUZZ_CHECK(c.enabled || !c.off_reason.empty(), "off without a reason");

    std::size_t warnings = model_switch(on) == stdcl::Switch::invalid;
    std::uint64_t want_max = stdcl::cache_default_max_bytes;
    if (m && *m) {
        std::uint64_t v = 0;
        if (stdcl::parse_size(m, &v))
            want_max = v;
        else
            ++warnings;
    }
    FUZZ_CHECK(c.max_bytes == want_max, "bound %llu, want %llu", static_cast<unsigned long long>(c.max_bytes),
               static_cast<unsigned long long>(want_max));
    FUZZ_CHECK(c.warnings.size() == warnings, "%zu warnings, want %zu", c.warnings.size(), warnings);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string text(reinterpret_cast<const char*>(data), size);
    for (const char* v : k_vars) ::unsetenv(v);

    std::size_t pos = 0;
    while (pos <= text.size()) {
        std::size_t end = text.find('\n', pos);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(pos, end - pos);
        pos = end + 1;
        line = line.substr(0, line.find('\0'));  // what an environment can hold
        std::size_t eq = line.find('=');
        std::string value = eq == std::string::npos ? line : line.substr(eq + 1);
        check_value(value);
        if (eq == std::string::npos) continue;
        std::string name = line.substr(0, eq);
        for (const char* v : k_vars)
            if (name == v) ::setenv(v, value.c_str(), 1);
    }

    check_cache_config();
    for (const char* key : k_keys) {
        bool found = false;
        std::string want = model_setting("STDGPU", key, &found);
        const char* got = stdcl::env_setting("STDGPU", key);
        FUZZ_CHECK((got != nullptr) == found && (!got || want == got), "env_setting(STDGPU, %s) = '%s', want '%s'",
                   key ? key : "NULL", got ? got : "(NULL)", found ? want.c_str() : "(NULL)");
    }
    const char* sw = std::getenv("STDCL_FUZZ_SWITCH");
    for (bool dflt : {false, true}) {
        stdcl::Switch m = model_switch(sw);
        bool want = m == stdcl::Switch::on ? true : m == stdcl::Switch::off ? false : dflt;
        FUZZ_CHECK(stdcl::env_switch("STDCL_FUZZ_SWITCH", dflt) == want, "env_switch('%s', %d)", sw ? sw : "", dflt);
    }
    std::size_t set = 0;
    for (const char* v : k_vars) set += std::getenv(v) != nullptr;
    FUZZ_CHECK(stdcl::env_values(k_vars, sizeof k_vars / sizeof k_vars[0]).size() == set, "env_values count");
    return 0;
}
