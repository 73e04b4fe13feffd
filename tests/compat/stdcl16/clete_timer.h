/* SPDX-License-Identifier: MIT */
// clete_timer.h: a wall-clock stopwatch for the CLETE programs (seconds),
// shared by clete_vector/ and clete_array/.
#ifndef CLETE_TIMER_H
#define CLETE_TIMER_H

#include <chrono>

struct clete_timer {
    std::chrono::steady_clock::time_point t0;
    void start() { t0 = std::chrono::steady_clock::now(); }
    double seconds() const
    {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
};

#endif
