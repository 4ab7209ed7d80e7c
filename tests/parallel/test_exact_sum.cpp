// Order-independent exact sums (imaging/exact_sum.h), the stack's accumulator: the
// image of a job must not depend on how many ranks shared its shots or in which order
// they finished.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "support/catch.hpp"

#include "core/zeroed_array.h"
#include "imaging/exact_sum.h"

using rtm::imaging::ExactSum;

namespace {

// Values over 60 decades of magnitude, both signs: every bin boundary is crossed.
std::vector<double> wide_values(int n, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> mant(-1, 1), expo(-100, 100);
    std::vector<double> v(n);
    for (auto& x : v) x = mant(rng) * std::pow(2.0, expo(rng));
    return v;
}

ExactSum sum_of(const std::vector<double>& v) {
    ExactSum s;
    for (double x : v) s.add(x);
    return s;
}

// The bins by their definition (exact_sum.h), with the library's ilogb, ldexp and trunc:
// the reference for ExactSum::add's faster arithmetic.
ExactSum defined_sum_of(const std::vector<double>& v) {
    ExactSum s;
    for (double x : v) {
        if (x == 0) continue;
        const int e = std::ilogb(x);
        const std::int32_t b = e >= 0 ? e / 32 : -((-e + 31) / 32);
        if (!s.used || b > s.top) {  // the bins move so that bins[0] is bin b
            const std::int64_t shift = s.used ? std::int64_t(b) - s.top : 0;
            for (int k = 2; k >= 0; --k) s.bins[k] = k - shift >= 0 ? s.bins[k - shift] : 0;
            s.top = b;
            s.used = 1;
        }
        double above = 0;
        for (std::int32_t j = b; j >= s.top - 2; --j) {
            const double t = std::trunc(std::ldexp(x, -32 * j));
            s.bins[s.top - j] += std::int64_t(t - std::ldexp(above, 32));
            above = t;
        }
    }
    return s;
}

}  // namespace

TEST_CASE("exact sums are the same bit for bit for any order and any split into partial sums") {
    const std::vector<double> v = wide_values(5000, 7);
    const ExactSum ref = sum_of(v);
    std::mt19937 rng(11);
    for (int trial = 0; trial < 20; ++trial) {
        std::vector<double> w = v;
        std::shuffle(w.begin(), w.end(), rng);
        // Split among `parts` partial sums (ranks), merged in a random order.
        const int parts = 1 + trial % 7;
        std::vector<ExactSum> partial(parts);
        for (std::size_t i = 0; i < w.size(); ++i) partial[rng() % parts].add(w[i]);
        std::shuffle(partial.begin(), partial.end(), rng);
        ExactSum total;
        for (const auto& p : partial) total.add(p);
        INFO("trial " << trial << ", " << parts << " partial sums");
        CHECK(total == ref);
        CHECK(total.value() == ref.value());
    }
}

TEST_CASE("exact sums hold the bins of their definition for values over the whole double range") {
    // add() scales by multiplying with powers of two and truncates through int64 instead
    // of calling ldexp and trunc: both exact, so the bins must be the definition's, bit
    // for bit (job folders keep them raw: a resumed job adds to bins an older build made).
    std::mt19937_64 rng(13);
    std::uniform_real_distribution<double> mant(-1, 1);
    std::uniform_int_distribution<int> expo(-1074, 1023);
    for (int trial = 0; trial < 200; ++trial) {
        std::vector<double> v(200);
        const int centre = expo(rng), spread = 1 + trial % 200;  // narrow to wide sums
        for (auto& x : v)
            x = std::ldexp(mant(rng), std::clamp(centre + int(rng() % (2 * spread)) - spread, -1074, 1023));
        v.push_back(std::numeric_limits<double>::denorm_min());
        v.push_back(-std::numeric_limits<double>::max());
        std::shuffle(v.begin(), v.end(), rng);
        v.resize(trial % 2 ? v.size() : v.size() - 2 + std::size_t(trial % 3 == 0));  // with and without the extremes
        INFO("trial " << trial);
        CHECK(sum_of(v) == defined_sum_of(v));
    }
}

