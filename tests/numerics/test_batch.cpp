// A batch of shots (Propagator::batch, model_shots' batches) computes each member as
// if it ran alone: the same arithmetic on the member's own arrays, so equal bit for bit.
#include <cmath>

#include "migration_fixture.h"
#include "simulate.h"
#include "support/catch.hpp"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;

namespace {

Run batch_run(int ndim, bool free_surface, Boundary boundary) {
    Run r;
    r.grid.nx = 41;
    r.grid.ny = ndim == 3 ? 33 : 1;
    r.grid.nz = 37;
    r.grid.dx = r.grid.dy = r.grid.dz = 10;
    r.velocity = [](double x, double, double z) { return 1800 + 1.5 * z + 0.4 * x; };
    r.domain.dt = 0.0012;
    r.domain.pml_cells = 8;
    r.domain.free_surface = free_surface;
    r.domain.boundary = boundary;
    r.nt = 150;
    r.precision = Precision::Single;
    return r;
}

}  // namespace

TEST_CASE("a batch of three shots gives each shot's traces and wavefield exactly as alone") {
    for (int ndim : {2, 3})
        for (bool fs : {false, true})
            for (Boundary bnd : {Boundary::Cpml, Boundary::Damping}) {
                const Run r = batch_run(ndim, fs, bnd);
                Domain d(r.grid, velocity_field(r), r.domain);
                const auto w = ricker(15, r.domain.dt, r.nt);
                const std::vector<double> wavelet(w.begin(), w.end());
                const double y = ndim == 3 ? 163.1 : 0;
                const Position src[3] = {{101.3, y, 12.7}, {207.9, y, 3.1}, {322.4, y, 251.6}};
                const Position rec[2] = {{55.5, y, 21.2}, {388.8, y, 140.3}};

                auto batch = make_cpu_propagator(d, r.precision, 3);
                std::vector<PointStencil> srcs, recs;
                for (int m = 0; m < 3; ++m) {
                    srcs.push_back(member_stencil(d.point(src[m].x, src[m].y, src[m].z, "source"), d.box(), m));
                    for (int k = m; k < 2; ++k)  // members with 2, 1 and 0 receivers
                        recs.push_back(member_stencil(d.point(rec[k].x, rec[k].y, rec[k].z, "receiver"), d.box(), m));
                }
                batch->set_sources(srcs, {wavelet, wavelet, wavelet});
                batch->set_receivers(recs, r.nt);
                for (int n = 0; n < r.nt; ++n) batch->step(n);
                const auto traces = batch->receiver_traces();
                const auto field = batch->wavefield();
                REQUIRE(traces.size() == 3 * std::size_t(r.nt));
                REQUIRE(field.size() == 3 * r.grid.size());

                std::size_t r0 = 0;
                for (int m = 0; m < 3; ++m) {
                    auto alone = make_cpu_propagator(d, r.precision);
                    alone->set_sources({d.point(src[m].x, src[m].y, src[m].z, "source")}, {wavelet});
                    std::vector<PointStencil> own;
                    for (int k = m; k < 2; ++k) own.push_back(d.point(rec[k].x, rec[k].y, rec[k].z, "receiver"));
                    alone->set_receivers(own, r.nt);
                    for (int n = 0; n < r.nt; ++n) alone->step(n);
                    const auto t = alone->receiver_traces();
                    const auto f = alone->wavefield();
                    INFO(ndim << "D, free surface " << fs << ", " << (bnd == Boundary::Cpml ? "C-PML" : "damping")
                              << ", member " << m);
                    double peak = 0;
                    for (double v : f) peak = std::max(peak, std::abs(v));
                    CHECK(peak > 0);
                    CHECK(std::equal(t.begin(), t.end(), traces.begin() + r0 * r.nt));
                    CHECK(std::equal(f.begin(), f.end(), field.begin() + m * r.grid.size()));
                    r0 += own.size();
                }
                // Migration's operations need one wavefield: a batch refuses them clearly.
                CHECK(error_of([&] { batch->keep(false); }).find("batch of 3") != std::string::npos);
                CHECK(error_of([&] { batch->save_band(nullptr); }).find("batch of 3") != std::string::npos);
            }
}

TEST_CASE("model_shots in batches (3 + 2 shots) equals shot-by-shot modelling") {
    const Model m = make_model(61, 1, 41, 10, [](double x, double, double z) { return 1700 + z + 0.3 * x; });
    std::vector<ShotGather> geo;
    for (int s = 0; s < 5; ++s) {
        geo.push_back(shot_geometry(m, 50.0 + 110.3 * s, 0, 20, 0.3, 0.002));
        geo.back().id = s + 1;
    }
    PropagationOptions p;
    p.pml_cells = 10;
    p.batch = 1;
    const auto one = model_shots(m, geo, ricker_wavelet(15), p);
    p.batch = 3;
    const auto three = model_shots(m, geo, ricker_wavelet(15), p);
    REQUIRE(one.size() == 5);
    REQUIRE(three.size() == 5);
    for (int s = 0; s < 5; ++s) {
        INFO("shot " << s);
        CHECK(three[s].id == s + 1);
        CHECK(three[s].data == one[s].data);
    }
    CHECK(modelling_batch(p, 5, 1e4, 1e5) == 3);
    p.batch = 0;
    CHECK(modelling_batch(p, 5, 1e4, 1e5) == 1);  // the CPU: automatic is one shot at a time
    p.backend.gpu = true;
    CHECK(modelling_batch(p, 5000, 1e6, 1e5) == int(kBatchPoints / 1e6));
    CHECK(modelling_batch(p, 5, 1e4, 1e5) == 5);
    // Many receivers and steps: the traces' size caps the batch (and never below 1).
    CHECK(modelling_batch(p, 5000, 1e4, 1e7) == int(kBatchSamples / 1e7));
    CHECK(modelling_batch(p, 5000, 1e4, 1e12) == 1);
}
