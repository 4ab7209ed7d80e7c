#include "core/phases.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include <spdlog/fmt/fmt.h>

namespace rtm {

namespace {
// The process's start, near enough: static initialization runs before main.
const auto g_start = std::chrono::steady_clock::now();
std::mutex g_mutex;
std::vector<std::pair<const char*, double>>& phases() {
    static std::vector<std::pair<const char*, double>> p;  // few names: a list keeps their order
    return p;
}
}  // namespace

void add_phase_time(const char* name, double seconds) {
    const std::lock_guard<std::mutex> lock(g_mutex);
    for (auto& [n, s] : phases())
        if (n == name || std::strcmp(n, name) == 0) {
            s += seconds;
            return;
        }
    phases().emplace_back(name, seconds);
}

std::string phase_summary() {
    const std::lock_guard<std::mutex> lock(g_mutex);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count();
    std::string out;
    double sum = 0;
    for (const auto& [n, s] : phases()) {
        sum += s;
        if (s < 0.005) continue;
        out += fmt::format("{}{} {:.2f} s", out.empty() ? "" : ", ", n, s);
    }
    out += fmt::format("{}other {:.2f} s (of {:.2f} s since start)", out.empty() ? "" : ", ", std::max(0.0, wall - sum), wall);
    return out;
}

}  // namespace rtm
