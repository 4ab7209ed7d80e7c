#pragma once
// FFTW's planner is not thread-safe (execution is): every plan is made and destroyed
// under this one mutex, whichever file makes it.
#include <mutex>

namespace rtm {

inline std::mutex& fftw_planner_mutex() {
    static std::mutex m;
    return m;
}

}  // namespace rtm
