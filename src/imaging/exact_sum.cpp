#include "imaging/exact_sum.h"

#include <cmath>
#include <cstring>

namespace rtm::imaging {

namespace {

constexpr int kWidth = 32;  // bits per bin
constexpr int kKept = 3;    // bins kept below and including the top

// The bin of x's leading bit: floor(exponent / 32) (x != 0, finite).
std::int32_t bin_of(double x) {
    const int e = std::ilogb(x);
    return e >= 0 ? e / kWidth : -((-e + kWidth - 1) / kWidth);
}

// Moves the bins so that bins[0] is bin `top` (>= this->top), dropping those below top - 2.
void raise_top(ExactSum& s, std::int32_t top) {
    if (!s.used) {
        s.top = top;
        s.used = 1;
        return;
    }
    const std::int64_t shift = std::int64_t(top) - s.top;
    if (shift == 0) return;
    for (int k = kKept - 1; k >= 0; --k) s.bins[k] = k - shift >= 0 ? s.bins[k - shift] : 0;
    s.top = top;
}

}  // namespace

void ExactSum::add(double x) {
    if (x == 0) return;
    const std::int32_t b = bin_of(x);
    if (!used || b > top) raise_top(*this, b);
    // trunc(x / 2^(32 j)) for the bins j from b down to top - 2: exact (a power-of-two
    // scaling that stays >= 1 in magnitude, then a truncation), and the part in bin j is
    // t_j - t_(j+1) 2^32: an integer below 2^32, so the subtraction is exact too.
    double above = 0;  // trunc(x / 2^(32 (b + 1))): nothing of x is above bin b
    for (std::int32_t j = b; j >= top - (kKept - 1); --j) {
        const double t = std::trunc(std::ldexp(x, -kWidth * j));
        bins[top - j] += std::int64_t(t - std::ldexp(above, kWidth));
        above = t;
    }
}

void ExactSum::add(const ExactSum& o) {
    if (!o.used) return;
    ExactSum other = o;
    if (!used || other.top > top) raise_top(*this, other.top);
    raise_top(other, top);
    for (int k = 0; k < kKept; ++k) bins[k] += other.bins[k];
}

double ExactSum::value() const {
    if (!used) return 0;
    double v = 0;  // smallest bin first; a fixed order, so equal bins give equal doubles
    for (int k = kKept - 1; k >= 0; --k) v += std::ldexp(double(bins[k]), kWidth * (top - k));
    return v;
}

}  // namespace rtm::imaging
