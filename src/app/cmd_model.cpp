// rtm model: velocity model + acquisition + wavelet -> synthetic shot gathers.
#include <algorithm>
#include <cmath>
#include <optional>
#include <filesystem>
#include <numeric>
#include <sstream>
#include <iostream>

#include <spdlog/spdlog.h>

#include "app/commands.h"
#include "parallel/work_queue.h"
#include "parallel/world.h"
#include "app/config.h"
#include "app/job_options.h"
#include "app/preflight.h"
#include "core/error.h"
#include "core/host_memory.h"
#include "core/log.h"
#include "core/phases.h"
#include "core/stop_signal.h"
#include "io/previews.h"
#include "io/shot_index.h"
#include "io/shot_io.h"
#include "physics/anisotropy.h"
#include "pipeline/acquisition.h"
#include "pipeline/migration.h"
#include "pipeline/modelling.h"
#include "pipeline/plan.h"
#include "propagation/backend.h"
#include "core/progress.h"
#include "io/model_io.h"

namespace rtm::app {

namespace {

const char* kUsage =
    "rtm model: forward modelling of shot gathers\n"
    "\n"
    "usage: rtm model --config JOB.ini [--section.key value ...]\n"
    "\n"
    "Propagates the constant-density acoustic wave equation (8th order in space, 2nd in\n"
    "time, C-PML absorbing layers) from each source through the velocity model and\n"
    "records the receivers. The acquisition is either a regular spread (acquisition.*)\n"
    "or the geometry of an existing SEG-Y shot file (acquisition.geometry).\n"
    "Positions of a regular spread are metres along the model's x (and y) axes from its\n"
    "first trace, and depth in metres; written files carry world coordinates.";

po::options_description born_options() {
    po::options_description d("Born modelling ([model] section)");
    d.add_options()
        ("model.born-dm", input_file(),
         "Born modelling of the data scattered by this perturbation of slowness squared "
         "(s^2/m^2, SEG-Y on the model's grid), in the background model.vp")
        ("model.born-reflectivity", input_file(),
         "Born modelling from a normal-incidence reflectivity (SEG-Y on the model's grid; "
         "dm = -4 r / v^2)");
    return d;
}

po::options_description acquisition_options() {
    po::options_description d("Acquisition ([acquisition] section)");
    d.add_options()
        ("acquisition.geometry", input_file(),
         "take sources, receivers and sampling from this SEG-Y shot file instead of a regular spread")
        ("acquisition.source-x0", po::value<double>()->default_value(0), "first source x, m")
        ("acquisition.source-dx", po::value<double>()->default_value(0), "source spacing along x, m")
        ("acquisition.source-nx", po::value<int>()->default_value(1), "number of sources along x")
        ("acquisition.source-y0", po::value<double>()->default_value(0), "first source y, m (3D)")
        ("acquisition.source-dy", po::value<double>()->default_value(0), "source spacing along y, m (3D)")
        ("acquisition.source-ny", po::value<int>()->default_value(1), "number of sources along y (3D)")
        ("acquisition.source-depth", po::value<double>()->default_value(10), "source depth, m")
        ("acquisition.receiver-x0", po::value<double>()->default_value(0), "first receiver x, m")
        ("acquisition.receiver-dx", po::value<double>()->default_value(0), "receiver spacing along x, m")
        ("acquisition.receiver-nx", po::value<int>()->default_value(1), "number of receivers along x")
        ("acquisition.receiver-y0", po::value<double>()->default_value(0), "first receiver y, m (3D)")
        ("acquisition.receiver-dy", po::value<double>()->default_value(0), "receiver spacing along y, m (3D)")
        ("acquisition.receiver-ny", po::value<int>()->default_value(1), "number of receivers along y (3D)")
        ("acquisition.receiver-depth", po::value<double>()->default_value(10), "receiver depth, m")
        ("acquisition.receivers-follow-source", po::value<bool>()->default_value(false),
         "receiver x/y are offsets from each source (a towed spread) rather than fixed positions")
        ("acquisition.record-length", po::value<double>(), "record length, s (default: the geometry file's)")
        ("acquisition.record-dt", po::value<double>(), "record sample interval, s (default: the geometry file's, else 0.002)");
    return d;
}

po::options_description output_options() {
    po::options_description d("Output ([output] section)");
    d.add_options()
        ("output.shots", po::value<std::string>()->default_value("shots.sgy"), "SEG-Y file of the modelled gathers")
        ("output.preview", po::value<std::string>()->default_value(""),
         "PNG of the middle shot's gather (default: the shots file with .png)");
    return d;
}

// SEG-Y holds the interval in whole microseconds in a 16-bit field, which segyio and most
// readers take as signed (1 to 32767, as the writer does): a value outside them is
// refused here, before the geometry it sizes is made (the plan passed 40 ms, which the
// writer then refused after the work).
double record_dt(const po::variables_map& vm) {
    const double dt = vm["acquisition.record-dt"].as<double>();
    if (!(dt >= 1e-6 && dt <= 0.032767))
        fail("option acquisition.record-dt", fmt::format("{:g} s is not a SEG-Y sample interval (whole microseconds, 1 to 32767)", dt),
             "Give the record sample interval in seconds, e.g. 0.002");
    return dt;
}
double record_length(const po::variables_map& vm) {
    const double len = vm["acquisition.record-length"].as<double>();
    if (!(len > 0) || !std::isfinite(len))
        fail("option acquisition.record-length", "must be a positive number of seconds", "Give the record length in seconds");
    return len;
}

std::vector<ShotGather> geometry_from(const po::variables_map& vm, const Model& model) {
    if (vm.count("acquisition.geometry")) {
        const std::string path = vm["acquisition.geometry"].as<std::string>();
        // A regular spread's option beside the file would be ignored without a word.
        const po::options_description spread = acquisition_options();
        for (const auto& option : spread.options()) {
            const std::string& key = option->long_name();
            if (key.rfind("acquisition.source-", 0) != 0 && key.rfind("acquisition.receiver", 0) != 0) continue;
            if (vm.count(key) && !vm[key].defaulted())
                fail_usage("options " + key + " and acquisition.geometry",
                           "both are given: the sources and receivers come from " + path + ", so " + key +
                               " would be ignored",
                           "Give either a regular spread (acquisition.source-* and receiver-*) or acquisition.geometry");
        }
        const io::ShotIndex index(path, io::ShotIndex::Use::Geometry);  // headers only: the samples are not needed
        spdlog::info("geometry from {}: {} (written in field record and channel order)", path, counted(long(index.size()), "shot"));
        // Its traces may start after the shot; the modelled ones start at the shot.
        if (index.delay_ms() != 0 && parallel::World::get().root())
            spdlog::warn("{}: its traces start {} ms after the shot (delay recording time, byte 109, times the time "
                         "scalar of byte 215); the modelled traces start at the shot (byte 109 = 0): compare them with "
                         "the file's from that time on",
                         path, index.delay_ms());
        std::vector<ShotGather> shots;
        for (std::size_t k = 0; k < index.size(); ++k) shots.push_back(index.geometry(k));
        for (auto& s : shots) {
            if (s.dt <= 0 && !(vm.count("acquisition.record-dt") && vm.count("acquisition.record-length")))
                fail(path, "the sample interval is zero or negative (trace byte 117 and binary byte 3217), so its "
                           "records' sampling is unknown",
                     "Give acquisition.record-dt and acquisition.record-length, or set the sample interval "
                     "(microseconds) in the file's headers");
            // A new interval keeps the file's record length unless record-length says otherwise.
            const bool given = vm.count("acquisition.record-length");
            const double length = given ? record_length(vm) : (s.nt - 1) * s.dt;
            if (vm.count("acquisition.record-dt")) s.dt = record_dt(vm);
            // (A rounding is said once, for the first shot.)
            s.nt = record_samples(length, s.dt, given ? "option acquisition.record-length" : path + ": shot " + std::to_string(s.id),
                                  &s == &shots.front());
        }
        return shots;
    }
    RegularAcquisition acq;
    auto get = [&](const char* k) { return vm[std::string("acquisition.") + k].as<double>(); };
    auto geti = [&](const char* k) { return vm[std::string("acquisition.") + k].as<int>(); };
    acq.sources = {get("source-x0"), get("source-dx"), geti("source-nx"),
                   get("source-y0"), get("source-dy"), geti("source-ny"), get("source-depth")};
    acq.receivers = {get("receiver-x0"), get("receiver-dx"), geti("receiver-nx"),
                     get("receiver-y0"), get("receiver-dy"), geti("receiver-ny"), get("receiver-depth")};
    acq.receivers_follow_source = vm["acquisition.receivers-follow-source"].as<bool>();
    for (const char* k : {"source-nx", "source-ny", "receiver-nx", "receiver-ny"})
        if (geti(k) < 1) fail(std::string("option acquisition.") + k, "must be at least 1", "");
    for (const char* k : {"source-x0", "source-dx", "source-y0", "source-dy", "source-depth", "receiver-x0",
                          "receiver-dx", "receiver-y0", "receiver-dy", "receiver-depth"})
        if (!std::isfinite(get(k)))
            fail(std::string("option acquisition.") + k, "is not a finite number of metres", "Give metres");
    // Several sources at a spacing of 0 are one shot modelled again and again. (Receivers
    // may share a position: identical traces cost a file's space, not a wrong result, and
    // the memory test puts many on one node on purpose.)
    for (const auto& [step, count] : {std::pair{"source-dx", "source-nx"}, {"source-dy", "source-ny"}})
        if (geti(count) > 1 && get(step) == 0)
            fail(std::string("option acquisition.") + step,
                 std::string("is 0 with acquisition.") + count + " " + std::to_string(geti(count)) +
                     ": every one would be at the same place",
                 std::string("Give the spacing in metres, or acquisition.") + count + " 1");
    acq.dt = vm.count("acquisition.record-dt") ? record_dt(vm) : 0.002;
    if (!vm.count("acquisition.record-length"))
        fail("option acquisition.record-length", "is required with a regular spread", "Give the record length in seconds, e.g. 2.0");
    acq.nt = record_samples(record_length(vm), acq.dt, "option acquisition.record-length");
    return regular_geometry(acq, model.grid());
}

// The perturbation of Born modelling (model.born-dm or model.born-reflectivity, as a
// slowness-squared perturbation on the model's grid), read and checked with the model,
// before the plan (a dry run checks it too); none without either option.
std::optional<Volume> born_perturbation(const po::variables_map& vm, const Model& model) {
    const bool refl = vm.count("model.born-reflectivity") > 0;
    if (!refl && !vm.count("model.born-dm")) return std::nullopt;
    if (refl && vm.count("model.born-dm"))
        fail_usage("options model.born-dm and model.born-reflectivity", "both are given", "Give one of them");
    const std::string path = vm[refl ? "model.born-reflectivity" : "model.born-dm"].as<std::string>();
    const Volume pert = io::read_volume(path, grid_read_options(vm));
    // On vp's grid node for node (a count alone let a shifted or resampled file through).
    io::require_vp_grid(pert.grid, path, refl ? "the reflectivity" : "the perturbation", model.grid(),
                        vm["model.vp"].as<std::string>());
    // A perturbation that is none, or that is no perturbation (a velocity model given
    // here, a reflection coefficient beyond 1), would model zeros or nonsense.
    if (std::all_of(pert.data.begin(), pert.data.end(), [](float x) { return x == 0; }))
        fail(path, "is zero everywhere: Born modelling would write gathers of zeros",
             "Give the perturbation's file (or model the background itself without model.born-*)");
    const Grid& g = pert.grid;
    const auto node = [&](std::size_t k) {
        return "node (ix " + std::to_string(k % g.nx) + ", iy " + std::to_string((k / g.nx) % g.ny) + ", iz " +
               std::to_string(k / (std::size_t(g.nx) * g.ny)) + ")";
    };
    for (std::size_t k = 0; k < pert.data.size(); ++k) {
        const double x = pert.data[k], v = model.vp.data[k];
        if (refl && std::abs(x) > 1)
            fail(path, "the reflectivity at " + node(k) + " is " + fmt::format("{:g}", x) +
                           ": a reflection coefficient lies between -1 and 1",
                 "Give the reflectivity as a fraction (a velocity model goes in model.vp)");
        if (!refl && std::abs(x) >= 1 / (v * v))
            fail(path, "the slowness-squared perturbation at " + node(k) + " is " + fmt::format("{:g}", x) +
                           " s^2/m^2, no smaller than the background's own 1 / v^2 = " + fmt::format("{:g}", 1 / (v * v)) +
                           ": it is no perturbation",
                 "Give dm in s^2/m^2, small against 1 / v^2 (a velocity model goes in model.vp)");
    }
    spdlog::info("Born modelling from {} ({})", path, refl ? "reflectivity" : "slowness-squared perturbation");
    Volume dm = refl ? slowness_perturbation_from_reflectivity(model, pert) : pert;
    // Under a free surface the top plane's pressure is held at zero: a perturbation there
    // scatters nothing. One that lies nowhere else modelled zeros, with exit 0.
    const std::size_t plane = std::size_t(g.nx) * g.ny;
    if (vm["propagation.free-surface"].as<bool>() &&
        std::all_of(dm.data.begin() + std::ptrdiff_t(std::min(plane, dm.data.size())), dm.data.end(),
                    [](float x) { return x == 0; }))
        fail(path, std::string("is non-zero only on the model's top plane (iz 0), which the free surface holds at ") +
                       "zero pressure: it scatters nothing, and Born modelling would write gathers of zeros",
             "Place the perturbation below the surface, or model without propagation.free-surface");
    return dm;
}

// Born modelling: the data scattered by the perturbation `dm`, with the boundaries and
// steps of migration (whose born-adjoint condition is its exact adjoint); each gather
// goes to `sink` when done.
void born(const Model& model, const Volume& dm, const std::vector<ShotGather>& geometry, const Wavelet& wavelet,
          const PropagationOptions& prop, const GatherSink& sink, ModellingStats& stats) {
    const Grid& b = model.grid();
    MigrationOptions mo;
    mo.propagation = prop;
    mo.aperture = -1;
    Progress progress("born: shot", long(geometry.size()));
    std::vector<long> order(geometry.size());
    std::iota(order.begin(), order.end(), 0L);
    // Shots to ranks (shot groups) as they ask; a group's leader writes its gathers.
    parallel::WorkQueue queue(parallel::ShotGroups::get(), order, long(order.size()));
    long here = 0;
    for (;;) {
        if (stop_signal()) queue.stop();  // (cmd_model's handler)
        const auto claim = queue.next();
        if (!claim) break;
        double busy = 0;
        ShotGather gather = born_shot(model, dm, geometry[std::size_t(claim.item)], wavelet, mo, &busy);
        if (queue.leader()) sink(std::size_t(claim.item), std::move(gather));
        stats.busy_seconds += busy;
        queue.finish(claim, true);
        progress.update(++here);
    }
    const TimeAxis ta = time_axis(model, geometry.front(), wavelet, prop);
    stats.shots = queue.leader() ? here : 0;  // a group's shots are its leader's
    stats.steps = long(ta.nt) * stats.shots;
    stats.dt = ta.dt;
    stats.seconds = progress.elapsed();
    stats.point_updates = 2.0 * double(b.size()) * ta.nt * stats.shots;  // background + scattered
}

// Refuses an output path that names an input file (it would be replaced) or the other
// output (the preview would overwrite the gathers), naming both options.
void check_outputs(const po::options_description& desc, const po::variables_map& vm, const std::string& shots,
                   const std::string& preview) {
    check_inputs_kept(desc, vm, {{shots, "output.shots"}, {preview, "output.preview"}});
    std::error_code ea, eb;  // (neither need exist yet)
    if (std::filesystem::weakly_canonical(shots, ea) == std::filesystem::weakly_canonical(preview, eb) && !ea && !eb)
        fail("option output.preview", "the preview '" + preview + "' would overwrite the gathers (output.shots)",
             "Give output.shots a name ending in .sgy, or another output.preview");
}

}  // namespace

po::options_description model_command_options() {
    po::options_description desc;
    desc.add(model_options()).add(born_options()).add(acquisition_options()).add(wavelet_options())
        .add(propagation_options()).add(output_options()).add(plan_options());
    return desc;
}

int cmd_model(int argc, char** argv) {
    po::options_description desc = model_command_options();
    po::variables_map vm;
    if (!parse_options(argc, argv, kUsage, desc, migrate_command_options(), vm)) return 0;

    // The outputs, before any work: no input is among them.
    const std::string out = vm["output.shots"].as<std::string>();
    std::string png = vm["output.preview"].as<std::string>();
    if (png.empty()) png = std::filesystem::path(out).replace_extension(".png").string();
    check_outputs(desc, vm, out, png);
    // The GPU's start goes on beside the reads (choose_backend waits for it).
    start_device(parse_device(vm["propagation.device"].as<std::string>()), parallel::World::get().node_rank());
    PhaseTimer reading("read model");
    const Model model = load_model(vm);
    reading.stop();
    const auto geometry = geometry_from(vm, model);
    if (geometry.empty()) fail("acquisition", "no shots to model", "Describe at least one source");
    const Wavelet wavelet = load_wavelet(vm);
    const PropagationOptions prop = propagation_from(vm);
    const std::optional<Volume> dm = born_perturbation(vm, model);
    // The traces are resampled to the record's interval through an anti-alias filter: a
    // coarse interval cuts the wavelet's band without a word (a 30 ms record of a 15 Hz
    // Ricker kept 37% of its peak).
    if (const double nyquist = 0.5 / geometry.front().dt; nyquist < wavelet.f_max && parallel::World::get().root())
        spdlog::warn("the record's sample interval ({:g} ms{}) holds frequencies up to {:.3g} Hz, below the wavelet's "
                     "{:.3g} Hz: the gathers lose the band above it. A record interval of {:.3g} ms or less keeps it",
                     geometry.front().dt * 1e3,
                     vm.count("acquisition.geometry") ? ", from acquisition.geometry" : ", acquisition.record-dt", nyquist,
                     wavelet.f_max, [](double ms) {  // (3 digits, rounded down: it must keep the band)
                         const double unit = std::pow(10.0, std::floor(std::log10(ms)) - 2);
                         return std::floor(ms / unit) * unit;
                     }(0.5 / wavelet.f_max * 1e3));

    // Each gather is written as its batch finishes (the file's headers from the geometry,
    // checked before any propagation); the middle one is kept for the preview.
    // Under several ranks one file: rank 0 makes it (headers from the geometry), every
    // rank writes its own gathers at their places, rank 0 commits once all have closed.
    PhaseTimer planning("plan and checks");
    if (preflight_model(vm, model, geometry, wavelet, prop, dm.has_value(), out, png)) return 0;
    planning.stop();  // the plan; --dry-run stops
    const parallel::World& world = parallel::World::get();
    // SIGINT, SIGTERM or SIGHUP from here on: no rank takes another batch; the file is then
    // incomplete and is not kept (rtm model does not resume), so the rename below does
    // not happen (the writer removes out.tmp). Installed before the file is made.
    const StopOnSignal stop(world.root());
    PhaseTimer creating("create the shot file");
    std::unique_ptr<io::ShotWriter> writer;
    world.on_root([&] {
        if (auto dir = std::filesystem::path(out).parent_path(); !dir.empty()) std::filesystem::create_directories(dir);
        writer = std::make_unique<io::ShotWriter>(
            out, geometry, io::ShotWriter::Role::Create,
            std::string(dm ? "Born (scattered) shot gathers, " : "shot gathers, ") + physics_name(model));
    });
    if (!world.root()) writer = std::make_unique<io::ShotWriter>(out, geometry, io::ShotWriter::Role::Join);
    creating.stop();
    const std::size_t middle = geometry.size() / 2;  // kept by the rank that models it, for the preview
    ShotGather preview;
    const GatherSink write = [&](std::size_t k, ShotGather&& gather) {
        const PhaseTimer t("write gathers");
        writer->write(k, gather);
        if (k == middle) preview = std::move(gather);
    };
    ModellingStats stats;
    if (dm) born(model, *dm, geometry, wavelet, prop, write, stats);
    else model_shots(model, geometry, wavelet, prop, write, &stats);
    PhaseTimer finishing("close the shot file");
    writer->close();
    // Every rank's counts to rank 0 (the barrier of the gather: all have closed the file).
    const auto counts = world.gather(std::to_string(stats.shots) + " " + std::to_string(stats.point_updates) + " " +
                                     std::to_string(stats.busy_seconds) + " " + std::to_string(stop_signal()));
    double updates = 0, busy = 0;
    long modelled = 0;
    int signal = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
        long shots = 0;
        double u = 0, b = 0;
        int sig = 0;
        std::istringstream(counts[r]) >> shots >> u >> b >> sig;
        updates += u, busy += b, modelled += shots, signal = std::max(signal, sig);
        if (counts.size() > 1) spdlog::info("rank {}: {}, propagation steps {}", r, counted(shots, "shot"), format_duration(b));
    }
    int stopped[2] = {modelled < long(geometry.size()), signal};  // (the counts are rank 0's)
    world.broadcast(stopped, sizeof stopped);
    signal = stopped[1];
    if (stopped[0]) {  // by a signal: the writer removes out.tmp
        if (world.root()) spdlog::error("stopped by signal {} after {} of {}: {} was not written (an incomplete shot file is not "
                      "kept, and rtm model does not resume: run the command again)",
                      signal, modelled, counted(long(geometry.size()), "shot"), out);
        return 128 + signal;
    }
    world.on_root([&] { writer->commit(false); });
    finishing.stop();
    PhaseTimer drawing("draw the preview");
    // After the batches' traces are freed: the preview's drawing is the last peak. A
    // picture that cannot be drawn loses the picture, not the gathers written above (the
    // command had failed after writing them all).
    if (!preview.receivers.empty()) try {
            io::write_gather_png(png, preview, out + ": shot " + std::to_string(preview.id) + " (the middle of " +
                                                   std::to_string(geometry.size()) + "), modelled",
                                 model.grid().frame);
        } catch (const std::exception& e) {
            spdlog::warn("the preview was not drawn ({}); the gathers are written in {}", e.what(), out);
        }
    drawing.stop();
    const double seconds = seconds_since_start();  // the whole command's wall time

    const Grid& g = model.grid();
    const TimeAxis ta = time_axis(model, geometry.front(), wavelet, prop);
    spdlog::info("done: {}, grid {} x {} x {} (+{} absorbing cells), {} steps of {:.3g} ms each, {}",
                 counted(long(geometry.size()), "shot"), g.nx, g.ny, g.nz, prop.pml_cells, ta.nt, ta.dt * 1e3,
                 throughput_summary(seconds, busy, updates, prop.backend.gpu, world.size()));
    spdlog::info("wrote {} and {}", out, png);
    spdlog::info("time by phase on rank 0: {}", phase_summary());
    if (const std::string t = write_timeline(world.rank()); !t.empty()) spdlog::info("wrote the timeline {}", t);
    spdlog::info("peak host memory {:.1f} MB (VmHWM; docs/memory.md)", peak_host_bytes() / 1e6);
    // A signal after the last batch was taken: the file is whole, and the exit status
    // still says that a signal came (as rtm migrate's does: a scheduler reads it).
    if (signal) spdlog::warn("signal {} came after the last batch: {} is complete", signal, out);
    return signal ? 128 + signal : 0;
}

}  // namespace rtm::app
