#include "physics/wavelet.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <mutex>
#include <vector>

#include <fftw3.h>

#include "physics/fftw_planner.h"
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

WaveletTiming wavelet_timing(const float* samples, int n, double dt) {
    double energy = 0, largest = 0;
    int peak = 0;
    for (int i = 0; i < n; ++i) {
        energy += double(samples[i]) * samples[i];
        if (std::abs(samples[i]) > largest) largest = std::abs(samples[i]), peak = i;
    }
    double sum = 0;
    int onset = 0;
    while (onset < n && (sum += double(samples[onset]) * samples[onset]) < 0.01 * energy) ++onset;
    return energy > 0 ? WaveletTiming{onset * dt, peak * dt} : WaveletTiming{};
}

WaveletSpectrum wavelet_spectrum(const float* samples, int n, double dt) {
    // Padding samples the same continuous spectrum more finely: n bins alone are
    // 1 / (n dt) apart, 10 Hz for 100 samples at 1 ms, too coarse to place a band's end.
    std::size_t m = 1;
    while (m < 4 * std::size_t(std::max(n, 1))) m <<= 1;
    std::vector<double> x(m, 0.0);
    std::copy(samples, samples + n, x.begin());
    std::vector<std::complex<double>> spectrum(m / 2 + 1);
    auto* c = reinterpret_cast<fftw_complex*>(spectrum.data());
    fftw_plan plan;
    {
        std::lock_guard<std::mutex> lock(fftw_planner_mutex());
        // Unaligned: the same plan, so the same rounding, wherever the heap put the arrays
        // (every rank measures the band, and a resumed job must measure it alike).
        plan = fftw_plan_dft_r2c_1d(int(m), x.data(), c, FFTW_ESTIMATE | FFTW_UNALIGNED);
    }
    fftw_execute(plan);
    {
        std::lock_guard<std::mutex> lock(fftw_planner_mutex());
        fftw_destroy_plan(plan);
    }
    std::vector<double> amp(spectrum.size());
    for (std::size_t k = 0; k < amp.size(); ++k) amp[k] = std::abs(spectrum[k]);
    const auto top = std::max_element(amp.begin(), amp.end());
    const double peak = *top;
    if (!(peak > 0)) return {};
    const double level = peak * std::pow(10.0, -kWaveletBandDb / 20);
    std::size_t k = amp.size() - 1;
    while (amp[k] < level) --k;  // stops at the peak at the latest
    const double df = 1.0 / (double(m) * dt);
    WaveletSpectrum out;
    out.max = k == amp.size() - 1 ? 0.5 / dt : (double(k) + (amp[k] - level) / (amp[k] - amp[k + 1])) * df;
    const std::size_t at = std::size_t(top - amp.begin());
    out.peak = at > 0 ? double(at) * df : out.max / 2.5;
    return out;
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
