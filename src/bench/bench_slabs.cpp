// rtm bench --mode slabs, under mpirun -np G (GPUs of one node): one shot's modelling
// steps over the G ranks as z-slabs (one shot group), against one GPU in the same job.
// For each boundary (--boundary none,damping: the full update alone, and a modelling step
// with damping layers; cpml too), on the grid --grid with --pml absorbing cells:
//   1 GPU  : rank 0 steps the whole box alone (the others wait);
//   G GPUs : the slab propagator, the exchange in the step (edge planes first, copies
//            hidden behind the interior: propagation/cuda_slab_exchange.h);
//   serial : the same with RTM_SLAB_OVERLAP=0 (edge planes, copies, interior in turn);
//   alone  : each rank steps its slab with no exchange at all (the compute's time).
// Reported: the group's Gpoints/s and the speed-up over 1 GPU (points per second, so that
// --scaling weak, G GPUs stepping a grid of G NZ planes, reads alike; efficiency is the
// speed-up over G); the exchange's own time (serial - alone), what of it is left on the
// step (G GPUs - alone, "exposed", as a share of the step), the share hidden
// (1 - exposed / exchange), and the most device memory a rank's slab propagator took.
// Each rank builds only its slab's arrays (DomainOptions::slabs), so a grid no GPU can
// hold alone runs: rank 0's refusal is then printed in place of the one-GPU time.
// Each time: the median over --repeats of --steps steps after 3 warm-up steps, from a
// barrier to the slowest rank's end (device synchronised, then a barrier).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>

#include "bench/bench_common.h"
#include "bench/bench_json.h"
#include "core/error.h"
#include "parallel/slab_layout.h"
#include "parallel/world.h"
#include "propagation/backend.h"

