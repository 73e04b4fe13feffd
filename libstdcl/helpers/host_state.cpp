// SPDX-License-Identifier: MIT
// host_state.cpp: BuildStateGuard (helpers/host_state.hpp).
//
// glibc's initstate() switches rand()/random() to a caller's buffer and
// returns the state in use, whose position it saves first; setstate() switches
// back, and the sequence goes on where it stopped.  A counter under one mutex
// makes overlapping builds (several threads) switch once and restore once.
#include "helpers/host_state.hpp"

#include <cstdlib>
#include <mutex>

namespace stdcl {

namespace {

struct SavedRandom {
    std::mutex mu;
    unsigned depth = 0;
    char* program_state = nullptr;  // what initstate returned: the program's state
    // The scratch state (glibc keeps a pointer to it: static storage), 8-byte
    // aligned as initstate needs.
    alignas(8) char scratch[256] = {};
};

// Constant-initialised (no allocation, so the guard cannot fail), and trivially
// destroyed: builds may run during exit.
SavedRandom g_saved;

SavedRandom& saved() { return g_saved; }

}  // namespace

BuildStateGuard::BuildStateGuard() noexcept
{
    SavedRandom& s = saved();
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.depth++ == 0) s.program_state = initstate(1, s.scratch, sizeof s.scratch);
}

BuildStateGuard::~BuildStateGuard()
{
    SavedRandom& s = saved();
    std::lock_guard<std::mutex> lock(s.mu);
    if (--s.depth == 0 && s.program_state) {
        setstate(s.program_state);
        s.program_state = nullptr;
    }
}

}  // namespace stdcl
