// Born modelling and born-adjoint migration on the GPU are adjoint with records at
// 4 ms over a 1 ms step, in 2D and 3D (the CPU twin: tests/numerics/test_adjoint.cpp,
// whose bounds these are: see there for their derivation).
#include <cmath>

#include "born_dot_test.h"
#include "gpu_test.h"

using namespace rtm;
using namespace rtm::test;

namespace {

constexpr double kFloat = 5.96e-8;  // 2^-24

void check_gpu_dot_tests(int ndim) {
    if (!gpu_or_skip()) return;
    PropagationOptions p;
    p.dt = 0.001;
    p.backend.gpu = true;
    p.precision = Precision::Double;
    const DotTest snap = born_dot_test(ndim, 0.004, p, SourceStorage::Snapshots);
    const DotTest band = born_dot_test(ndim, 0.004, p, SourceStorage::Boundary);
    p.precision = Precision::Single;
    const DotTest single = born_dot_test(ndim, 0.004, p, SourceStorage::Snapshots);
    WARN(ndim << "D on the GPU, records at 4 ms over a 1 ms step (" << snap.steps << " steps): <F dm, d> = "
              << snap.lhs << ", <dm, F^T d> = " << snap.rhs << "; mismatch " << snap.error() << " (double), "
              << band.error() << " (double, band), " << single.error() << " (single)");
    // Double: the float traces' 2^-24; the band's fp32 rounding carried over N steps;
    // single: 12 N 2^-24 (two chained propagations in each operator, ~3 roundings a step).
    CHECK(snap.error() < 1e-7);
    CHECK(band.error() < 3e-5);
    CHECK(single.error() < 12 * single.steps * kFloat);
}

}  // namespace

TEST_CASE("on the GPU Born modelling and migration are adjoint with records at 4 ms over a 1 ms step (2D)") {
    check_gpu_dot_tests(2);
}

TEST_CASE("on the GPU Born modelling and migration are adjoint with records at 4 ms over a 1 ms step (3D)") {
    check_gpu_dot_tests(3);
}

TEST_CASE("on the GPU TTI Born modelling and born-adjoint migration are adjoint (dot-product test: 2D, 3D, double "
          "and single)",
          "[gpu][tti]") {
    // The CPU twin's test and bounds (tests/physics/test_anisotropic_migration.cpp): double
    // 1e-7 (the fp32 traces); single 12 sqrt(N) K 2^-24, K = 90 (2D TTI) or 130 (3D)
    // roundings a point and step, two chained propagations in each operator. Both
    // operators read the same axis (the propagator's, in its precision), so rounding it
    // to fp32 changes both alike: the test still sees any mismatch between them.
    if (!gpu_or_skip()) return;
    for (int ndim : {2, 3}) {
        PropagationOptions p;
        p.dt = 0.001;  // below the TTI limit of both models (test_anisotropic_migration.cpp)
        p.boundary = Boundary::Damping;
        p.backend.gpu = true;
        p.precision = Precision::Double;
        const DotTest dbl = born_dot_test(ndim, 0.004, p, SourceStorage::Snapshots, false, 0, tilted_anisotropy);
        p.precision = Precision::Single;
        const DotTest single = born_dot_test(ndim, 0.004, p, SourceStorage::Snapshots, false, 0, tilted_anisotropy);
        const double K = ndim == 3 ? 130 : 90, single_bound = 12 * std::sqrt(double(single.steps)) * K * kFloat;
        WARN(ndim << "D TTI on the GPU, " << dbl.steps << " steps: <F dm, d> = " << dbl.lhs << ", <dm, F^T d> = "
                  << dbl.rhs << "; mismatch " << dbl.error() << " (double, bound 1e-7), " << single.error()
                  << " (single, bound " << single_bound << ")");
        CHECK(std::abs(dbl.lhs) > 0);
        CHECK(dbl.error() < 1e-7);
        CHECK(single.error() < single_bound);
    }
}
