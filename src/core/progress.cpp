#include "core/progress.h"

#include <cstdio>

#include <spdlog/spdlog.h>

namespace rtm {

std::string format_duration(double s) {
    char buf[32];
    if (s < 60) std::snprintf(buf, sizeof buf, "%.1fs", s);
    else if (s < 3600) std::snprintf(buf, sizeof buf, "%dm%02ds", int(s) / 60, int(s) % 60);
    else std::snprintf(buf, sizeof buf, "%dh%02dm", int(s) / 3600, (int(s) % 3600) / 60);
    return buf;
}

std::string throughput_summary(double wall, double busy, double points, bool gpu, int devices) {
    // (Over several ranks the steps' time is their sum, which the wall time does not bound:
    // said, with what the share is of.)
    char over[64] = "", of[64] = "";
    if (devices > 1) {
        std::snprintf(over, sizeof over, " summed over %d ranks", devices);
        std::snprintf(of, sizeof of, " of their %d x %.1f s", devices, wall);
    }
    char buf[256];
    std::snprintf(buf, sizeof buf, "%.1f s, %.1f s in propagation steps%s (%s %.0f%%%s), %.0f Mpoints/s", wall, busy,
                  over, gpu ? "GPU busy" : "propagation share", wall > 0 ? 100 * busy / (wall * devices) : 0.0, of,
                  wall > 0 ? points / wall * 1e-6 : 0.0);
    return buf;
}

Progress::Progress(std::string label, long total, double every_seconds)
    : label_(std::move(label)), total_(total), every_(every_seconds),
      start_(std::chrono::steady_clock::now()), last_(start_) {}

double Progress::elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::update(long done) {
    const auto now = std::chrono::steady_clock::now();
    const bool last_item = done >= total_;
    if (std::chrono::duration<double>(now - last_).count() < every_ && !(last_item && printed_))
        return;
    last_ = now;
    printed_ = true;
    const double t = elapsed();
    const double eta = done > 0 ? t * double(total_ - done) / double(done) : 0.0;
    spdlog::info("{} {}/{} ({:.0f}%), elapsed {}, ETA {}", label_, done, total_,
                 100.0 * double(done) / double(total_ > 0 ? total_ : 1), format_duration(t),
                 format_duration(eta));
}

}  // namespace rtm
