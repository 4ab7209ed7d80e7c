#pragma once
// Source wavelets and time-axis resampling.
#include <algorithm>
#include <cstddef>
#include <vector>

namespace rtm {

// Ricker wavelet of peak frequency f0 (Hz), delayed by t0 seconds (t0 < 0 means the
// usual 1.5/f0, so the wavelet starts from ~1e-8 of its peak), sampled at n*dt.
std::vector<float> ricker(double f0, double dt, int nt, double t0 = -1);

// Highest frequency carrying energy in a Ricker of peak f0: its amplitude spectrum
// at 2.5 f0 is 30 dB below the peak.
inline double ricker_max_frequency(double f0) { return 2.5 * f0; }

// Where a sampled wavelet's band ends: the amplitude spectrum this far below its peak.
// 30 dB, as for a Ricker above (its spectrum at 2.5 f0 is 29.7 dB down), so that a Ricker
// written to a file gets the band of the built-in one (2.51 f0 at 30 dB).
constexpr double kWaveletBandDb = 30;

// The amplitude spectrum of n samples at interval dt (s), zero-padded to a power of two
// >= 4n (bins 1 / (4 n dt) apart or closer), in Hz:
//   max: the highest frequency within kWaveletBandDb of the peak, interpolated linearly
//        between the last bin at or above that level and the next; 1 / (2 dt) when the
//        spectrum is still above it there;
//   peak: the frequency of the largest bin (a Ricker's f0), or max / 2.5 (a Ricker's
//        relation) where that is 0 Hz: a spike's flat spectrum, a Gaussian's, have no
//        dominant frequency of their own.
// Both 0 for all-zero samples.
struct WaveletSpectrum {
    double peak = 0, max = 0;
};
WaveletSpectrum wavelet_spectrum(const float* samples, int n, double dt);

// When a sampled wavelet's energy comes, in s after its first sample (which rtm fires
// at the shot's time 0): `onset` where 1% of its energy has come (a Ricker's: 0.93 / f0
// of its 3 / f0), `peak` at its largest |sample| (a Ricker's: 1.5 / f0). Both 0 for
// all-zero samples.
struct WaveletTiming {
    double onset = 0, peak = 0;
};
WaveletTiming wavelet_timing(const float* samples, int n, double dt);

// Band-limited resampling of traces from (nin, dtin) to (nout, dtout), both
// starting at t = 0: Kaiser-windowed sinc of half-width 8 samples of the coarser
// interval, low-passed at the coarser Nyquist so downsampling does not alias.
// The weights depend only on the two time axes: built once, applied to every trace.
// Downsampling (a coarser output) scales the weights by dtin / dtout, which keeps
// amplitudes; so the transpose of step-to-record is not record-to-step interpolation
// but that times dt_step / dt_record.
class Resampler {
public:
    Resampler(int nin, double dtin, int nout, double dtout);
    std::vector<float> operator()(const float* in) const;
    template <class T>
    void apply(const T* in, float* out) const {
        for (std::size_t j = 0; j < first_.size(); ++j) {
            double s = 0;
            const double* w = weights_.data() + offset_[j];
            const int n = int(offset_[j + 1] - offset_[j]);
            for (int k = 0; k < n; ++k) s += double(in[first_[j] + k]) * w[k];
            out[j] = float(s);
        }
    }
    // The exact transpose, nout samples in, nin out: each output sample's weights
    // spread its value back over the inputs it was made of. Record-to-step in
    // migration, so that it is the adjoint of step-to-record in modelling.
    template <class T>
    void apply_transpose(const T* in, double* out) const {
        std::fill(out, out + nin_, 0.0);
        for (std::size_t j = 0; j < first_.size(); ++j) {
            const double* w = weights_.data() + offset_[j];
            const int n = int(offset_[j + 1] - offset_[j]);
            for (int k = 0; k < n; ++k) out[first_[j] + k] += double(in[j]) * w[k];
        }
    }

private:
    int nin_ = 0;
    std::vector<int> first_;            // first input sample of each output sample
    std::vector<std::size_t> offset_;   // its weights: weights_[offset_[j] .. offset_[j+1])
    std::vector<double> weights_;
};

inline std::vector<float> resample(const float* in, int nin, double dtin, int nout, double dtout) {
    return Resampler(nin, dtin, nout, dtout)(in);
}


}  // namespace rtm