namespace rtm::bench {

namespace {

using Clock = std::chrono::steady_clock;

// Seconds per step of `prop` (median of the repeats), every rank of `world` timing together.
// prop: null on a rank that only waits.
double time_steps(const Options& o, Propagator* prop, const parallel::World& world) {
    int n = 0;
    std::vector<double> t;
    for (int r = -1; r < o.repeats; ++r) {  // r = -1: warm-up
        world.barrier();
        const auto t0 = Clock::now();
        if (prop) {
            for (int s = 0; s < (r < 0 ? 3 : o.steps); ++s) prop->step(n++);
            gpu_synchronize();
        }
        world.barrier();
        if (r >= 0) t.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / o.steps);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

// A source in the middle of the window (on the face of 2 slabs or near it) and a line of
// receivers along x just below the top of the window.
void place(const Domain& d, Propagator& p, int nt) {
    const Grid& g = d.window();
    std::vector<double> wavelet(static_cast<std::size_t>(nt), 0.0);
    for (int i = 0; i < nt; ++i) wavelet[std::size_t(i)] = std::sin(0.05 * i) * std::exp(-0.001 * i);
    p.set_sources({d.point(0.5 * g.x_max() + 3.7, 0.5 * g.y_max() + 2.1, 0.5 * (g.z0 + g.z_max()) + 1.3, "source")},
                  {wavelet});
    std::vector<PointStencil> rec;
    for (int ix = 0; ix < g.nx; ++ix) rec.push_back(d.point(ix * g.dx, 0.5 * g.y_max(), g.z0 + 2 * g.dz, "receiver"));
    p.set_receivers(rec, nt);
}

}  // namespace

void slabs_mode(Options o, const std::string& json_file, const std::string& cmd) {
    const parallel::World& world = parallel::World::get();
    const int G = world.size();
    std::string device;
    if (!cuda_device_available(&device, world.node_rank()))
        fail("rtm bench --mode slabs", "no usable GPU: " + device, "Run it on a GPU machine under mpirun -np <GPUs>");
    const Precision prec = o.dbl ? Precision::Double : Precision::Single;
    const int nt = 3 + o.steps * (o.repeats + 1) + 3;
    std::vector<std::string> boundaries;
    {
        std::stringstream ss(o.boundary);
        for (std::string b; std::getline(ss, b, ',');) boundaries.push_back(b);
    }
    nlohmann::json j = json_header(cmd, device + " x " + std::to_string(G) + " ranks");
    j["scaling"] = o.weak ? "weak" : "strong";
    if (world.root())
        std::printf("device: %s; %d ranks (rank r on GPU node-rank mod GPUs); %s scaling\n"
                    "%-8s %-15s %-15s %9s %8s %9s %8s %8s %6s %8s %8s %9s %8s %9s\n",
                    device.c_str(), G, o.weak ? "weak" : "strong", "boundary", "grid 1 GPU", "grid G GPUs", "1GPU ms",
                    "Gpts/s", "G ms", "Gpts/s", "speedup", "effic", "exch ms", "exposed", "exp/step", "hidden",
                    "GB/GPU");
    for (const auto& b : boundaries) {
        if (b != "none" && b != "damping" && b != "cpml")
            fail("option --boundary", "unknown boundary '" + b + "' for --mode slabs", "Use none, damping or cpml (comma-separated)");
        Options ob = o;
        ob.boundary = b == "none" ? "cpml" : b;
        ob.pml = b == "none" ? 0 : o.pml;
        Options og = ob;  // the group's grid: G times as deep for weak scaling
        if (o.weak) og.nz = o.nz * G;
        // 1 GPU: rank 0 alone. A grid one GPU cannot hold is reported as such (the
        // propagator's memory check refuses it before allocating).
        double t1 = 0, points1 = 0;
        std::string refusal;
        {
            std::unique_ptr<Domain> d1;
            std::unique_ptr<Propagator> one;
            if (world.root()) {
                try {
                    d1 = std::make_unique<Domain>(modelling_domain(ob));
                    points1 = double(d1->box().points());
                    one = make_cuda_propagator(*d1, prec);
                    place(*d1, *one, nt);
                } catch (const std::exception& e) {
                    refusal = e.what();
                    one.reset();
                }
            }
            t1 = time_steps(o, one.get(), world);
            if (!one) t1 = 0;
        }
        world.broadcast(&t1, sizeof t1);
        world.broadcast(&points1, sizeof points1);
        // G GPUs: each rank builds only its slab's arrays; overlapped, serial; then each
        // slab alone.
        const Domain d = modelling_domain(og, G, world.rank());
        const double points = double(d.box().points());
        Backend be;
        be.gpu = true;
        be.group = &world;
        double used = 0;  // device bytes of this rank's slab propagator
        const auto group_time = [&](const char* overlap) {
            setenv("RTM_SLAB_OVERLAP", overlap, 1);
            const double free0 = device_free_bytes();
            auto p = make_propagator(d, prec, be);
            place(d, *p, nt);
            used = std::max(used, free0 - device_free_bytes());
            const double t = time_steps(o, p.get(), world);
            unsetenv("RTM_SLAB_OVERLAP");
            return t;
        };
        const double tg = group_time("1"), ts = group_time("0");
        double ta = 0;
        {
            const auto s = parallel::slab_layout(d.box().nz, d.box().pml_lo[2], d.box().pml_hi[2], d.box().free_surface, G);
            const auto& me = s[std::size_t(world.rank())];
            const Domain slab = d.slab(me.z0, me.z1);
            auto p = make_cuda_propagator(slab, prec);
            place(slab, *p, nt);
            ta = time_steps(o, p.get(), world);
        }
        double used_max = used;
        for (const auto& bytes : world.allgather(&used, sizeof used)) {
            double x;
            std::memcpy(&x, bytes.data(), sizeof x);
            used_max = std::max(used_max, x);
        }
        const double exch = ts - ta, exposed = std::max(0.0, tg - ta);
        const double hidden = exch > 0 ? 1 - std::min(1.0, exposed / exch) : 1;
        // Speed-up: the group's points per second over one GPU's (for weak scaling the
        // group steps G times the points); efficiency: that over G.
        const double speedup = t1 > 0 ? (points / tg) / (points1 / t1) : 0;
        if (world.root()) {
            const auto dims = [](const Options& x) {
                return std::to_string(x.nx) + "x" + std::to_string(x.ny) + "x" + std::to_string(x.nz);
            };
            if (t1 > 0)
                std::printf("%-8s %-15s %-15s %9.3f %8.2f %9.3f %8.2f %7.3fx %6.3f %8.3f %8.3f %8.1f%% %7.1f%% %9.1f\n",
                            b.c_str(), dims(ob).c_str(), dims(og).c_str(), t1 * 1e3, points1 / t1 * 1e-9, tg * 1e3,
                            points / tg * 1e-9, speedup, speedup / G, exch * 1e3, exposed * 1e3, 100 * exposed / tg,
                            100 * hidden, used_max * 1e-9);
            else
                std::printf("%-8s %-15s %-15s %9s %8s %9.3f %8.2f %8s %6s %8.3f %8.3f %8.1f%% %7.1f%% %9.1f\n"
                            "         one GPU refused the grid: %s\n",
                            b.c_str(), dims(ob).c_str(), dims(og).c_str(), "-", "-", tg * 1e3, points / tg * 1e-9, "-",
                            "-", exch * 1e3, exposed * 1e3, 100 * exposed / tg, 100 * hidden, used_max * 1e-9,
                            refusal.c_str());
            nlohmann::json row = {{"boundary", b}, {"grid_1gpu", {ob.nx, ob.ny, ob.nz}},
                                  {"grid", {og.nx, og.ny, og.nz}}, {"ranks", G},
                                  {"precision", o.dbl ? "fp64" : "fp32"}, {"seconds_per_step_group", tg},
                                  {"Gpoints_per_s_group", points / tg * 1e-9},
                                  {"seconds_per_step_serial_exchange", ts}, {"seconds_per_step_slab_alone", ta},
                                  {"exchange_seconds_per_step", exch}, {"exposed_seconds_per_step", exposed},
                                  {"exposed_share_of_step", exposed / tg}, {"hidden_share", hidden},
                                  {"device_bytes_per_gpu_max", used_max}, {"fits_one_gpu", t1 > 0}};
            if (t1 > 0) {
                row["seconds_per_step_1gpu"] = t1;
                row["Gpoints_per_s_1gpu"] = points1 / t1 * 1e-9;
                row["speedup"] = speedup;
                row["efficiency"] = speedup / G;
            } else {
                row["one_gpu_refusal"] = refusal;
            }
            j["rows"].push_back(row);
            std::fflush(stdout);
        }
    }
    if (world.root() && !json_file.empty()) {
        std::ofstream f(json_file);
        if (!f) fail(json_file, "cannot be written", "Check the folder exists and is writable");
        f << j.dump(2) << "\n";
    }
}

}  // namespace rtm::bench
