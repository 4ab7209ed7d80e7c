#include "app/job_options.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "core/error.h"
#include "core/threads.h"
#include "core/log.h"
#include "parallel/shot_groups.h"
#include "parallel/world.h"
#include "io/model_io.h"
#include "io/shot_index.h"
#include "io/shot_io.h"
#include "physics/anisotropy.h"
#include "physics/smoothing.h"
#include "physics/wavelet.h"

namespace rtm::app {

po::options_description model_options() {
    po::options_description d("Velocity model ([model] section)");
    d.add_options()
        ("model.vp", input_file(), "P velocity, m/s: SEG-Y, one trace per surface position, samples along depth")
        ("model.placement", po::value<std::string>()->default_value("auto"),
         "how traces are placed on the grid: lines (inline/crossline numbers), coordinates (CDP X/Y "
         "with the coordinate scalar), or auto (line numbers when they vary, else coordinates)")
        ("model.inline-byte", po::value<int>()->default_value(189), "trace-header byte of the inline number")
        ("model.crossline-byte", po::value<int>()->default_value(193), "trace-header byte of the crossline number")
        ("model.depth-unit", po::value<double>()->default_value(1e-3),
         "metres per unit of the sample-interval field: depth models conventionally store dz there in mm (0.001); "
         "the first depth is the delay field (byte 109) x 1000 of these units (metres with 0.001)")
        ("model.dz", po::value<double>()->default_value(0), "depth spacing, m, overriding the sample-interval field (0: from the file)")
        ("model.dx", po::value<double>()->default_value(0), "trace spacing along x, m, for files without trace coordinates (0: from the coordinates)")
        ("model.dy", po::value<double>()->default_value(0), "trace spacing along y, m, as model.dx")
        ("model.epsilon", input_file("FILE|NUMBER"),
         "Thomsen epsilon (dimensionless, -0.5 < eps <= 1; horizontal P velocity vp sqrt(1 + 2 eps)): SEG-Y on "
         "vp's grid or a constant number; with any of epsilon, delta, theta, phi the model is anisotropic "
         "(pseudo-acoustic VTI, TTI with theta or phi; docs/anisotropy.md)")
        ("model.delta", input_file("FILE|NUMBER"),
         "Thomsen delta (dimensionless, -0.5 < delta <= 1): SEG-Y or a number; where delta > epsilon it is "
         "lowered to epsilon (the system is unstable there), with a warning counting the nodes")
        ("model.theta", input_file("FILE|NUMBER"),
         "tilt of the symmetry axis from vertical, degrees (-180..180; towards +x, or towards azimuth phi in 3D): "
         "SEG-Y or a number; absent (with phi): VTI")
        ("model.phi", input_file("FILE|NUMBER"),
         "azimuth of the tilt, degrees from x towards y (-360..360; 3D only, with theta): SEG-Y or a number")
        ("model.elliptic-above", po::value<double>()->default_value(0),
         "depth, m: above it delta is set to epsilon (an elliptical medium), so sources and receivers "
         "there excite no pseudo-acoustic qSV artefact (VTI/TTI; 0: off; applied after model.smooth)")
        ("model.smooth", po::value<double>()->default_value(0),
         "Gaussian smoothing of the model as read, sigma in m (0: none): vp as slowness (keeping vertical "
         "traveltimes), epsilon, delta, theta and phi as values; a migration model from a sharp one");
    return d;
}

po::options_description wavelet_options() {
    po::options_description d("Source wavelet ([wavelet] section)");
    d.add_options()
        ("wavelet.ricker-f0", po::value<double>()->default_value(10), "peak frequency of a Ricker wavelet, Hz")
        ("wavelet.file", input_file(),
         "SEG-Y file of one trace, the wavelet of every shot (its own sample interval; overrides the Ricker)")
        ("wavelet.f-max", po::value<double>()->default_value(0),
         "highest frequency of a wavelet file, Hz, for the dispersion check and the imaging interval (0: where "
         "its amplitude spectrum falls 30 dB below its peak, as a Ricker's does at 2.5 x ricker-f0)");
    return d;
}

po::options_description propagation_options() {
    po::options_description d("Propagation ([propagation] section)");
    d.add_options()
        ("propagation.pml", po::value<int>()->default_value(20),
         "absorbing cells on each side (C-PML in rtm model of an isotropic model; damping layers in rtm migrate "
         "and in anisotropic models)")
        ("propagation.free-surface", po::value<bool>()->default_value(false), "pressure-free surface on top instead of an absorbing layer")
        ("propagation.dt", po::value<double>()->default_value(0),
         "time step, s (0: the largest divisor of the record interval within 80% of the CFL limit)")
        ("propagation.time-dispersion-correction", po::value<bool>()->default_value(true),
         "remove the time step's dispersion: the source wavelet forward-transformed before propagation, the "
         "recorded traces inverse-transformed after it (Koene et al. 2018; migration uses their transposes)")
        ("propagation.precision", po::value<std::string>()->default_value("single"), "single or double")
        ("propagation.device", po::value<std::string>()->default_value("auto"), "auto (GPU when present), cpu or gpu")
        ("propagation.batch", po::value<int>()->default_value(0),
         "shots propagated together in one launch (rtm model; rtm migrate: shots of one window) (0: automatic, "
         "enough to fill a GPU; 1 on the CPU)")
        ("propagation.threads", po::value<int>()->default_value(0),
         "CPU threads (0: OMP_NUM_THREADS when set, else the CPUs this process may use divided by the ranks "
         "on this node under mpirun or Slurm)")
        ("parallel.ranks-per-shot", po::value<int>()->default_value(1),
         "ranks (GPUs) that propagate one shot together; under mpirun the N ranks form N / ranks-per-shot groups, "
         "each taking the next shot as it finishes one and propagating it in z-slabs (CPU or GPU ranks; GPU ranks "
         "of one node exchange their slabs' planes device to device)");
    return d;
}

io::GridReadOptions grid_read_options(const po::variables_map& vm) {
    io::GridReadOptions g;
    const std::string placement = vm["model.placement"].as<std::string>();
    if (placement == "auto") g.placement = io::GridReadOptions::Placement::Auto;
    else if (placement == "lines") g.placement = io::GridReadOptions::Placement::LineNumbers;
    else if (placement == "coordinates") g.placement = io::GridReadOptions::Placement::Coordinates;
    else fail_usage("option model.placement", "unknown value '" + placement + "'", "Use auto, lines or coordinates");
    g.inline_byte = vm["model.inline-byte"].as<int>();
    g.crossline_byte = vm["model.crossline-byte"].as<int>();
    g.depth_unit = vm["model.depth-unit"].as<double>();
    g.dz = vm["model.dz"].as<double>();
    g.dx = vm["model.dx"].as<double>();
    g.dy = vm["model.dy"].as<double>();
    return g;
}

namespace {

// Angles are read in degrees. An angle volume (model.theta, model.phi; in radians once
// read) whose every value lies within the angle's range in radians (theta +-pi, phi
// +-2 pi, as its range in degrees is +-360), some of them not whole, reads like radians
// given as degrees: a tilt of 0.5 rad (29 degrees) taken as 0.5 degrees is an almost
// isotropic axis, with no error anywhere. Warned about, naming where it came from.
void warn_if_radians(const Model& m, const io::ModelPaths& paths) {
    for (const auto& [name, path] : {std::pair{"theta", &paths.theta}, std::pair{"phi", &paths.phi}}) {
        const auto v = m.extra.find(name);
        if (v == m.extra.end()) continue;
        double largest = 0;
        bool fractional = false;
        for (const float r : v->second.data) {
            const double degrees = double(r) * 180 / M_PI;
            largest = std::max(largest, std::abs(degrees));
            fractional = fractional || std::abs(degrees - std::round(degrees)) > 1e-3;
        }
        const double range = name == std::string("phi") ? 2 * M_PI : M_PI;
        if (largest > 0 && largest <= range + 1e-3 && fractional)
            spdlog::warn("{}: every {} lies within +-{} (the largest, {:.4g}), as radians would: rtm reads degrees, so "
                         "these are angles of at most {:.4g} degrees. If these are radians, convert them (x 180/pi)",
                         io::as_constant(*path) ? "option model." + std::string(name) : *path, name,
                         range > M_PI ? "2 pi" : "pi", largest, largest);
    }
}

}  // namespace

Model load_model(const po::variables_map& vm) {
    if (!vm.count("model.vp")) fail_usage("option model.vp", "no velocity model given", "Set [model] vp = FILE.sgy or --model.vp FILE.sgy");
    const io::GridReadOptions g = grid_read_options(vm);
    io::ModelPaths paths;
    paths.vp = vm["model.vp"].as<std::string>();
    for (auto [key, path] : {std::pair{"model.epsilon", &paths.epsilon}, std::pair{"model.delta", &paths.delta},
                             std::pair{"model.theta", &paths.theta}, std::pair{"model.phi", &paths.phi}}) {
        if (!vm.count(key)) continue;
        *path = vm[key].as<std::string>();
        // A number or a file: anything else ("10%", "0,1") was looked for as a file and
        // reported as "no such file", naming no option. A path (a folder in it, a SEG-Y
        // name) that is missing is said as model.vp's is (exit 1); other text is a usage
        // error (exit 2).
        if (!io::as_constant(*path) && !std::filesystem::exists(*path)) {
            std::string lower = *path;
            for (auto& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
            const auto ends = [&](const std::string& e) {
                return lower.size() >= e.size() && lower.compare(lower.size() - e.size(), e.size(), e) == 0;
            };
            std::error_code ec;
            const std::string cwd = std::filesystem::current_path(ec).string();
            if (path->find('/') != std::string::npos || ends(".sgy") || ends(".segy"))
                fail("option " + std::string(key), *path + ": no such file",
                     "Check the path (relative paths start at " + cwd + ")");
            fail_usage("option " + std::string(key), "'" + *path + "' is neither a number nor an existing file",
                       std::string(key) == "model.epsilon" || std::string(key) == "model.delta"
                           ? "Give Thomsen's parameter as a fraction (0.1, not 10%) or a SEG-Y file on vp's grid"
                           : "Give the angle in degrees (30) or a SEG-Y file on vp's grid");
        }
    }
    // Read once, by rank 0, and sent to the others (one file read, not one per rank).
    const parallel::World& world = parallel::World::get();
    Model m;
    const double sigma = vm["model.smooth"].as<double>();
    if (!(sigma >= 0) || !std::isfinite(sigma))
        fail("option model.smooth", fmt::format("'{:g}' is not a length", sigma), "Give sigma in m, 0 or more");
    const double elliptic = vm["model.elliptic-above"].as<double>();
    if (!(elliptic >= 0) || !std::isfinite(elliptic))
        fail("option model.elliptic-above", fmt::format("'{:g}' is not a depth", elliptic),
             "Give a depth in m, 0 (off) or more");
    std::size_t made_elliptic = 0;  // (on rank 0, which alone logs info lines: core/log.h)
    bool vertical_axis = false;     // model.theta given, 0 at every node
    world.on_root([&] {
        m = io::read_model(paths, g);
        warn_if_radians(m, paths);
        // A Gaussian wider than the model leaves it nearly constant, and its filter's
        // length (6 sigma a cell) would overflow or take hours: a unit slip, refused.
        const Grid& grid = m.grid();
        const double across = std::max({(grid.nx - 1) * grid.dx, (grid.ny - 1) * grid.dy, (grid.nz - 1) * grid.dz});
        if (sigma > across)
            fail("option model.smooth",
                 fmt::format("a sigma of {:g} m is wider than the model ({:g} m across): it would be smoothed to "
                             "nearly a constant", sigma, across),
                 "Give sigma in m, typically a wavelength or two (e.g. 100)");
        if (sigma > 0) {  // once, before the model goes to the other ranks
            m.vp = smooth_slowness(m.vp, sigma);
            for (auto& [name, v] : m.extra)
                if (name != "theta" && name != "phi") v = smooth_values(v, sigma);
            if (const auto th = m.extra.find("theta"); th != m.extra.end()) {
                const auto ph = m.extra.find("phi");
                smooth_axis(th->second, ph == m.extra.end() ? nullptr : &ph->second, sigma);
            }
        }
        // A tilt of 0 (or 180 degrees, the same axis) at every node is a VTI medium: the VTI
        // operator runs (its compact stencils, a larger time step, about a third of the
        // TTI step's work). The TTI
        // operator at tilt 0 propagates the same qP wave but not the same records: its
        // response to the qSV artefact and to grid-scale energy differs (the records of
        // a layers2d shot by 0.38, docs/anisotropy.md).
        if (const auto th = m.extra.find("theta"); th != m.extra.end() &&
            std::all_of(th->second.data.begin(), th->second.data.end(),
                        [](float v) { return v == 0.f || std::abs(v) == float(M_PI); })) {
            m.extra.erase("theta");
            m.extra.erase("phi");
            vertical_axis = true;
        }
        if (elliptic > 0) made_elliptic = make_elliptic_above(m, elliptic);
    });
    std::vector<std::string> names;
    for (const auto& [name, v] : m.extra) names.push_back(name);
    world.broadcast(names);
    const auto share = [&](Volume& v) {
        world.broadcast(&v.grid, sizeof v.grid);
        world.broadcast(v.data);
    };
    share(m.vp);
    for (const auto& name : names) share(m.extra[name]);
    const Grid& grid = m.grid();
    // (10 digits: a spacing from coordinates may carry rounding, 19.999999999999996 m.)
    spdlog::info("model {}: {}D, {} x {} x {} nodes, spacing {:.10g} x {:.10g} x {:.10g} m", paths.vp, grid.ndim(), grid.nx,
                 grid.ny, grid.nz, grid.dx, grid.dy, grid.dz);
    if (sigma > 0)
        spdlog::info("model: smoothed (model.smooth: Gaussian sigma {} m), vp as slowness{}", sigma,
                     m.extra.empty() ? ""
                     : !tilted(m) ? ", epsilon and delta as values"
                                  : ", epsilon and delta as values, the symmetry axis as an axis (its tensor n n^T: "
                                    "tilts of +89 and -89 degrees are 2 degrees apart, as azimuths of 359 and 1 are)");
    if (vertical_axis)
        spdlog::info("model: the tilt (model.theta) is 0 or 180 degrees at every node (a vertical axis), so the {} "
                     "operator runs{} (a tilt anywhere runs the TTI operator, whose records differ from VTI's: "
                     "docs/anisotropy.md)",
                     m.extra.empty() ? "isotropic" : "VTI", vm.count("model.phi") ? "; model.phi has no effect" : "");
    if (!m.extra.empty()) {
        spdlog::info("model: anisotropic, pseudo-acoustic {} (parameters:{}{}{}{})",
                     tilted(m) ? "TTI" : "VTI", m.extra.count("epsilon") ? " epsilon" : "",
                     m.extra.count("delta") ? " delta" : "", m.extra.count("theta") ? " theta" : "",
                     m.extra.count("phi") ? " phi" : "");
        if (elliptic > 0)
            spdlog::info("model: delta set to epsilon above {} m depth (model.elliptic-above; {} nodes changed): "
                         "sources and receivers there excite no qSV artefact", elliptic, made_elliptic);
        // Meant for a band around the sources and receivers; one below the model (a
        // depth in feet, a total depth) makes the whole medium elliptic.
        if (const double bottom = grid.z0 + (grid.nz - 1) * grid.dz; elliptic > bottom)
            spdlog::warn("option model.elliptic-above: {} m is below the model's bottom ({} m), so delta = epsilon "
                         "in the whole model: an elliptic medium, its anellipticity (epsilon - delta) gone. Give "
                         "a depth just below the deepest source and receiver (metres)", elliptic, bottom);
        if (const std::size_t n = world.root() ? clamped_delta_nodes(m) : 0)
            spdlog::warn("model: delta > epsilon at {} of {} nodes; delta is lowered to epsilon there, as the "
                         "pseudo-acoustic system grows without bound where delta > epsilon (docs/anisotropy.md). "
                         "The qP velocity near 45 degrees from the axis changes there",
                         n, m.vp.data.size());
    }
    if (elliptic > 0 && m.extra.empty() && world.root())
        spdlog::warn("option model.elliptic-above: the model is isotropic (no epsilon or delta, and no tilt), so it "
                     "has no effect");
    return m;
}

Wavelet load_wavelet(const po::variables_map& vm) {
    Wavelet w;
    const double f0 = vm["wavelet.ricker-f0"].as<double>();
    if (!(f0 > 0) || !std::isfinite(f0))
        fail("option wavelet.ricker-f0", "must be a positive, finite frequency", "Give the peak frequency in Hz");
    // The Ricker is sampled at 0.1 ms over 3 / f0: 100 s (1e6 samples) is longer than any
    // seismic record; a lower peak frequency is a unit slip, not a wavelet.
    if (3.0 / f0 > 100)
        fail("option wavelet.ricker-f0", fmt::format("a Ricker peaking at {:g} Hz lasts {:g}", f0, 3.0 / f0) +
                 " s (3 / f0), longer than any seismic record",
             "Give the peak frequency in Hz, at least 0.03 (typically 5 to 50)");
    w.f_dominant = f0;
    w.f_max = ricker_max_frequency(f0);
    w.band_from = "option wavelet.ricker-f0";
    if (vm.count("wavelet.file")) {
        const std::string path = vm["wavelet.file"].as<std::string>();
        const std::string one = "Give a SEG-Y file of one trace, the source wavelet";
        // The headers first: a velocity model given here is refused before its samples are read.
        const io::ShotIndex index(path, io::ShotIndex::Use::Wavelet);
        std::size_t traces = 0;
        for (std::size_t k = 0; k < index.size(); ++k) traces += index.geometry(k).ntraces();
        if (traces == 0) fail(path, "holds no trace", one);
        // One wavelet serves every shot, so a file of many traces (a velocity model, a gather)
        // is no wavelet file: its first trace taken as one modelled garbage.
        if (traces > 1)
            fail(path,
                 "holds " + std::to_string(traces) + " traces, where a wavelet file holds one: the source wavelet, "
                 "which rtm uses for every shot",
                 one + " (a velocity model goes in model.vp)");
        const ShotGather g = index.load(0);
        w.samples.assign(g.trace(0), g.trace(0) + g.nt);
        if (std::all_of(w.samples.begin(), w.samples.end(), [](double x) { return x == 0; }))
            fail(path, "its trace, the source wavelet, is all zeros: every modelled gather and image would be zero",
                 one);
        // (The index refuses an interval that is not a positive whole number of microseconds.)
        w.dt = g.dt;
        w.name = "the wavelet of " + path;
        // Its first sample fires at the shot's time 0. One whose energy comes late (a
        // zero-phase wavelet centred in a long trace) delays every arrival as much, and
        // a migration with it of data recorded from the real fire time images them deep.
        const WaveletTiming timing = wavelet_timing(w.samples.data(), g.nt, g.dt);
        w.onset = timing.onset;
        const double fmax = vm["wavelet.f-max"].as<double>();
        if (!(fmax >= 0) || !std::isfinite(fmax))
            fail("option wavelet.f-max", "must be 0 (measured from the file's spectrum) or a frequency in Hz", "");
        // Its spectrum, not its sampling, says where its energy ends: a 12 Hz wavelet at
        // 0.1 ms was given 4 kHz, and a spike at 0.5 ms (1 kHz) went unchecked.
        // Its dominant frequency too (the C-PML's frequency shift, the mute's taper), which
        // was wavelet.ricker-f0's, an option about another wavelet.
        const WaveletSpectrum measured = wavelet_spectrum(w.samples.data(), g.nt, g.dt);
        w.f_dominant = measured.peak;
        // (A Ricker peaks 1.5 periods of its peak frequency after its start.)
        if (measured.peak > 0 && timing.peak > 2.5 / measured.peak && parallel::World::get().root())
            spdlog::warn("{}: its largest sample comes {:g} s after its first, {:.3g} periods of its {:.4g} Hz peak "
                         "frequency; rtm fires its first sample at the shot's time 0, so every arrival comes that "
                         "late. If it is zero-phase, centred in its trace, cut it to start where its energy does (1% "
                         "of it by {:g} s): a migration of recorded data with it images reflectors too deep",
                         path, timing.peak, timing.peak * measured.peak, measured.peak, timing.onset);
        if (fmax > 0) {
            w.f_max = fmax, w.band_from = "option wavelet.f-max";
            spdlog::info("wavelet from {}: {} samples at {:g} ms, peak {:.4g} Hz, energy up to {:.4g} Hz (option "
                         "wavelet.f-max; from its spectrum, {:.4g} Hz at -{:g} dB)",
                         path, g.nt, g.dt * 1e3, measured.peak, fmax, measured.max, kWaveletBandDb);
        } else {
            w.f_max = measured.max, w.band_from = path + " (its spectrum)";
            spdlog::info("wavelet from {}: {} samples at {:g} ms, peak {:.4g} Hz, energy up to {:.4g} Hz (-{:g} dB), "
                         "from its spectrum",
                         path, g.nt, g.dt * 1e3, measured.peak, measured.max, kWaveletBandDb);
        }
    } else {
        // wavelet.f-max is a wavelet file's band: a Ricker's follows from its f0. (0, its
        // default, says nothing.)
        if (vm["wavelet.f-max"].as<double>() != 0)
            fail_usage("option wavelet.f-max", "applies to a wavelet file (wavelet.file), and none is given: a "
                       "Ricker's band follows from wavelet.ricker-f0 (2.5 f0)",
                       "Remove wavelet.f-max, or give the wavelet as wavelet.file");
        w.dt = 1e-4;  // fine enough for any record interval; resampled to the step
        w.samples = ricker(f0, w.dt, int(3.0 / f0 / w.dt) + 1);
        w.name = "the Ricker of option wavelet.ricker-f0";
        w.onset = wavelet_timing(w.samples.data(), int(w.samples.size()), w.dt).onset;
        spdlog::info("wavelet: Ricker, peak {} Hz (energy up to {} Hz)", f0, w.f_max);
    }
    return w;
}

PropagationOptions propagation_from(const po::variables_map& vm) {
    PropagationOptions p;
    p.pml_cells = vm["propagation.pml"].as<int>();
    if (p.pml_cells < 0) fail("option propagation.pml", "must not be negative", "Give the number of absorbing cells, e.g. 20");
    p.free_surface = vm["propagation.free-surface"].as<bool>();
    p.dt = vm["propagation.dt"].as<double>();
    p.time_dispersion_correction = vm["propagation.time-dispersion-correction"].as<bool>();
    const std::string prec = vm["propagation.precision"].as<std::string>();
    if (prec == "single") p.precision = Precision::Single;
    else if (prec == "double") p.precision = Precision::Double;
    else fail_usage("option propagation.precision", "unknown value '" + prec + "'", "Use single or double");
    p.batch = vm["propagation.batch"].as<int>();
    if (p.batch < 0) fail("option propagation.batch", "must not be negative", "Give 0 (automatic) or a number of shots");
    const parallel::World& world = parallel::World::get();
    // The host's share on a GPU too; the CPUs divided between the ranks bound to them.
    set_cpu_threads(vm["propagation.threads"].as<int>(), "propagation.threads", world.cpu_sharers());
    const int per_shot = vm["parallel.ranks-per-shot"].as<int>();
    parallel::ShotGroups::configure(per_shot);  // refuses a G that does not divide the ranks
    spdlog::info("{}", parallel::layout_description(per_shot));
    // One GPU per rank: the node-local rank's (ranks beyond the node's GPUs share them);
    // a shot group's ranks propagate z-slabs of its shot (propagation/slab_propagator.h).
    const DeviceChoice device = parse_device(vm["propagation.device"].as<std::string>());
    p.backend = choose_backend(device, world.node_rank());
    p.backend.group = &parallel::ShotGroups::get().group();  // where each shot runs
    if (world.size() > 1) every_rank().info("rank {} of {} on {}: {}", world.rank(), world.size(), world.node_name(), p.backend.why);
    else spdlog::info("device: {}", p.backend.why);
    return p;
}

}  // namespace rtm::app
