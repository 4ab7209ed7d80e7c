// When a sampled wavelet's energy comes (physics/wavelet.h's wavelet_timing), which the
// plan holds a record's length to and the wavelet file's check reads.
#include <cmath>

#include "physics/wavelet.h"
#include "support/catch.hpp"

TEST_CASE("a Ricker's energy starts 0.93 periods into it and peaks at 1.5, and a delay moves both") {
    // The Ricker (1 - 2a^2) exp(-a^2), a = pi f0 (t - 1.5 / f0): 1% of the energy of its
    // 3 / f0 lies before t = 0.9336 / f0 (the integral, by a 1e-5 / f0 quadrature).
    // Sampled at dt, both times are a sample's: within one dt.
    const double f0 = 10, dt = 1e-4;
    const auto w = rtm::ricker(f0, dt, int(3 / f0 / dt) + 1);
    const rtm::WaveletTiming t = rtm::wavelet_timing(w.data(), int(w.size()), dt);
    CHECK(std::abs(t.onset - 0.9336 / f0) <= dt);
    CHECK(std::abs(t.peak - 1.5 / f0) <= dt);
    const auto late = rtm::ricker(f0, dt, int(1 / dt) + 1, 0.8);
    const rtm::WaveletTiming l = rtm::wavelet_timing(late.data(), int(late.size()), dt);
    CHECK(std::abs(l.onset - (0.8 - (1.5 - 0.9336) / f0)) <= dt);
    CHECK(std::abs(l.peak - 0.8) <= dt);
    const float zeros[4] = {0, 0, 0, 0};
    CHECK(rtm::wavelet_timing(zeros, 4, dt).onset == 0);
}
