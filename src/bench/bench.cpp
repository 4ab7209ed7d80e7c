// rtm bench: throughput of the time step (full update, stencil only) and of whole
// modelling steps, each against a bandwidth ceiling measured in the same run.
#include "bench/bench.h"

#include <omp.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

#include "bench/bench_common.h"
#include "bench/bench_json.h"
#include "core/error.h"
#include "core/host_memory.h"
#include "core/log.h"
#include "core/threads.h"
#include "io/output_path.h"
#include "kernels/cpu/step_cpu.h"
#include "kernels/cpu/tti_cpu.h"
#include "pipeline/plan.h"
#include "propagation/backend.h"
#include "propagation/propagator.h"
#ifdef RTM_HAVE_CUDA
#include "kernels/cuda/step_cuda.h"
#include "kernels/cuda/tti_cuda.h"
#endif

namespace rtm {

namespace bench {
namespace {

namespace po = boost::program_options;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

void parse_grid(const std::string& s, Options& o) {
    std::vector<int> v;
    std::stringstream ss(s);
    std::string part;
    while (std::getline(ss, part, 'x')) {
        try {
            std::size_t used = 0;
            v.push_back(std::stoi(part, &used));
            if (used != part.size()) throw std::invalid_argument(part);  // "64abc"
        } catch (...) {
            v.clear();
            break;
        }
    }
    // (A value that does not parse is a usage error, exit 2, as every command's.)
    if (v.size() != 2 && v.size() != 3)
        fail_usage("option --grid", "'" + s + "' is not NXxNYxNZ (3D) or NXxNZ (2D)", "Write for example 512x512x512");
    // Below 16 points an axis is mostly the stencil's halo, and the CPU ceiling's passes
    // over the grid's few points took minutes.
    if (*std::min_element(v.begin(), v.end()) < 16)
        fail("option --grid", "'" + s + "' has a size below 16 points", "Give at least 16 points per axis, e.g. 64x64");
    o.nx = v[0];
    o.ny = v.size() == 3 ? v[1] : 1;
    o.nz = v.back();
}

// Bytes of the last-level caches of the machine: the highest-level cache of cpu0 in
// sysfs times the instances of it (online CPUs / CPUs sharing one), else what
// sysconf says of one (some virtual machines have no sysfs cache folder), else 0.
double last_level_cache_bytes() {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index";
    int best_level = 0;
    double best = 0;
    for (int i = 0; i < 16; ++i) {
        std::ifstream lv(dir + std::to_string(i) + "/level"), sz(dir + std::to_string(i) + "/size"),
            sh(dir + std::to_string(i) + "/shared_cpu_list");
        int level = 0;
        std::string size, shared;
        if (!(lv >> level) || !(sz >> size) || level < best_level) continue;
        double bytes = std::atof(size.c_str());
        if (size.find('K') != std::string::npos) bytes *= 1024;
        if (size.find('M') != std::string::npos) bytes *= 1024 * 1024;
        // shared_cpu_list: "0-7,64-71"; count the CPUs sharing this cache.
        int sharing = 0;
        std::getline(sh, shared);
        std::stringstream ss(shared);
        for (std::string r; std::getline(ss, r, ',');) {
            const auto dash = r.find('-');
            sharing += dash == std::string::npos ? 1 : std::atoi(r.c_str() + dash + 1) - std::atoi(r.c_str()) + 1;
        }
        best_level = level;
        best = bytes * std::max(1L, sysconf(_SC_NPROCESSORS_ONLN) / std::max(1, sharing));
    }
    if (best > 0) return best;
    for (int name : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE})
        if (sysconf(name) > 0) return double(sysconf(name));
    return 0;
}

// CPU copy bandwidth in this run: STREAM triad a = b + s c (counted 12 B/element, as
// STREAM does) and the update's own pattern d = 2 a - d + b c (16 B/element, in place),
// each on two sizes: arrays as large as the last-level caches (at least 64 MiB, the
// four no more than half the free memory; the triad then streams 3x what the caches
// hold, the other 4x: memory bandwidth; with 128 MiB arrays a 508 MiB cache held them
// and the "ceiling" was the cache's), and arrays of the timed grid's size (its points),
// where the grid lives (in the caches when it is small). The ceiling is the highest of
// the four, so a kernel that streams its minimal bytes reads 100% at best wherever its
// grid lives.
Ceiling cpu_ceiling(std::size_t grid_points) {
    Ceiling c;
    c.device = "CPU, " + std::to_string(omp_get_max_threads()) + " OpenMP threads";
    const double llc = last_level_cache_bytes(),
                 avail = double(sysconf(_SC_AVPHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
    const double bytes = std::max(64.0 * (1 << 20), std::min(llc, avail > 0 ? avail / 8 : llc));
    const std::size_t n = std::size_t(bytes / sizeof(float));
    std::vector<float> a(n), b(n), d(n), e(n);
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) {
        a[i] = float(i % 7) * 0.1f;
        b[i] = float(i % 5) * 0.2f;
        d[i] = float(i % 3) * 0.3f;
        e[i] = 1.f;
    }
    const float s = 0.5f;
    float* pa = a.data();
    const float* pb = b.data();
    const float* pd = d.data();
    float* pe = e.data();
    // GB/s of both patterns on the first m elements, each timing `passes` passes; the median of 5.
    auto measure = [&](std::size_t m, const std::string& where) {
        // As many bytes as one pass over the whole arrays, in at most 4096 passes (each
        // is a parallel loop with its barrier).
        const std::size_t passes = std::clamp<std::size_t>(n / m, 1, 4096);
        auto median = [&](auto&& f) {
            std::vector<double> t;
            for (int r = 0; r < 5; ++r) {
                const auto t0 = Clock::now();
                for (std::size_t k = 0; k < passes; ++k) f();
                t.push_back(seconds_since(t0) / passes);
            }
            std::sort(t.begin(), t.end());
            return t[t.size() / 2];
        };
        const double tt = median([&] {
#pragma omp parallel for simd schedule(static)
            for (std::size_t i = 0; i < m; ++i) pa[i] = pb[i] + s * pd[i];
        });
        const double t4 = median([&] {
#pragma omp parallel for simd schedule(static)
            for (std::size_t i = 0; i < m; ++i) pe[i] = 2 * pa[i] - pe[i] + pb[i] * pd[i];
        });
        c.others.push_back({"OpenMP triad (STREAM count, 12 B/element), " + where, 12.0 * m / tt * 1e-9});
        c.others.push_back({"OpenMP 3-read-1-write stream (16 B/element), " + where, 16.0 * m / t4 * 1e-9});
    };
    char where[120];
    std::snprintf(where, sizeof where, "arrays of %.0f MiB (last-level caches %.0f MiB)", bytes / (1 << 20),
                  llc / (1 << 20));
    measure(n, where);
    if (grid_points < n) {
        std::snprintf(where, sizeof where, "arrays of the grid's %zu points", grid_points);
        measure(std::max<std::size_t>(grid_points, 1), where);
    }
    for (const auto& x : c.others)
        if (x.second > c.gbs) {
            c.gbs = x.second;
            c.name = x.first;
        }
    return c;
}

// A CPU bench's row: `one` (a step) run once to warm up, then o.repeats times o.steps
// steps, their median step over `points` points moving `bytes_per_point` against the
// ceiling c.
template <class T, class Step>
Row cpu_row(const Options& o, const Ceiling& c, const std::string& mode, const std::string& variant, double points,
            double bytes_per_point, const std::string& note, Step&& one) {
    one();
    std::vector<double> t;
    for (int r = 0; r < o.repeats; ++r) {
        const auto t0 = Clock::now();
        for (int s = 0; s < o.steps; ++s) one();
        t.push_back(seconds_since(t0) / o.steps);
    }
    std::sort(t.begin(), t.end());
    Row r = rate_row(mode, variant, int(sizeof(T)), "cpu", o, t[t.size() / 2], points, bytes_per_point, c.gbs);
    r.note = std::to_string(omp_get_max_threads()) + " threads" + note;
    return r;
}

template <class T>
Row cpu_full(const Options& o, const Ceiling& c) {
    const kernels::Box box = o.box();
    const std::size_t n = box.padded_size();
    std::vector<T> u(n), w(n), v(n);
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> d(-1, 1), dv(0.02, 0.08);
    for (std::size_t i = 0; i < n; ++i) {
        u[i] = T(d(rng));
        w[i] = T(d(rng));
        v[i] = T(dv(rng));
    }
    kernels::StepArgs<T> A;
    A.box = box;
    for (int i = 0; i < 3; ++i) A.inv_h2[i] = A.inv_h[i] = (i == 1 && box.ndim == 2) ? T(0) : T(1);
    A.vdt2 = v.data();
    T* pu = u.data();
    T* pw = w.data();
    auto one = [&] {
        A.u = pu;
        A.w = pw;
        kernels::step_cpu(A);
        std::swap(pu, pw);
    };
    return cpu_row<T>(o, c, "full", "step_cpu", double(box.points()), 4.0 * sizeof(T), "", one);
}

// The CPU's VTI/TTI step (--physics vti|tti --device cpu), the GPU kernels' twin: on
// random fields within the stability limit (as the GPU bench's), no layers. Bytes per
// point: the values its passes move (kernels/cpu/tti_cpu.h, without damping): VTI reads
// p, q, wp, wq and W's three entries and writes wp, wq (9); TTI's pass 1 reads p, q and
// the axis (ndim) and writes 2 ndim fluxes, pass 2 reads them, p, q, wp, wq and W and
// writes wp, wq: 11 + 5 ndim values (3D 26, 2D 21).
template <class T>
Row cpu_tti(const Options& o, const Ceiling& c) {
    const kernels::Box box = o.box();
    const std::size_t n = box.padded_size();
    const bool tilted = o.physics == "tti";
    std::mt19937 rng(7);
    const auto random = [&](double lo, double hi) {
        std::uniform_real_distribution<double> d(lo, hi);
        std::vector<T> v(n);
        for (auto& x : v) x = T(d(rng));
        return v;
    };
    std::vector<T> p = random(-1, 1), q = random(-1, 1), wp = random(-1, 1), wq = random(-1, 1);
    // W as the GPU bench's (bench_gpu.cu): positive semi-definite and within the limit.
    const std::vector<T> cpp = random(0.03, 0.05), cpq = random(0.01, 0.024), cqq = random(0.02, 0.03);
    std::vector<T> axis[3], flux[6];
    kernels::TtiStepArgs<T> A;
    A.box = box;
    for (int i = 0; i < 3; ++i) A.inv_h2[i] = A.inv_h[i] = (i == 1 && box.ndim == 2) ? T(0) : T(1);
    A.cpp = cpp.data(), A.cpq = cpq.data(), A.cqq = cqq.data();
    if (tilted) {
        for (int ax = 0; ax < 3; ++ax) {
            axis[ax] = random(-0.577, 0.577);  // |n| <= 1 keeps L negative semi-definite
            A.axis[ax] = axis[ax].data();
        }
        for (int k = 0; k < 6; ++k) {
            flux[k].assign(n, T(0));  // (their halo stays zero)
            A.flux[k] = flux[k].data();
        }
    }
    auto one = [&] {
        A.p = p.data(), A.q = q.data(), A.wp = wp.data(), A.wq = wq.data();
        kernels::tti_step_cpu(A);
        std::swap(p, wp);
        std::swap(q, wq);
    };
    return cpu_row<T>(o, c, o.physics, "tti_step_cpu", double(box.points()),
                      double(tilted ? 11 + 5 * box.ndim : 9) * sizeof(T), tilted ? ", two passes through memory" : "", one);
}

// A whole forward-modelling step through the backend's Propagator: C-PML on every
// side (o.pml cells, inside the grid), one off-grid source in the middle, a receiver
// on every window node of the plane 2 cells below the top of the window.
Row modelling_one(const Options& o, const Ceiling& c, const Domain& d, const std::string& variant);

std::vector<Row> modelling(const Options& o, const Ceiling& c) {
    const Domain d = modelling_domain(o);
    std::vector<Row> rows;
    if (o.device == "gpu")
        for (const auto& v : o.variants) rows.push_back(modelling_one(o, c, d, v));
    else
        rows.push_back(modelling_one(o, c, d, "step_cpu"));
    return rows;
}

Row modelling_one(const Options& o, const Ceiling& c, const Domain& d, const std::string& variant) {
    const Grid& g = d.window();
    const int p = o.pml;
    // "NAME+nosplit": the layer kernel over the whole box in one launch (no interior split);
    // "NAME+ov0|+ov1|+ov2": LaunchConfig::overlap (without: the library default).
    const auto plus = variant.find('+');
    if (o.device == "gpu") {
        const std::string opts = plus == std::string::npos ? "" : variant.substr(plus) + "+";
        setenv("RTM_CUDA_VARIANT", variant.substr(0, plus).c_str(), 1);
        setenv("RTM_CUDA_SPLIT", opts.find("+nosplit+") != std::string::npos ? "0" : "1", 1);
        const auto ov = opts.find("+ov");
        if (ov != std::string::npos) setenv("RTM_CUDA_OVERLAP", opts.substr(ov + 3, 1).c_str(), 1);
        else unsetenv("RTM_CUDA_OVERLAP");
    }
    const Backend be{o.device == "gpu", o.device};
    auto prop = make_propagator(d, o.dbl ? Precision::Double : Precision::Single, be, o.batch);
    const int warm = 3, nt = warm + o.steps * o.repeats;
    std::vector<double> wavelet(nt);
    for (int i = 0; i < nt; ++i) wavelet[i] = std::sin(0.05 * i) * std::exp(-0.001 * i);
    // Every member (a shot of the batch) has its source, moved along x, and the receivers.
    std::vector<PointStencil> src, rec;
    for (int m = 0; m < o.batch; ++m) {
        const double cx = (0.25 + 0.5 * m / o.batch) * g.x_max() + 3.7, cy = 0.5 * g.y_max() + 2.1,
                     cz = 0.5 * g.z_max() + 1.3;
        src.push_back(member_stencil(d.point(cx, o.ndim() == 3 ? cy : 0, cz, "source"), d.box(), m));
        for (int iy = 0; iy < g.ny; ++iy)
            for (int ix = 0; ix < g.nx; ++ix)
                rec.push_back(member_stencil(d.point(ix * g.dx, iy * g.dy, 2 * g.dz, "receiver"), d.box(), m));
    }
    prop->set_sources(src, std::vector<std::vector<double>>(o.batch, wavelet));
    prop->set_receivers(rec, nt);
    auto sync = [&] {
#ifdef RTM_HAVE_CUDA
        if (o.device == "gpu") gpu_synchronize();
#endif
    };
    int n = 0;
    for (; n < warm; ++n) prop->step(n);
    sync();
    // --sustain: the timed steps' indices stepped over and over (their traces overwritten)
    // until the board has run for that long, then timed with its clocks sampled.
    const auto t0 = Clock::now();
    for (long k = 0; o.device == "gpu" && seconds_since(t0) < o.sustain;) {
        for (int s = 0; s < o.steps; ++s, ++k) prop->step(warm + int(k % (nt - warm)));
        sync();
    }
#ifdef RTM_HAVE_CUDA
    std::unique_ptr<GpuSampler> sampler;
    if (o.device == "gpu") sampler = std::make_unique<GpuSampler>();
#endif
    std::vector<double> t;
    for (int r = 0; r < o.repeats; ++r) {
        const auto t0 = Clock::now();
        for (int s = 0; s < o.steps; ++s) prop->step(n++);
        sync();
        t.push_back(seconds_since(t0) / o.steps);
    }
    std::sort(t.begin(), t.end());
    GpuConditions gpu;
#ifdef RTM_HAVE_CUDA
    if (sampler) gpu = sampler->stop();
#endif
    const auto tr = prop->receiver_traces();  // also proves the traces come back
    double peak = 0;
    for (double x : tr) peak = std::max(peak, std::abs(x));

    const auto& B = d.box();
    Row r;
    r.mode = "modelling";
    r.variant = variant;
    r.precision = o.dbl ? "fp64" : "fp32";
    r.device = o.device;
    r.nx = B.nx;
    r.ny = B.ny;
    r.nz = B.nz;
    r.seconds_per_step = t[t.size() / 2];
    r.gpts = double(B.points()) * o.batch / r.seconds_per_step * 1e-9;
    r.bytes_per_point = o.full_bytes();
    r.gbs = r.gpts * r.bytes_per_point;
    r.ceiling_gpts = c.gbs / r.bytes_per_point;
    r.ratio = r.gpts / r.ceiling_gpts;
    // Bytes the C-PML adds at the least, per axis with layers: pass 1 reads u and
    // reads/writes psi on its layer cells (3 values); pass 2 reads psi and zeta on the
    // zone (layer + R cells) and writes zeta on the layer (3 values near enough).
    const double e = o.dbl ? 8 : 4;
    const int nn[3] = {B.nx, B.ny, B.nz};
    double extra = 0;
    for (int ax = 0; ax < 3 && o.boundary != "damping"; ++ax) {
        const int L = B.pml_lo[ax] + B.pml_hi[ax];
        if (!L) continue;
        const int Z = L + (B.pml_lo[ax] ? 4 : 0) + (B.pml_hi[ax] ? 4 : 0);
        extra += e * (3.0 * L + 2.0 * Z + 1.0 * L) / nn[ax];
    }
    r.needed_bytes_per_point = r.bytes_per_point + extra;
    std::ostringstream os;
    os.precision(3);
    os << prop->name() << ", " << (o.batch > 1 ? "batch of " + std::to_string(o.batch) + " shots, " : "")
       << rec.size() << " receivers, " << counted(o.batch, "source") << ", "
       << (o.boundary == "damping" ? "damping " : "C-PML ") << p << " cells; >= " << r.needed_bytes_per_point
       << " B/pt with C-PML (ratio at that count " << r.ratio * r.needed_bytes_per_point / r.bytes_per_point
       << "); peak trace " << peak;
    r.note = os.str();
    r.gpu = gpu;
    return r;
}

}  // namespace

Domain modelling_domain(const Options& o, int slabs, int slab) {
    Grid g;
    const int p = o.pml;
    g.nx = o.nx - 2 * p;
    g.ny = o.ndim() == 3 ? o.ny - 2 * p : 1;
    g.nz = o.nz - 2 * p;
    if (g.nx < 8 || g.nz < 8 || (o.ndim() == 3 && g.ny < 8))
        fail("option --grid", "too small for modelling with " + std::to_string(p) + " absorbing cells per side",
             "Use at least " + std::to_string(2 * p + 8) + " points per axis");
    g.dx = g.dy = g.dz = 10;
    std::vector<float> vp(g.size());
#pragma omp parallel for
    for (int iz = 0; iz < g.nz; ++iz)
        for (std::size_t i = 0; i < std::size_t(g.nx) * g.ny; ++i)
            vp[std::size_t(iz) * g.nx * g.ny + i] = float(1500 + 1500.0 * iz / std::max(1, g.nz - 1));
    DomainOptions dop;
    dop.slabs = slabs;
    dop.slab = slab;
    dop.boundary = o.boundary == "damping" ? Boundary::Damping : Boundary::Cpml;
    dop.pml_cells = p;
    dop.dt = 0.3 * 10 / 3000.0;
    dop.f_dominant = 10;
    return Domain(g, vp, dop);
}

namespace {

// The arrays a kernel or modelling bench allocates, checked against the memory that
// holds them before the first is made (a 10^15-point grid ended in std::bad_alloc):
// full and stencil hold the batch's two wavefields and (v dt)^2; modelling also the
// layers' memory (the propagator's arrays counted as 8 values a point) and its domain
// in double on the host (3 values a point).
void require_memory(const Options& o) {
    const double points = double(o.nx) * o.ny * o.nz, e = o.dbl ? 8 : 4;
    const bool modelling = o.mode == "modelling";
    const double arrays = ((modelling ? 6 : 1) + 2.0 * o.batch) * e * points;
    const double host = (modelling ? 24 * points : 0) + (o.device == "cpu" ? arrays : 0);
    const auto check = [&](double need, double free, const std::string& where) {
        if (!(free > 0) || need <= 0.9 * free) return;  // (free 0: not reported)
        std::ostringstream os;
        os.precision(3);
        os << "needs about " << need / 1e9 << " GB of " << where << ", which has " << free / 1e9 << " GB free";
        fail("option --grid", os.str(), "Give a smaller grid (or batch)");
    };
    check(host, host_memory().available, "host memory");
    if (o.device == "gpu") check(arrays, device_free_bytes(), "GPU memory");
}

// The modes, as --mode names them.
const std::vector<std::string> kModes = {"full", "stencil", "modelling", "rtm", "slabs"};


void print(const Ceiling& c, const std::vector<Row>& rows, double sustain) {
    std::printf("device : %s\n", c.device.c_str());
    std::printf("ceiling: %.1f GB/s, %s%s\n", c.gbs, c.name.c_str(), c.gpu.read ? (" [" + c.gpu.text() + "]").c_str() : "");
    for (const auto& x : c.others) std::printf("         %.1f GB/s, %s\n", x.second, x.first.c_str());
    std::printf("%-10s %-12s %-5s %-15s %9s %8s %8s %5s %9s %6s  %s\n", "mode", "variant", "prec", "grid",
                "ms/step", "Gpts/s", "GB/s", "B/pt", "ceilGpts", "ratio", "note");
    for (const auto& r : rows) {
        char grid[40];
        if (r.ny > 1) std::snprintf(grid, sizeof grid, "%dx%dx%d", r.nx, r.ny, r.nz);
        else std::snprintf(grid, sizeof grid, "%dx%d", r.nx, r.nz);
        std::printf("%-10s %-12s %-5s %-15s %9.3f %8.2f %8.1f %5.0f %9.2f %5.1f%%  %s\n", r.mode.c_str(),
                    r.variant.c_str(), r.precision.c_str(), grid, r.seconds_per_step * 1e3, r.gpts, r.gbs,
                    r.bytes_per_point, r.ceiling_gpts, 100 * r.ratio,
                    (r.note + (r.device == "gpu" ? " [" + r.gpu.text() + "]" : "")).c_str());
    }
    // Clocks fall once a board reaches its power limit, after a second or so of work.
    const bool gpu = !rows.empty() && rows.front().device == "gpu";
    if (gpu && sustain == 0)
        std::printf("(timed in the first fraction of a second of each kernel; --sustain 10 times the clocks "
                    "a long job runs at)\n");
    std::fflush(stdout);
}

void write_json(const std::string& file, const std::string& cmd, const Ceiling& c, const std::vector<Row>& rows) {
    nlohmann::json j = json_header(cmd, c.device);
    // The GPU's clocks while a row (or the ceiling) was timed, when NVML gave them.
    const auto clocks = [](const GpuConditions& g) {
        return g.read ? nlohmann::json{{"sm_MHz", g.sm_mhz}, {"max_sm_MHz", g.max_sm_mhz}, {"power_W", g.power_w},
                                       {"power_limit_W", g.power_limit_w}, {"power_capped_share", g.capped_share},
                                       {"thermal_share", g.thermal_share}}
                      : nlohmann::json();
    };
    j["ceiling"] = {{"name", c.name}, {"GBps", c.gbs}, {"gpu", clocks(c.gpu)}};
    for (const auto& x : c.others) j["bandwidths"][x.first] = x.second;
    for (const auto& r : rows)
        j["rows"].push_back({{"mode", r.mode}, {"variant", r.variant}, {"precision", r.precision},
                             {"device", r.device}, {"grid", {r.nx, r.ny, r.nz}},
                             {"seconds_per_step", r.seconds_per_step}, {"Gpoints_per_s", r.gpts},
                             {"bytes_per_point", r.bytes_per_point}, {"GBps", r.gbs},
                             {"ceiling_Gpoints_per_s", r.ceiling_gpts}, {"ratio", r.ratio},
                             {"needed_bytes_per_point", r.needed_bytes_per_point}, {"note", r.note},
                             {"gpu", clocks(r.gpu)}});
    std::ofstream f(file);
    if (!f) fail(file, "cannot be written", "Check the folder exists and is writable");
    f << j.dump(2) << "\n";
}

}  // namespace
}  // namespace bench

int run_bench(int argc, char** argv) {
    using namespace bench;
    namespace po = boost::program_options;
    Options o;
    std::string grid, variant, precision, json, scaling;
    po::options_description desc("rtm bench options");
    desc.add_options()("help,h", "this help")
        ("grid", po::value(&grid)->default_value("512x512x512"), "computed points NXxNYxNZ (or NXxNZ in 2D)")
        ("steps", po::value(&o.steps)->default_value(50), "time steps per timed repeat (rtm: the shot's steps)")
        ("repeats", po::value(&o.repeats)->default_value(5), "timed repeats (the median is reported)")
        ("variant", po::value(&variant)->default_value("default"),
         "GPU kernel variant(s), comma-separated, 'all', or 'default' (the propagator's)")
        ("precision", po::value(&precision)->default_value("single"), "single|double")
        ("mode", po::value(&o.mode)->default_value("full"),
         "full|stencil|modelling|rtm|slabs (slabs: under mpirun -np G, one shot over G GPUs in z-slabs against one GPU; "
         "--boundary none,damping)")
        ("device", po::value(&o.device)->default_value("auto"), "auto (the GPU when present, as rtm model), cpu or gpu")
        ("threads", po::value(&o.threads)->default_value(0),
         "CPU threads (0: OMP_NUM_THREADS when set, else the CPUs this process may use divided by the ranks on this node)")
        ("zchunk", po::value(&o.zchunk)->default_value(0), "z planes per block (0: fill the SMs)")
        ("pml", po::value(&o.pml)->default_value(20), "absorbing cells per side (modelling, rtm)")
        ("boundary", po::value(&o.boundary)->default_value("cpml"), "cpml|damping (modelling)")
        ("batch", po::value(&o.batch)->default_value(1),
         "full, modelling: shots propagated in one launch, sharing the model (minimal bytes (3 + 1/batch) "
         "values per point)")
        ("physics", po::value(&o.physics)->default_value("iso"),
         "iso|vti|tti: the isotropic step, or the VTI/TTI step (--mode full; on the GPU variants two-pass and swic, "
         "on the CPU its reference step)")
        ("scaling", po::value(&scaling)->default_value("strong"),
         "slabs: strong (G GPUs step the --grid one GPU steps) or weak (G GPUs step a grid of G NZ planes, "
         "one GPU --grid)")
        ("sustain", po::value(&o.sustain)->default_value(0),
         "GPU: seconds each kernel and the copy ceiling run before they are timed. 0 times the first fraction "
         "of a second, at the board's highest clocks; 10 times what a long job gets, once the board has "
         "settled at its power limit (each row gives the SM clock and power it ran at)")
        ("json", po::value(&json), "also write the results to this JSON file");
    po::variables_map vm;
    try {
        po::store(po::command_line_parser(argc, argv).options(desc).run(),  // skips argv[0]
                  vm);
        po::notify(vm);
    } catch (const po::error& e) {
        fail_usage("rtm bench", e.what(), "See rtm bench --help");  // exit 2, as every command
    }
    if (vm.count("help")) {
        std::cout << desc << "\n";
        return 0;
    }
    std::string cmd = "rtm bench";
    for (int i = 1; i < argc; ++i) cmd += std::string(" ") + argv[i];
    // Values that do not parse or are none of the choices: usage errors (exit 2), before
    // anything else (an unknown --mode ran the modelling bench).
    parse_grid(grid, o);
    if (std::find(kModes.begin(), kModes.end(), o.mode) == kModes.end())
        fail_usage("option --mode", "unknown mode '" + o.mode + "'", "Use full, stencil, modelling, rtm or slabs");
    if (precision != "single" && precision != "double")
        fail_usage("option --precision", "unknown precision '" + precision + "'", "Use single or double");
    o.dbl = precision == "double";
    if (scaling != "strong" && scaling != "weak")
        fail_usage("option --scaling", "unknown scaling '" + scaling + "'", "Use strong or weak");
    o.weak = scaling == "weak";
    if (o.device != "auto" && o.device != "cpu" && o.device != "gpu")
        fail_usage("option --device", "unknown device '" + o.device + "'", "Use auto, cpu or gpu");
    if (o.boundary != "cpml" && o.boundary != "damping" && o.mode != "slabs")  // (slabs: a list, bench_slabs.cpp)
        fail_usage("option --boundary", "unknown boundary '" + o.boundary + "'", "Use cpml or damping");
    if (o.physics != "iso" && o.physics != "vti" && o.physics != "tti")
        fail_usage("option --physics", "unknown physics '" + o.physics + "'", "Use iso, vti or tti");
    // Only the GPU's kernel modes have variants (kernels/cuda/step_cuda.h): elsewhere the
    // option was dropped without a word, whatever it named.
    const bool variant_given = !vm["variant"].defaulted() && variant != "default";
    if (variant_given && (o.mode == "rtm" || o.mode == "slabs"))
        fail_usage("option --variant", "is for --mode full, stencil and modelling on a GPU (--mode " + o.mode +
                                           " times the propagator's own kernel)",
                   "Leave --variant out");
    if (vm.count("json") && json.empty()) fail_usage("option --json", "is empty", "Give it a file name, e.g. bench.json");
    // The --json file, checked before any work (a bench of minutes lost its results when
    // the file could not be made at the end), and its folder made for the writers.
    if (!json.empty()) {
        io::check_output_path(json, "--json", false);
        if (const auto dir = std::filesystem::path(json).parent_path(); !dir.empty())
            std::filesystem::create_directories(dir);
    }
    if (o.sustain > 0 && o.mode != "full" && o.mode != "stencil" && o.mode != "modelling")
        fail("option --sustain", "is for the kernel modes (full, stencil, modelling)", "Leave it out for --mode " + o.mode);
    if (o.mode == "slabs") {
#ifdef RTM_HAVE_CUDA
        slabs_mode(o, json, cmd);
        return 0;
#else
        fail("option --mode slabs", "this rtm was built without CUDA", "Build rtm with nvcc on the PATH");
#endif
    }
    std::string chosen;  // what --device auto chose, as rtm model would
    if (o.device == "auto") {
        std::string why;
        o.device = cuda_device_available(&why) ? "gpu" : "cpu";
        chosen = " (--device auto: " + (o.device == "gpu" ? why : "no GPU: " + why) + ")";
    }
    if (variant_given && o.device == "cpu")
        fail_usage("option --variant",
                   "'" + variant + "' names a GPU kernel variant; this bench runs on the CPU" +
                       (chosen.empty() ? std::string() : chosen) + ", whose one kernel is step_cpu",
                   "Leave --variant out, or use --device gpu on a machine with a GPU");
    if (o.zchunk < 0) fail("option --zchunk", "must not be negative", "Give 0 (fill the SMs) or z planes per block");
    if (o.zchunk > 0 && o.device == "cpu")
        fail_usage("option --zchunk", "sets the GPU kernels' z planes per block; this bench runs on the CPU" + chosen,
                   "Leave --zchunk out, or use --device gpu on a machine with a GPU");
    set_cpu_threads(o.threads, "--threads");

    if (o.steps < 1) fail("option --steps", "must be at least 1");
    if (o.repeats < 1) fail("option --repeats", "must be at least 1");
    // rtm model's and migrate's limit (pipeline/plan.h), on all the steps timed: the run's
    // length was unbounded, without an ETA (and the step count overflowed an int).
    if (double(o.steps) * o.repeats > kMaxSteps)
        fail("options --steps and --repeats",
             std::to_string(o.steps) + " steps x " + std::to_string(o.repeats) + " repeats are more than " +
                 std::to_string(long(kMaxSteps)) + " steps, as rtm model and migrate allow",
             "Give fewer steps or repeats (a bench times 50 x 5 by default)");
    if (o.pml < 0) fail("option --pml", "must not be negative", "Give the absorbing cells per side, e.g. 20");
    if (!(o.sustain >= 0 && o.sustain <= 3600)) {
        char given[40];
        std::snprintf(given, sizeof given, "%g", o.sustain);
        fail("option --sustain", std::string("is ") + given + " seconds",
             "Give 0 to 3600 seconds (10 is enough to reach a power limit)");
    }
    if (o.batch < 1) fail("option --batch", "must be at least 1");
    if (o.batch > 1 && (o.mode == "stencil" || o.mode == "rtm"))
        fail("option --batch", "batches are for --mode full and modelling", "Leave --batch at 1");
    if (o.physics != "iso" && (o.mode != "full" || o.batch != 1))
        fail_usage("option --physics " + o.physics, "times the VTI/TTI step alone, one box",
                   "Use --mode full (the default) and --batch 1");
    if (o.sustain > 0 && o.device != "gpu")
        fail("option --sustain", "holds a GPU at its power limit; this bench runs on the CPU", "Leave it out");
    if (o.mode == "rtm") {
        // --steps is the shot's step count here; --repeats the wall-clock repeats.
        std::string name = "CPU, " + std::to_string(omp_get_max_threads()) + " OpenMP threads";
        if (o.device == "gpu" && !cuda_device_available(&name)) fail("option --device gpu", name, "Use --device cpu");
        require_rtm_steps(o);
        rtm_mode(o, json, cmd, name + chosen);
        return 0;
    }

    require_memory(o);
    Ceiling c;
    std::vector<Row> rows;
    if (o.device == "cpu") {
        if (o.mode == "stencil") fail("option --mode stencil", "there is no CPU stencil-only kernel", "Use --device gpu");
        if (o.batch > 1 && o.mode == "full")
            fail("option --batch", "the CPU's full-update bench times one box", "Use --device gpu, or --mode modelling");
        c = cpu_ceiling(std::size_t(o.nx) * o.ny * o.nz);
        if (o.physics != "iso") rows.push_back(o.dbl ? cpu_tti<double>(o, c) : cpu_tti<float>(o, c));
        else if (o.mode == "full") rows.push_back(o.dbl ? cpu_full<double>(o, c) : cpu_full<float>(o, c));
        else rows = modelling(o, c);
    } else {
#ifdef RTM_HAVE_CUDA
        std::string why;
        if (!cuda_device_available(&why)) fail("option --device gpu", why, "Use --device cpu");
        if (o.physics != "iso") {
            if (variant == "default" || variant == "all") variant = "two-pass,swic";
        } else if (variant == "default") {
            variant = kernels::cuda::variant_name(kernels::cuda::LaunchConfig{}.variant);
        }
        if (variant == "all") o.variants = kernels::cuda::variant_names();
        else {
            std::stringstream ss(variant);
            std::string v;
            while (std::getline(ss, v, ',')) {
                try {  // a name that is none of the kernels: a usage error (exit 2)
                    if (o.physics != "iso") kernels::cuda::parse_tti_kernel(v);
                    else kernels::cuda::parse_variant(v.substr(0, v.find('+')));
                } catch (const UsageError&) {
                    throw;
                } catch (const Error& e) {
                    throw UsageError(e.what());
                }
                o.variants.push_back(v);
            }
        }
        c = gpu_ceiling(o.sustain);
        if (o.physics != "iso") rows = gpu_tti_kernels(o, c);
        else if (o.mode == "modelling") rows = modelling(o, c);
        else rows = gpu_kernels(o, c);
#else
        fail("option --device gpu", "this rtm was built without CUDA", "Use --device cpu");
#endif
    }
    c.device += chosen;
    print(c, rows, o.sustain);
    if (!json.empty()) write_json(json, cmd, c, rows);
    return 0;
}

}  // namespace rtm
