// SPDX-License-Identifier: MIT
// lease.cpp: device leases of the default contexts (STDX_LOCK=key, STDX_LOCK=auto): one
// device per MPI rank without the program knowing about ranks.
//
// A lease is a lock file per (key, platform, device index) held with flock() for the
// life of the process: the kernel drops it when the process ends, however it ends
// (SIGKILL included), so a lease can never leak and there is nothing to clean up.
// Processes that use the same key exclude each other; different keys never meet.
//
// STDX_LOCK=auto takes the key "auto" and a starting slot from the launcher's local
// rank (Open MPI, MPICH/Hydra, MVAPICH, Slurm set it in every rank's environment): local
// rank r leases from device (r * cap) mod n on, so the ranks of one host do not all
// race for device 0, and without STDX_MAX_NDEV each takes its share n / (local ranks).
// A rank that finds nothing free gets a NULL context and a warning saying so, never a
// device shared in silence.
#include "contexts/context.hpp"
#include "contexts/lease.hpp"
#include "config/config.hpp"

#include "helpers/diag.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace stdcl {

namespace {

struct Leases {
    std::mutex mu;
    std::map<std::string, int> held;  // lock file -> descriptor, kept open until exit
};
Leases& leases()
{
    static Leases* l = new Leases;  // never destroyed: the descriptors stay open until exit
    return *l;
}

bool valid_lock_key(const std::string& key)
{
    if (key.empty() || key.size() > 64) return false;
    for (char c : key)
        if (!std::isalnum((unsigned char)c) && c != '_' && c != '-' && c != '.') return false;
    return true;
}

std::string lock_path(const std::string& key, const std::string& plat_name, const std::string& plat_vendor,
                      size_t devindex)
{
    // FNV-1a of the platform name: lock files of different platforms never meet.
    uint64_t h = 1469598103934665603ull;
    for (char c : plat_name + "\n" + plat_vendor) h = (h ^ (unsigned char)c) * 1099511628211ull;
    const char* tmp = env_value("TMPDIR");
    return strprintf("%s/stdcl-lock-%s-%016llx-%zu", tmp && *tmp ? tmp : "/tmp", key.c_str(), (unsigned long long)h,
                     devindex);
}

// True when this process holds (or now takes) the lease of the device.
bool lease(const std::string& path)
{
    auto& l = leases();
    std::lock_guard<std::mutex> lock(l.mu);
    if (l.held.count(path)) return true;
    int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        warn_once(path.c_str(), "cannot open the device lock file %s: %s", path.c_str(), strerror(errno));
        return false;
    }
    fchmod(fd, 0666);  // other users of the same key must be able to open it too
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        close(fd);
        return false;
    }
    l.held[path] = fd;
    return true;
}

// This process's place among the ranks of its host, as the launcher says.
struct LocalRank {
    const char* var = nullptr;  // the variable that gave the rank; nullptr: no launcher
    unsigned rank = 0;
    unsigned size = 0;  // 0: unknown
};

// A rank or a count from the launcher's environment.
bool launcher_uint(const char* name, unsigned* out)
{
    unsigned long long n = 0;
    if (!parse_uint(env_value(name), 1u << 20, &n)) return false;
    *out = unsigned(n);
    return true;
}

LocalRank local_rank()
{
    static const struct {
        const char* rank;
        const char* size;
    } launchers[] = {
        {"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},  // Open MPI
        {"MPI_LOCALRANKID", "MPI_LOCALNRANKS"},  // MPICH, Intel MPI (Hydra)
        {"MV2_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_LOCAL_SIZE"},  // MVAPICH
        {"SLURM_LOCALID", nullptr},  // srun
    };
    LocalRank r;
    for (const auto& l : launchers) {
        unsigned rank = 0;
        if (!launcher_uint(l.rank, &rank)) continue;
        r.var = l.rank;
        r.rank = rank;
        unsigned size = 0;
        if (l.size && launcher_uint(l.size, &size) && size > rank) r.size = size;
        return r;
    }
    return r;
}

void record_null(const char* label, const std::string& msg)
{
    note_load(label, msg, false);  // what a call given the NULL context says
    warn_once(label, "%s", msg.c_str());
    set_error(msg);  // the contexts are made in the main thread, before main(): its clerror() says why
}

}  // namespace

bool lease_devices(const std::string& var, const char* label, const std::string& plat_name,
                   const std::string& plat_vendor, const std::vector<cl_device_id>& all,
                   std::vector<cl_device_id>& devs, unsigned cap, std::string& notes)
{
    std::string lvar = var + "_LOCK";
    const char* key = env_setting(var, "lock");  // STDX_LOCK, or lock= in STDX
    if (key && !valid_lock_key(key)) {
        warn_once(lvar.c_str(), "%s='%s' is not a valid key (1 to 64 letters, digits, '_', '-', '.'); ignored",
                  lvar.c_str(), key);
        key = nullptr;
    }
    if (!key || devs.empty()) {
        if (devs.size() > cap) devs.resize(cap);
        return true;
    }
    const size_t n = devs.size();
    size_t start = 0;
    std::string where;
    if (strcmp(key, "auto") == 0) {
        LocalRank lr = local_rank();
        if (lr.var) {
            if (lr.size) cap = std::min(cap, std::max(1u, unsigned(n / lr.size)));
            start = size_t(lr.rank) * cap % n;
            where = lr.size ? strprintf(" (local rank %u of %u, %s)", lr.rank, lr.size, lr.var)
                            : strprintf(" (local rank %u, %s)", lr.rank, lr.var);
        } else {
            where = " (no MPI launcher in the environment: from device 0)";
        }
    }
    // Lease free devices from the slot on, wrapping around, until the cap: exclusive
    // among every process that uses the same key.
    std::vector<size_t> taken;  // positions in devs
    for (size_t i = 0; i < n && taken.size() < cap; ++i) {
        size_t pos = (start + i) % n;
        size_t idx = size_t(std::find(all.begin(), all.end(), devs[pos]) - all.begin());
        if (lease(lock_path(key, plat_name, plat_vendor, idx))) taken.push_back(pos);
    }
    if (taken.empty()) {
        record_null(label,
                    strprintf("%s=%s%s: every %s device is leased to another process (%zu tried); %s is NULL",
                              lvar.c_str(), key, where.c_str(), label, n, label));
        return false;
    }
    std::sort(taken.begin(), taken.end());
    std::vector<cl_device_id> mine;
    std::string which;
    for (size_t pos : taken) {
        size_t idx = size_t(std::find(all.begin(), all.end(), devs[pos]) - all.begin());
        which += strprintf("%s%zu", mine.empty() ? "" : ",", idx);
        mine.push_back(devs[pos]);
    }
    notes += strprintf("; %s=%s%s leased platform device(s) %s", lvar.c_str(), key, where.c_str(), which.c_str());
    devs = mine;
    return true;
}

}  // namespace stdcl
