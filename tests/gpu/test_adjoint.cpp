// Born modelling and born-adjoint migration on the GPU are adjoint with records at
// 4 ms over a 1 ms step, in 2D and 3D (the CPU twin: tests/numerics/test_adjoint.cpp,
// whose bounds these are: see there for their derivation).
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
