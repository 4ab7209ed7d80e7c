#pragma once
// Source wavelets and time-axis resampling.
#include <vector>

namespace rtm {

// Ricker wavelet of peak frequency f0 (Hz), delayed by t0 seconds (t0 < 0 means the
// usual 1.5/f0, so the wavelet starts from ~1e-8 of its peak), sampled at n*dt.
std::vector<float> ricker(double f0, double dt, int nt, double t0 = -1);

// Highest frequency carrying energy in a Ricker of peak f0: its amplitude spectrum
// at 2.5 f0 is 30 dB below the peak.
inline double ricker_max_frequency(double f0) { return 2.5 * f0; }

// Band-limited resampling of a trace from (nin, dtin) to (nout, dtout), both
// starting at t = 0: Kaiser-windowed sinc of half-width 8 samples of the coarser
// interval, low-passed at the coarser Nyquist so downsampling does not alias.
std::vector<float> resample(const float* in, int nin, double dtin, int nout, double dtout);

}  // namespace rtm
