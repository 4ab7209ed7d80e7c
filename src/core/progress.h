#pragma once
// Progress of a long loop on the log: "<label> k/N (p%), elapsed, ETA", at most
// every few seconds, so long runs show they are alive without flooding the log.
#include <chrono>
#include <string>

namespace rtm {

class Progress {
public:
    Progress(std::string label, long total, double every_seconds = 5.0);
    // Call with the number of finished items; prints when enough time has passed
    // (and always for the last item when the loop ran long enough to print before).
    void update(long done);
    double elapsed() const;

private:
    std::string label_;
    long total_;
    double every_;
    std::chrono::steady_clock::time_point start_, last_;
    bool printed_ = false;
};

std::string format_duration(double seconds);

// A command's summary of its work: "W s, P s in propagation steps (GPU busy R%),
// X Mpoints/s" (on the CPU "propagation share R%"): wall time, the time propagation
// steps took (Propagator::busy_seconds), their ratio, and grid-point updates per
// second of wall time. Over several ranks (one device each), busy_seconds is their sum
// and the ratio is over `devices` x the wall time.
std::string throughput_summary(double wall_seconds, double busy_seconds, double point_updates, bool gpu,
                               int devices = 1);

}  // namespace rtm
