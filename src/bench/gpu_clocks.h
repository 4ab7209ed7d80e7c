#pragma once
// What the GPU ran at while a kernel was timed: its SM clock, its board power and why
// the driver held the clock down, sampled through NVML.
//
// Why: a board at its power limit lowers its SM clock. On an H200 (700 W) the 512^3
// steps ran at 1.98 GHz for their first second, then at 1.47-1.77 GHz, at 695-700 W,
// as long as they ran: the full update 4% slower, the stencil only 12%
// (docs/performance.md, 2026-11-24). A bench of a few hundred steps times the first
// second; a survey runs for hours at the capped clock. Each row says which it timed.
#include <cstdio>
#include <memory>
#include <string>

namespace rtm::bench {

struct GpuConditions {
    bool read = false;           // NVML answered (the driver's libnvidia-ml.so.1)
    std::string unread;          // why not
    int samples = 0;
    double sm_mhz = 0;           // mean SM clock over the samples
    double max_sm_mhz = 0;       // the board's highest SM clock
    double power_w = 0;          // mean board power
    double power_limit_w = 0;    // the limit the driver enforces
    double capped_share = 0;     // share of samples with the clock held down for power
    double thermal_share = 0;    // ... for temperature
    // e.g. "SM 1472 of 1980 MHz, 697 of 700 W, power-capped 100%" or why nothing was read.
    std::string text() const {
        if (!read) return "clocks not read: " + unread;
        char s[160];
        std::snprintf(s, sizeof s, "SM %.0f of %.0f MHz, %.0f of %.0f W", sm_mhz, max_sm_mhz, power_w, power_limit_w);
        std::string out = s;
        if (capped_share > 0) out += ", power-capped " + std::to_string(int(100 * capped_share + 0.5)) + "%";
        if (thermal_share > 0) out += ", thermal slowdown " + std::to_string(int(100 * thermal_share + 0.5)) + "%";
        return out;
    }
};

// (CUDA builds only.) Samples the current CUDA device every 10 ms on a thread of its own, from construction
// to stop(). Without NVML (no driver library, a device it does not know) it samples
// nothing and stop() says why: the bench's figures do not depend on it.
class GpuSampler {
public:
    GpuSampler();
    ~GpuSampler();
    GpuSampler(const GpuSampler&) = delete;
    GpuSampler& operator=(const GpuSampler&) = delete;
    GpuConditions stop();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace rtm::bench
