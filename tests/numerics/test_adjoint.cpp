// Born modelling and born-adjoint migration are adjoint whatever the record interval
// and the step (the resampling and the time-dispersion transforms inside both), in 2D
// and 3D, in double and single precision.
#include "born_dot_test.h"

using namespace rtm;
using namespace rtm::test;

namespace {

// The bounds, on DotTest::error (the operators' relative error, see there):
//   double precision: F dm is stored as float traces (SEG-Y's precision), each sample
//   rounded to 2^-24 = 6e-8 of itself: e1 <= 6e-8; the rest is double rounding (~1e-13).
//   Bound 1e-7. With the source wavefield rebuilt from its saved band (fp32), the band's
//   rounding enters u at every step and is carried along (leapfrog neither damps nor
//   grows it): at most N steps x 6e-8 of u, for N ~ 400: 2.4e-5. Bound 3e-5.
//   single precision: every step rounds the update (the stencil sum and the leapfrog
//   update: ~3 roundings of 6e-8 each, relative to u), and each error is carried along
//   like the band's: after N steps at most 3 N 6e-8 per propagation, coherent worst
//   case. F and F^T each chain two propagations (background and scattered; source and
//   receiver): e1, e2 <= 2 x 3 N x 6e-8, so error <= 12 N 6e-8 = 7.2e-7 N (2.9e-4 at N =
//   400; random rounding would give ~sqrt(N) times less).
constexpr double kFloat = 5.96e-8;  // 2^-24
double single_bound(int steps) { return 12 * steps * kFloat; }

// (Equal intervals: test_migration.cpp's dot test.)
void check_dot_tests(int ndim) {
    for (double record_dt : {0.004}) {
        PropagationOptions p;
        p.dt = 0.001;
        p.precision = Precision::Double;
        const DotTest snap = born_dot_test(ndim, record_dt, p, SourceStorage::Snapshots);
        const DotTest band = born_dot_test(ndim, record_dt, p, SourceStorage::Boundary);
        p.precision = Precision::Single;
        const DotTest single = born_dot_test(ndim, record_dt, p, SourceStorage::Snapshots);
        WARN(ndim << "D, records at " << record_dt * 1e3 << " ms over a 1 ms step (" << snap.steps
                  << " steps): <F dm, d> = " << snap.lhs << ", <dm, F^T d> = " << snap.rhs << "; mismatch "
                  << snap.error() << " (double), " << band.error() << " (double, band), " << single.error()
                  << " (single; bound " << single_bound(single.steps) << ")");
        CHECK(snap.error() < 1e-7);
        CHECK(band.error() < 3e-5);
        CHECK(single.error() < single_bound(single.steps));
    }
}

}  // namespace

TEST_CASE("Born modelling and migration are adjoint with records at 4 ms over a 1 ms step (2D)") {
    check_dot_tests(2);
}

TEST_CASE("Born modelling and migration are adjoint with records at 4 ms over a 1 ms step (3D)") {
    check_dot_tests(3);
}
