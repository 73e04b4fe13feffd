// SPDX-License-Identifier: MIT
// make_cache_seeds.cpp: writes the seeds of fuzz_cache_entry
// (tests/fuzz/corpus/cache_entry/), every one made by the library's own
// encode_entry, so they are entries the library writes and reads:
//
//   build/fuzz/make_cache_seeds OUTDIR [ENTRY.clbin...]
//
// Without ENTRY arguments it writes small entries of every shape (no device;
// one device; two devices sharing a blob, with compiler logs; two blobs,
// empty logs).  Each ENTRY (a real entry from a program cache folder, e.g.
// written by PoCL) is decoded and written again as real-<n>.clbin.  The
// origin of every seed (a free-text field that is not part of the key) names
// the license, which tests/check_spdx.sh asks of every file in the tree.
#include "builds/cache_key.hpp"
#include "builds/cache_store.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace {

const char k_license[] = "SPDX-License-Identifier: MIT; fuzz seed";

bool write(const std::string& path, const std::string& bytes)
{
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out.flush()) {
        std::fprintf(stderr, "make_cache_seeds: cannot write %s\n", path.c_str());
        return false;
    }
    return true;
}

std::string key_text(const std::string& source, int devices)
{
    stdcl::KeyParts k;
    k.library = "1.0.0";
    k.platform = "Portable Computing Language | OpenCL 3.0 PoCL 3.1";
    for (int i = 0; i < devices; ++i) k.devices.push_back("cpu | GenuineIntel | OpenCL 3.0 PoCL | 3.1");
    k.options = "\"-D\" \"__STDCL__\" \"-D\" \"__stdcl_kernel__\" \"-D\" \"__CPU__\" \"-cl-kernel-arg-info\"";
    k.env = {"POCL_WORK_GROUP_METHOD=cbs"};
    k.source = source;
    k.includes = {{"\"val.h\"", "/k/val.h", std::string(64, 'c')}, {"<gone.h>", "", ""}};
    return stdcl::make_key_text(k);
}

stdcl::CacheEntry entry(const std::string& what, int devices)
{
    stdcl::CacheEntry e;
    e.key_text = key_text("__kernel void k(__global int* a) { a[0] = 1; }\n", devices);
    e.origin = std::string(k_license) + ": " + what;
    return e;
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s OUTDIR [ENTRY.clbin...]\n", argv[0]);
        return 2;
    }
    const std::string dir = argv[1];
    bool ok = true;
    if (argc == 2) {
        stdcl::CacheEntry none = entry("no device", 0);
        ok = write(dir + "/no_device.clbin", stdcl::encode_entry(none)) && ok;

        stdcl::CacheEntry one = entry("one device, no log", 1);
        one.blobs = {"\x7f"
                     "ELF fake binary of one device"};
        one.device_blob = {0};
        ok = write(dir + "/one_device.clbin", stdcl::encode_entry(one)) && ok;

        stdcl::CacheEntry shared = entry("two devices sharing one blob, with logs", 2);
        shared.blobs = {"\x7f"
                        "ELF binary both devices use"};
        shared.device_blob = {0, 0};
        shared.logs = {"warning: unused variable 'x'\n", ""};
        ok = write(dir + "/two_devices_shared.clbin", stdcl::encode_entry(shared)) && ok;

        stdcl::CacheEntry two = entry("two devices, two blobs, empty logs", 2);
        two.blobs = {"binary A", std::string("binary B\0\x01\x02", 11)};
        two.device_blob = {1, 0};
        two.logs = {"", ""};
        ok = write(dir + "/two_blobs.clbin", stdcl::encode_entry(two)) && ok;
    }
    for (int i = 2; i < argc; ++i) {
        std::ifstream in(argv[i], std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        stdcl::CacheEntry e;
        std::string why;
        if (!stdcl::decode_entry(ss.str(), std::string(), &e, &why)) {
            std::fprintf(stderr, "make_cache_seeds: %s: %s\n", argv[i], why.c_str());
            ok = false;
            continue;
        }
        e.origin = std::string(k_license) + " from a real entry of " + e.origin;
        ok = write(dir + "/real-" + std::to_string(i - 1) + ".clbin", stdcl::encode_entry(e)) && ok;
    }
    return ok ? 0 : 1;
}
