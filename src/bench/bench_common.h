#pragma once
// What the bench measures and reports, shared by the CPU and GPU halves.
#include <string>

#include <vector>

#include "bench/gpu_clocks.h"
#include "kernels/step_args.h"

namespace rtm {
class Domain;
}

namespace rtm::bench {

struct Options {
    int nx = 512, ny = 512, nz = 512;
    int steps = 50;
    int repeats = 5;
    std::vector<std::string> variants;  // GPU kernel variants to time
    bool dbl = false;
    std::string mode = "full";
    std::string device = "auto";        // auto|cpu|gpu; auto is resolved before the work
    int threads = 0;                    // CPU threads (0: see set_cpu_threads)
    int zchunk = 0;
    int pml = 20;
    std::string boundary = "cpml";      // modelling: cpml|damping
    int batch = 1;                      // full, modelling: shots in one launch (GPU), sharing vdt2
    std::string physics = "iso";        // iso|vti|tti: the isotropic step or the VTI/TTI one (full, GPU)
    bool weak = false;                  // slabs: G ranks step a grid G times deeper than one GPU's
    // GPU: seconds each kernel (and the copy ceiling) runs before it is timed, so that
    // the board has settled at its power limit (bench/gpu_clocks.h); 0 times the first
    // fraction of a second, at the highest clocks.
    double sustain = 0;
    // Minimal bytes per point of the full update: u, w read, w written per member, vdt2
    // read once for the whole batch (members share the model).
    double full_bytes() const { return (dbl ? 8 : 4) * (3 + 1.0 / batch); }
    int ndim() const { return ny > 1 ? 3 : 2; }
    // The kernel benchmarks' box: the grid alone, no layers.
    kernels::Box box() const {
        kernels::Box b;
        b.ndim = ndim();
        b.nx = nx;
        b.ny = ny;
        b.nz = nz;
        return b;
    }
};

struct Ceiling {
    std::string device;       // e.g. "NVIDIA H100 80GB HBM3, 132 SMs"
    std::string name;         // what the ratio is taken against
    double gbs = 0;           // that bandwidth, GB/s (bytes read + written)
    std::vector<std::pair<std::string, double>> others;  // further bandwidths measured
    GpuConditions gpu;        // the GPU's clocks while the copy kernel was timed
};

struct Row {
    std::string mode, variant, precision, device;
    int nx = 0, ny = 0, nz = 0;
    double seconds_per_step = 0;
    double gpts = 0;              // 1e9 points per second
    double bytes_per_point = 0;   // the minimal count the ratio uses
    double gbs = 0;               // gpts * bytes_per_point
    double ceiling_gpts = 0;      // ceiling GB/s / bytes_per_point
    double ratio = 0;             // gpts / ceiling_gpts
    double needed_bytes_per_point = 0;  // bytes this mode truly must move (C-PML etc.), 0: same
    std::string note;
    GpuConditions gpu;            // the GPU's clocks while timed (GPU rows)
};

// A timed step's row but its note: its rate over `points` points in `seconds`, its
// bytes per point (`bpp`) and its share of the copy ceiling measured in the same run.
// value_bytes: 4 (fp32) or 8 (fp64).
inline Row rate_row(const std::string& mode, const std::string& variant, int value_bytes, const std::string& device,
                    const Options& o, double seconds, double points, double bpp, double ceiling_gbs) {
    Row r;
    r.mode = mode;
    r.variant = variant;
    r.precision = value_bytes == 4 ? "fp32" : "fp64";
    r.device = device;
    r.nx = o.nx;
    r.ny = o.ny;
    r.nz = o.nz;
    r.seconds_per_step = seconds;
    r.gpts = points / seconds * 1e-9;
    r.bytes_per_point = bpp;
    r.gbs = r.gpts * bpp;
    r.ceiling_gpts = ceiling_gbs / bpp;
    r.ratio = r.gpts / r.ceiling_gpts;
    return r;
}

// --mode rtm (bench_rtm.cpp): one migrate_shot against one model_shots, printed and
// written to json_file when not empty.
void rtm_mode(const Options& o, const std::string& json_file, const std::string& cmd, const std::string& device_name);
// Refuses, naming --steps, a shot too short for rtm_mode to image (before any work).
void require_rtm_steps(const Options& o);

// The modelling benchmarks' domain: the grid with o.pml cells of o.boundary's layers
// inside it on every side, velocity rising with depth, 10 m cells (bench.cpp); with
// slabs > 1 the arrays of z-slab `slab` only (DomainOptions::slabs).
Domain modelling_domain(const Options& o, int slabs = 1, int slab = 0);

#ifdef RTM_HAVE_CUDA
// --mode slabs (bench_slabs.cpp): one shot over the ranks of mpirun in z-slabs against one GPU.
void slabs_mode(Options o, const std::string& json_file, const std::string& cmd);
Ceiling gpu_ceiling(double sustain);  // the copy kernel run `sustain` s before it is timed
std::vector<Row> gpu_kernels(const Options& o, const Ceiling& c);  // modes full, stencil
std::vector<Row> gpu_tti_kernels(const Options& o, const Ceiling& c);  // --physics vti|tti
void gpu_synchronize();
#endif

}  // namespace rtm::bench
