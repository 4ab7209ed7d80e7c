#include "physics/time_dispersion.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <utility>

#include <fftw3.h>

#include "physics/fftw_planner.h"

#include "physics/interpolation.h"

namespace rtm {

namespace {

constexpr int kW = 12;  // interpolation kernel width, bins
// Kaiser-Bessel shape for oversampling 2 (the least we use; more only helps):
// Beatty et al. 2005, eq. 5, beta = pi sqrt((W/sigma)^2 (sigma - 1/2)^2 - 0.8).
const double kBeta = M_PI * std::sqrt((kW / 2.0) * (kW / 2.0) * 1.5 * 1.5 - 0.8);

using cplx = std::complex<double>;

// The thread's own arrays, kept between calls: a trace's transform is a fraction of a
// millisecond, and fresh arrays of 100-200 KB a call cost it page faults (glibc maps
// blocks that large) and their first touch. bins: the whole spectrum, M bins and kW past
// them (the taps of an output bin are then one run: the wrap copied there before
// gridding, folded back after its transpose); half: M / 2 + 1 bins, or the M real
// samples in the same memory (the in-place real transforms).
struct Scratch {
    std::vector<cplx> bins, half;
};
Scratch& scratch(int m) {
    thread_local Scratch s;
    s.bins.resize(std::size_t(m) + kW);
    s.half.resize(std::size_t(m) / 2 + 1);
    return s;
}

}  // namespace

int warp_length(int n) {
    for (int m = 2 * std::max(1, n);; m += 2) {  // even: the Nyquist bin is -M/2
        int r = m;
        for (const int f : {2, 3, 5})
            while (r % f == 0) r /= f;
        if (r == 1) return m;
    }
}

struct FrequencyWarp::Plans {
    fftw_plan r2c = nullptr, c2r = nullptr;  // in place, M real samples <-> M / 2 + 1 bins
};

// The Kaiser-Bessel kernel phi(xi) = kaiser(2 xi / W, beta) on |xi| <= W/2 bins has the
// Fourier transform phi^(t) = int phi(xi) exp(2 pi i xi t / M) dxi
//   = W sinh(sqrt(beta^2 - a^2)) / (sqrt(beta^2 - a^2) I0(beta)),  a = pi W t / M.
// Gridding (Poisson summation): sum_k phi(x - k) B_k, with B the M-point DFT of
// b[t] = x[t] / phi^(t) (t centred on the trace), is X_c(2 pi x / M) plus aliases
// weighted by phi^(t + p M) / phi^(t), p != 0, which the kernel's decay makes ~1e-10
// for |t| <= M / 4.
FrequencyWarp::FrequencyWarp(int n, const std::function<double(double)>& g, const std::function<double(double)>& a)
    : n_(n), plans_(std::make_unique<Plans>()) {
    m_ = std::max(warp_length(n_), kW);  // (under kW bins, taps would pass the spare ones)
    centre_ = n_ / 2;
    deconvolution_.resize(n_);
    const double i0_beta = bessel_i0(kBeta);
    for (int i = 0; i < n_; ++i) {
        const double al = M_PI * kW * double(i - centre_) / m_;
        const double s = std::sqrt(kBeta * kBeta - al * al);
        deconvolution_[i] = s * i0_beta / (kW * std::sinh(s));
    }
    first_.resize(m_);
    weights_.resize(std::size_t(m_) * kW);
    // On every core: M kW Bessel functions, 63 ms on one core for the 6184 steps of a 4 s
    // record at 0.67 ms (two warps per transform), on the path of every job's set-up.
    // Each bin's taps are its own, so the tables are the same bytes on any thread count.
    // Bin j's frequency, radians per sample (j from -M/2 above the middle).
    const auto frequency = [this](int j) { return 2 * M_PI * (j < m_ / 2 ? j : j - m_) / m_; };
#pragma omp parallel for schedule(static)
    for (int j = 0; j < m_; ++j) {
        const double w = frequency(j);
        const double gw = g(w), aw = a(w);
        // X(g) = exp(-i g c) X_c(g): the trace's DTFT from its centred one.
        const cplx phase = aw * std::exp(cplx(0, -gw * centre_));
        const double x = gw * m_ / (2 * M_PI);  // in input bins
        const int k0 = int(std::floor(x)) - kW / 2 + 1;
        first_[j] = ((k0 % m_) + m_) % m_;
        for (int q = 0; q < kW; ++q)
            weights_[std::size_t(j) * kW + q] = phase * kaiser(2 * (x - (k0 + q)) / kW, kBeta);
    }
    for (int j = 0; j <= m_ / 2; ++j)
        if (a(frequency(j)) != 0) active_.push_back(j);
    std::vector<cplx> half(m_ / 2 + 1);
    auto* c = reinterpret_cast<fftw_complex*>(half.data());
    auto* r = reinterpret_cast<double*>(half.data());
    std::lock_guard<std::mutex> lock(fftw_planner_mutex());
    // FFTW_ESTIMATE: the same plan every run (measured plans could differ, and with them
    // the rounding: resumed jobs must reproduce bit for bit). Unaligned: any buffer.
    plans_->r2c = fftw_plan_dft_r2c_1d(m_, r, c, FFTW_ESTIMATE | FFTW_UNALIGNED);
    plans_->c2r = fftw_plan_dft_c2r_1d(m_, c, r, FFTW_ESTIMATE | FFTW_UNALIGNED);
}

FrequencyWarp::~FrequencyWarp() {
    std::lock_guard<std::mutex> lock(fftw_planner_mutex());
    fftw_destroy_plan(plans_->r2c);
    fftw_destroy_plan(plans_->c2r);
}

// Real traces in, real traces out: the spectrum of a real trace is Hermitian, X(-w) =
// conj X(w), and so is the warped one (g odd, a even: the taps and weights of bin -j are
// bin j's mirrored and conjugated), so only bins 0..M/2 are formed, with the real FFTs
// (half the work of complex ones on the whole spectrum). The real part that the whole
// spectrum's inverse DFT keeps is the real inverse transform of the half (c2r) once the
// imaginary parts of bins 0 and M/2 are dropped: there they add only imaginary values.
//
// The chain: centre and deconvolve, r2c, the whole spectrum from the half (Hermitian),
// interpolate bins 0..M/2 at the warped frequencies times a(w) and the phase, c2r / M,
// the first n samples.
void FrequencyWarp::apply(const double* in, double* out) const {
    auto& [bins, half] = scratch(m_);
    const int h = m_ / 2;
    auto* hr = reinterpret_cast<double*>(half.data());
    auto* hc = reinterpret_cast<fftw_complex*>(half.data());
    centre(in, hr);
    fftw_execute_dft_r2c(plans_->r2c, hr, hc);
    for (int k = 0; k <= h; ++k) bins[k] = half[k];
    for (int k = h + 1; k < m_; ++k) bins[k] = std::conj(half[m_ - k]);
    std::copy(bins.begin(), bins.begin() + kW, bins.begin() + m_);  // the wrap
    std::fill(half.begin(), half.end(), cplx(0));  // bins outside active_ stay 0
    const double* bd = reinterpret_cast<const double*>(bins.data());
    for (const int j : active_) {
        // sum_q w[q] bins[k0 + q mod M], in real arithmetic (std::complex's product checks
        // for NaN at every term).
        const double* w = reinterpret_cast<const double*>(weights_.data() + std::size_t(j) * kW);
        const double* x = bd + 2 * first_[j];
        double re = 0, im = 0;
        for (int q = 0; q < 2 * kW; q += 2) {
            re += w[q] * x[q] - w[q + 1] * x[q + 1];
            im += w[q] * x[q + 1] + w[q + 1] * x[q];
        }
        half[j] = cplx(re, im);
    }
    half[0].imag(0);
    half[h].imag(0);
    fftw_execute_dft_c2r(plans_->c2r, hc, hr);
    for (int i = 0; i < n_; ++i) out[i] = hr[i] / m_;
}

// Each step's transpose in reverse order, in the real inner product (a complex vector's
// real and imaginary parts its coordinates): c2r's transpose is r2c with bins 1..M/2-1
// doubled (c2r counts each twice, as bin j and its mirror), and r2c's is c2r of the
// bins with those halved; forming the whole spectrum from the half (bin k, and bin M - k
// conjugated) transposes to adding bin M - k's conjugate to bin k; the gridding's
// transpose scatters with the conjugated weights.
void FrequencyWarp::apply_transpose(const double* in, double* out) const {
    auto& [bins, half] = scratch(m_);
    const int h = m_ / 2;
    auto* hr = reinterpret_cast<double*>(half.data());
    auto* hc = reinterpret_cast<fftw_complex*>(half.data());
    for (int i = 0; i < n_; ++i) hr[i] = in[i] / m_;
    std::fill(hr + n_, hr + m_, 0.0);
    fftw_execute_dft_r2c(plans_->r2c, hr, hc);
    std::fill(bins.begin(), bins.end(), cplx(0));
    double* bd = reinterpret_cast<double*>(bins.data());
    for (const int j : active_) {  // bins[k0 + q mod M] += conj(w[q]) c_j half[j], as apply's sum
        const double* w = reinterpret_cast<const double*>(weights_.data() + std::size_t(j) * kW);
        double* x = bd + 2 * first_[j];
        const double c = j == 0 || j == h ? 1 : 2;
        const double sr = c * half[j].real(), si = j == 0 || j == h ? 0 : c * half[j].imag();
        for (int q = 0; q < 2 * kW; q += 2) {
            x[q] += w[q] * sr + w[q + 1] * si;
            x[q + 1] += w[q] * si - w[q + 1] * sr;
        }
    }
    for (int q = 0; q < kW; ++q) bins[q] += bins[m_ + q];  // the wrap, folded back
    half[0] = bins[0].real();
    half[h] = bins[h].real();
    for (int k = 1; k < h; ++k) half[k] = 0.5 * (bins[k] + std::conj(bins[m_ - k]));
    fftw_execute_dft_c2r(plans_->c2r, hc, hr);
    uncentre(hr, out);
}

// b[(i - c) mod M] = in[i] x deconvolution[i] (the trace centred on sample c; the other
// samples 0), and out[i] = b[(i - c) mod M] x deconvolution[i], its transpose: i < c
// wraps to the end, i >= c starts at 0 (n <= M / 2, so no index wraps twice).
void FrequencyWarp::centre(const double* in, double* b) const {
    std::fill(b, b + m_, 0.0);
    for (int i = 0; i < centre_; ++i) b[m_ - centre_ + i] = in[i] * deconvolution_[i];
    for (int i = centre_; i < n_; ++i) b[i - centre_] = in[i] * deconvolution_[i];
}
void FrequencyWarp::uncentre(const double* b, double* out) const {
    for (int i = 0; i < centre_; ++i) out[i] = b[m_ - centre_ + i] * deconvolution_[i];
    for (int i = centre_; i < n_; ++i) out[i] = b[i - centre_] * deconvolution_[i];
}

double inverse_transform_band(double w) {
    const double a = std::abs(w);
    if (a <= kInversePass) return 1;
    if (a >= kInverseStop) return 0;
    const double c = std::cos(M_PI / 2 * (a - kInversePass) / (kInverseStop - kInversePass));
    return c * c;
}

TimeDispersion::TimeDispersion(int n)
    : forward_(n, [](double w) { return 2 * std::sin(w / 2); }, [](double) { return 1.0; }),
      inverse_(n, [](double w) { return std::abs(w) < 2 ? 2 * std::asin(w / 2) : 0.0; }, inverse_transform_band) {}

std::shared_ptr<const TimeDispersion> time_dispersion(int n) {
    // The planner's mutex is made before the cache, so it outlives the cache's entries,
    // whose destructors (at exit) lock it.
    fftw_planner_mutex();
    static std::mutex mutex;
    static std::map<int, std::shared_ptr<const TimeDispersion>> built;
    std::lock_guard<std::mutex> lock(mutex);
    auto& t = built[n];
    if (!t) t = std::make_shared<const TimeDispersion>(n);
    return t;
}

int time_dispersion_margin(int n) { return int(std::ceil(10 * std::cbrt(n / 8.0))); }

LeapfrogError leapfrog_error(double f, double dt) {
    const double w = 2 * M_PI * f, wp = 2 / dt * std::sin(w * dt / 2);
    return {w / wp - 1, (w - wp) / (2 * M_PI)};
}

}  // namespace rtm
