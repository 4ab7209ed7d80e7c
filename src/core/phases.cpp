#include "core/phases.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <utility>
#include <vector>


#include <nlohmann/json.hpp>
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

namespace rtm {

namespace {
// The process's start, near enough: static initialization runs before main.
const auto g_start = std::chrono::steady_clock::now();
std::mutex g_mutex;
std::vector<std::pair<const char*, double>>& phases() {
    static std::vector<std::pair<const char*, double>> p;  // few names: a list keeps their order
    return p;
}

// The timeline (RTM_TIMELINE): spans in microseconds since the start, per thread.
const char* const g_timeline = [] {  // null when unset or empty
    const char* v = std::getenv("RTM_TIMELINE");
    return v && *v ? v : nullptr;
}();
struct Span {
    const char* name;
    int thread;
    double start_us, end_us;
};
std::vector<Span>& spans() {
    static std::vector<Span> s;
    return s;
}
int thread_number() {  // 0 for the first thread that times a phase (the main thread), then 1, 2, ...
    static std::atomic<int> next{0};
    thread_local const int mine = next++;
    return mine;
}
double micros(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::micro>(t - g_start).count();
}
}  // namespace

void add_phase_span(const char* name, std::chrono::steady_clock::time_point start,
                    std::chrono::steady_clock::time_point end) {
    const double seconds = std::chrono::duration<double>(end - start).count();
    const int thread = g_timeline ? thread_number() : 0;
    const std::lock_guard<std::mutex> lock(g_mutex);
    if (g_timeline) spans().push_back({name, thread, micros(start), micros(end)});
    for (auto& [n, s] : phases())
        if (n == name || std::strcmp(n, name) == 0) {
            s += seconds;
            return;
        }
    phases().emplace_back(name, seconds);
}

double seconds_since_start() { return std::chrono::duration<double>(std::chrono::steady_clock::now() - g_start).count(); }

std::string phase_summary() {
    const std::lock_guard<std::mutex> lock(g_mutex);
    const double wall = seconds_since_start();
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

std::string write_timeline(int rank) {
    if (!g_timeline) return "";
    const std::string path = rank == 0 ? std::string(g_timeline) : std::string(g_timeline) + ".rank" + std::to_string(rank);
    nlohmann::json events = nlohmann::json::array();
    {
        const std::lock_guard<std::mutex> lock(g_mutex);
        for (const Span& s : spans())
            events.push_back({{"name", s.name}, {"ph", "X"}, {"pid", rank}, {"tid", s.thread},
                              {"ts", s.start_us}, {"dur", s.end_us - s.start_us}});
    }
    const std::string out = nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump(0) + "\n";
    std::ofstream f(path, std::ios::binary);
    f << out;
    f.close();
    if (!f) {  // the job's own products are written: a warning, not a failed job
        spdlog::warn("RTM_TIMELINE: cannot write the timeline {}; give a writable path, or unset RTM_TIMELINE", path);
        return "";
    }
    return path;
}

}  // namespace rtm