TEST_CASE("exact sums are exact where the true sum is known") {
    // Integers times powers of two spanning 2^-32 .. 2^50 in one sum: the dropped part is
    // below 2^(32 (T - 2)) with the top bin T = 1 (values below 2^64), i.e. below 2^-32,
    // so terms that are multiples of 2^-32 are all kept: the bins hold the exact sum,
    // counted here in units of 2^-32 in a 128-bit integer.
    ExactSum s;
    __int128 exact = 0;
    for (int k = 0; k < 1000; ++k) {
        const long m = (k * 7919L) % 2001 - 1000;
        const int e = k % 83;  // the term is m 2^(e - 32)
        s.add(std::ldexp(double(m), e - 32));
        exact += __int128(m) << e;
    }
    REQUIRE(s.top == 1);
    const __int128 held = (__int128(s.bins[0]) << 64) + (__int128(s.bins[1]) << 32) + __int128(s.bins[2]);
    CHECK(held == exact);
    // value() rounds the bins once each: within 2 ulp of the exact sum.
    const double want = std::ldexp(double(exact), -32);
    CHECK(std::abs(s.value() - want) <= 2 * std::abs(want) * 0x1p-52);
    // Cancellation that double summation gets wrong: 1e20 + 1 - 1e20 = 1.
    CHECK(sum_of({1e20, 1.0, -1e20}).value() == 1.0);
    double naive = 0;
    for (double x : {1e20, 1.0, -1e20}) naive += x;
    CHECK(naive == 0.0);  // what the double stack would have said
    CHECK(sum_of({}).value() == 0.0);
    CHECK(sum_of({-0.0, 0.0}).value() == 0.0);
}

TEST_CASE("value() is the bins' definition bit for bit, at every scale of a double") {
    // value() scales each bin by a multiplication with a power of two instead of ldexp:
    // the same double wherever the power is normal (the bin, an integer >= 1 in magnitude,
    // times it is exact or overflows as ldexp does) and ldexp itself elsewhere. Sums whose
    // top bins span the double range (values 2^-1070 .. 2^1020), against the definition.
    std::mt19937_64 rng(17);
    std::uniform_real_distribution<double> mant(-1, 1);
    std::uniform_int_distribution<int> expo(-1070, 1020);
    for (int trial = 0; trial < 2000; ++trial) {
        ExactSum s;
        const int e = expo(rng);
        for (int k = 0; k < 5; ++k) s.add(std::ldexp(mant(rng), e - 40 * k));
        double want = 0;
        for (int k = 2; k >= 0; --k) want += std::ldexp(double(s.bins[k]), 32 * (s.top - k));
        INFO("trial " << trial << ", exponent " << e);
        CHECK(s.value() == want);
    }
}

TEST_CASE("exact sums keep the relative accuracy of their largest term to 2^-64 per term") {
    // The dropped bits of each term are below 2^(32 (T - 2)) <= 2^-64 |largest term|
    // (the largest term is >= 2^(32 T)): n terms lose at most n 2^-64 of it.
    const std::vector<double> v = wide_values(2000, 3);
    long double exact = 0;  // 64-bit mantissa; the terms are summed largest first to keep it honest
    std::vector<double> w = v;
    std::sort(w.begin(), w.end(), [](double a, double b) { return std::abs(a) > std::abs(b); });
    for (double x : w) exact += x;
    const double largest = std::abs(w.front());
    const double bound = largest * (2000 * std::ldexp(1.0, -64) + std::ldexp(1.0, -62)) + std::abs(double(exact)) * 0x1p-52;
    CHECK(std::abs(sum_of(v).value() - double(exact)) <= bound);
}

TEST_CASE("zeroed memory holds empty exact sums: a new stack is not written until shots are added") {
    // The stack lives on calloc'd pages (core/zeroed_array.h) and is never constructed
    // element by element, so the empty sum must be all-zero bytes, and adding to it must
    // behave as adding to a default-constructed sum.
    const ExactSum empty;
    const unsigned char* b = reinterpret_cast<const unsigned char*>(&empty);
    CHECK(std::all_of(b, b + sizeof empty, [](unsigned char c) { return c == 0; }));
    rtm::ZeroedArray<ExactSum> sums(1000);
    REQUIRE(sums.size() == 1000);
    const std::vector<double> v = wide_values(50, 5);
    for (std::size_t i = 0; i < sums.size(); ++i) {
        CHECK(sums[i] == empty);
        CHECK(sums[i].value() == 0.0);
    }
    for (double x : v) sums[7].add(x);
    CHECK(sums[7] == sum_of(v));
    ExactSum merged;
    merged.add(sums[8]);  // an empty sum merged changes nothing
    merged.add(sums[7]);
    CHECK(merged == sum_of(v));
}
