#include "physics/wavelet.h"

#include <algorithm>
#include <cmath>

#include "physics/interpolation.h"

namespace rtm {

std::vector<float> ricker(double f0, double dt, int nt, double t0) {
    if (t0 < 0) t0 = 1.5 / f0;
    std::vector<float> w(nt);
    for (int i = 0; i < nt; ++i) {
        const double a = M_PI * f0 * (i * dt - t0);
        w[i] = float((1 - 2 * a * a) * std::exp(-a * a));
    }
    return w;
}

Resampler::Resampler(int nin, double dtin, int nout, double dtout) : nin_(nin) {
    const double T = std::max(dtin, dtout);  // the coarser interval sets the pass band
    const double half = 8 * T;               // half-width of the filter in seconds
    const double beta = 6.0;                 // Kaiser shape: ~-60 dB side lobes
    const double gain = dtin / T;            // keeps amplitudes when downsampling
    offset_.push_back(0);
    for (int j = 0; j < nout; ++j) {
        const double t = j * dtout;
        const int i0 = std::max(0, int(std::ceil((t - half) / dtin)));
        const int i1 = std::min(nin - 1, int(std::floor((t + half) / dtin)));
        first_.push_back(i0);
        for (int i = i0; i <= i1; ++i) {
            const double x = (t - i * dtin) / T;
            weights_.push_back(sinc(x) * kaiser(x / 8, beta) * gain);
        }
        offset_.push_back(weights_.size());
    }
}

std::vector<float> Resampler::operator()(const float* in) const {
    std::vector<float> out(first_.size());
    apply(in, out.data());
    return out;
}

}  // namespace rtm
