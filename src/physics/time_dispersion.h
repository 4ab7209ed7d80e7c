#pragma once
// Time-dispersion transforms: leapfrog's time error removed after the fact (Koene,
// Robertsson, Broggini and Andersson 2018, GJI 213(1), "Eliminating time dispersion
// from seismic wave modeling").
//
// Why it works. The step u[n+1] - 2 u[n] + u[n-1] = dt^2 (v^2 L u[n] + s[n]), for any
// linear operator L that does not change with time (any medium, any spatial stencil),
// taken at one frequency, u[n] = U exp(i w n dt):
//     (exp(i w dt) - 2 + exp(-i w dt)) / dt^2 = -(2/dt)^2 sin^2(w dt / 2) = -w'^2,
//     w'(w) = (2/dt) sin(w dt / 2),   0 <= w' < w for 0 < w < pi/dt,
// is the time-continuous equation -w'^2 U / v^2 = L U + S at the frequency w'. So the
// stepped response at w is the time-exact one (the same L, the same space
// discretisation, time continuous) at w':  U_step(w) = G(w') S_step(w), with G the
// time-exact response and S_step the spectrum (DTFT) of the injected samples, while the
// time-exact response to a source s is U(W) = G(W) S(W).
//   Forward transform, of the source: S_step(w) = S(w'(w)) for |w| < pi/dt. Then
//     U_step(w) = G(w') S(w') = U(w'(w)): the stepped traces hold the exact spectrum,
//     warped.
//   Inverse transform, of the recorded traces: U(W) = U_step(w(W)),
//     w(W) = (2/dt) asin(W dt / 2) for |W| < 2/dt (above, frequencies a step dt cannot
//     represent; 2/dt is 64% of the step's Nyquist frequency); in practice for
//     |W| dt <= 1.5, tapered to 0 at sqrt(3) (inverse_transform_band).
// Both act on a trace's time axis alone, so they cost nothing per grid point; they are
// linear maps of the samples, so migration, the adjoint of modelling, uses their exact
// transposes. Without them, w' < w means every frequency runs as the exact equation at
// a lower one: waves travel fast by w / w' - 1 = (w dt)^2 / 24 + O((w dt)^4), and after
// a travel time t the phase is ahead by (w - w') t (leapfrog_error).
// Exact only where the update is that pure second difference: not in absorbing layers
// (C-PML memory variables, damping terms: harmless, they absorb), and not for what is
// done with wavefields at the step's samples (migration's imaging condition; see
// migration.h).
//
// Numerics. Each transform is a frequency warp of an n-sample trace x:
//     y[m] = Re (1/M) sum_j a(w_j) X(g(w_j)) exp(2 pi i j m / M),  m < n,
// X the DTFT of x, w_j = 2 pi j / M (radians per sample, j from -M/2), M the least even
// product of 2, 3 and 5 that is >= 2n (warp_length; FFTW's fast sizes: a power of two
// would be up to 2x longer, 16384 against 9216 for n = 4584) (zero padding: the warped
// trace may spread past n, and what spreads past M
// wraps; the inverse transform moves sample n to n / cos(w dt / 2), past 2n only above
// w dt = 2 pi / 3, i.e. W dt = sqrt(3), where its band ends; the forward one moves
// samples earlier, by cos(w dt / 2)). X at the warped,
// off-grid frequencies g(w_j) comes from the FFT of the M-padded trace by a non-uniform
// FFT's gridding (Dutt and Rokhlin 1993; Beatty, Nishimura and Pauly 2005): x divided
// by the Kaiser-Bessel kernel's Fourier transform, FFT, then a W = 12 bin Kaiser-Bessel
// interpolation: accurate to ~1e-11, far below fp32 (the transform test measures it
// against the direct sum). Real traces have Hermitian spectra, so only bins 0..M/2 are
// formed, with real FFTs. Cost per trace: two real FFTs of length M and M W / 2 complex
// multiply-adds, about 5 M log2(M) + 4 M W flops: 1.4 Mflop for n = 6000 steps (M =
// 12000; ~0.1 ms), against 36 M multiply-adds for the n x n matrix. apply and
// apply_transpose may be given the same array as in and out.
#include <complex>
#include <functional>
#include <memory>
#include <vector>

namespace rtm {

// M for traces of n samples (see above).
int warp_length(int n);

// A frequency warp y = Re IDFT[a(w) X(g(w))] on n samples (see above); g and a in
// radians per sample, g odd and a even (so real traces stay real up to rounding).
class FrequencyWarp {
public:
    FrequencyWarp(int n, const std::function<double(double)>& g, const std::function<double(double)>& a);
    ~FrequencyWarp();
    FrequencyWarp(const FrequencyWarp&) = delete;
    FrequencyWarp& operator=(const FrequencyWarp&) = delete;

    void apply(const double* in, double* out) const;            // n samples each
    void apply_transpose(const double* in, double* out) const;  // the exact transpose

private:
    struct Plans;
    void centre(const double* in, double* b) const;
    void uncentre(const double* b, double* out) const;
    int n_ = 0, m_ = 0, centre_ = 0;
    std::vector<double> deconvolution_;             // 1 / kernel transform, per input sample
    std::vector<int> first_;                        // first input bin of each output bin
    std::vector<std::complex<double>> weights_;     // kW per output bin
    // The output bins 0..M/2 whose weights are not all zero (a(w) != 0): the inverse
    // transform's stop band, 45% of the bins, is skipped, which changes no bit (those
    // bins' terms are exact zeros, and a sum here is never -0).
    std::vector<int> active_;
    std::unique_ptr<Plans> plans_;
};

// The two transforms for traces of n steps (they do not depend on dt: in radians per
// step, w' = 2 sin(w / 2)).
class TimeDispersion {
public:
    explicit TimeDispersion(int n);
    // The source samples to inject (the forward transform).
    void forward(const double* in, double* out) const { forward_.apply(in, out); }
    // Recorded traces to the time-exact ones (the inverse transform), and its transpose.
    void inverse(const double* in, double* out) const { inverse_.apply(in, out); }
    void inverse_transpose(const double* in, double* out) const { inverse_.apply_transpose(in, out); }

private:
    FrequencyWarp forward_, inverse_;
};

// The transforms for traces of n steps, built once per n in a process and shared:
// they are immutable, and building one takes the Bessel function of 2 M W kernel
// weights (~0.1 s for n = 6000), more than transforming a shot's traces.
std::shared_ptr<const TimeDispersion> time_dispersion(int n);

// The inverse transform's pass band, radians per step: 1 up to kInversePass, a cosine
// taper to 0 at kInverseStop = sqrt(3), where the stretch 1 / cos(w dt / 2) of late
// samples reaches 2 (beyond it a trace's end, cut off mid-signal, would be spread past
// the padding and wrap onto its start).
constexpr double kInversePass = 1.5, kInverseStop = 1.7320508075688772;
double inverse_transform_band(double w);

// Steps to propagate past the last sample wanted, for the inverse transform: a trace cut
// off mid-signal ends in an Airy transition (the cubic term of w(W) = W + W^3 dt^2 / 24
// + ... spreads its end) reaching back ~(n/8)^(1/3) steps; ten of them bring it below
// 1e-6 of the signal.
int time_dispersion_margin(int n);

// Leapfrog's own error at frequency f (Hz) with step dt: waves run fast by
// w / w' - 1 (relative phase velocity), ahead in phase by f - f' cycles per second of
// travel (f' = w' / 2 pi).
struct LeapfrogError {
    double velocity = 0;         // relative
    double cycles_per_second = 0;
};
LeapfrogError leapfrog_error(double f, double dt);

}  // namespace rtm
