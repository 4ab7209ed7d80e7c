// rtm migrate: velocity model + recorded shots -> stacked depth image.
#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>

#include <spdlog/spdlog.h>

#include "app/commands.h"
#include "app/config.h"
#include "app/job_options.h"
#include "app/preflight.h"
#include "core/error.h"
#include "core/host_memory.h"
#include "core/log.h"
#include "core/phases.h"
#include "core/progress.h"
#include "core/threads.h"
#include "io/file_hash.h"
#include "io/shot_index.h"
#include "parallel/world.h"
#include "pipeline/migration_job.h"
#include "physics/anisotropy.h"
#include "pipeline/shot_window.h"
#include "propagation/backend.h"

namespace rtm::app {

namespace {

const char* kUsage =
    "rtm migrate: reverse-time migration of shot gathers into a depth image\n"
    "\n"
    "usage: rtm migrate --config JOB.ini [--section.key value ...]\n"
    "\n"
    "For each shot: cut the model to the source and receivers plus an aperture, add\n"
    "damping layers, propagate the source forward, propagate the time-reversed traces\n"
    "backward, and apply the imaging condition every k steps; stack the shot images.\n"
    "The job folder (output.job) keeps each shot's status and the stack: run the same\n"
    "command again after an interruption and it resumes where it stopped. Outputs in the\n"
    "folder: image.sgy (post-processed stack, on the model's grid), illumination.sgy,\n"
    "image.png (3D: image_inline.png, image_crossline.png, image_depth.png), written at the\n"
    "end of every run. A shot that fails (bad data, a blow-up) is recorded as failed in\n"
    "state.json and the others go on; running the command again retries it, which helps\n"
    "where the cause has gone (memory, a device): the folder refuses changed input files\n"
    "and settings, so fixed data or settings go into a new job folder.\n"
    "\n"
    "Exit status: 0 when every shot tried is done (or the run stopped at migration.max-shots),\n"
    "3 when the job holds failed shots (each with its reason in the log and state.json),\n"
    "128 + the signal when SIGINT, SIGTERM or SIGHUP stopped it, failed shots or not (after the shot under way, with a\n"
    "checkpoint and the image: resume by running it again), 1 on an error that stops the\n"
    "job, 2 on a usage error (an unknown option, a value that does not parse or is missing).";

po::options_description data_options() {
    po::options_description d("Recorded data ([data] section)");
    d.add_options()
        ("data.shots", input_file_list()->multitoken(),
         "SEG-Y shot files, every gather migrated: on the command line several after one --data.shots or the "
         "option repeated, in an INI file one 'shots = FILE' line each. Given on the command line, they replace "
         "the INI file's (as every option does). A file listed twice, or beside a copy of itself, is refused")
        ("data.receivers-outside", po::value<std::string>()->default_value("refuse"),
         "receivers (traces) that lie outside the model: refuse (the job, before any work, naming the first) or "
         "drop (leave them out of the migration, as if the files had not held them; the log counts them). A "
         "source outside the model is refused either way");
    return d;
}

po::options_description migration_options() {
    po::options_description d("Migration ([migration] section)");
    d.add_options()
        ("migration.aperture", po::value<double>()->default_value(1000),
         "metres of model kept beyond the source and receivers on each side (negative: the whole model)")
        ("migration.image-every", po::value<int>()->default_value(0),
         "time steps between imaging steps (0: from the Nyquist rate of the wavelet's f_max)")
        ("migration.storage", po::value<std::string>()->default_value("auto"),
         "how the source wavefield is kept for the backward pass: snapshots (every imaging step, two "
         "propagations), boundary (the window's edge band every step, rebuilt backwards: three "
         "propagations, little memory), checkpoints (whole states at a few imaging steps, the rest "
         "recomputed: any shot that holds one state) or auto (the first of these that fits the memory budget)")
        ("migration.bf16-snapshots", po::value<bool>()->default_value(false),
         "keep snapshots in bfloat16: half their memory, for an image about 5% off in relative L2 (the bundled "
         "example's); cross-correlation with snapshots (or auto) only")
        ("migration.memory-budget", po::value<std::string>()->default_value("auto"),
         "GB for the kept source wavefield of one shot, or auto: the free memory of the GPU (or the available host "
         "memory) after the propagation's arrays, less 10%")
        ("migration.condition", po::value<std::string>()->default_value("cross-correlation"),
         "imaging condition: cross-correlation, inverse-scattering (energy norm: suppresses "
         "low-wavenumber backscatter) or born-adjoint (the exact adjoint of Born modelling: image.sgy is it with "
         "migration.normalise and migration.laplacian false and no top mute). With model.epsilon, delta, theta, phi "
         "cross-correlation and inverse scattering image (p + q) / 2, born-adjoint the adjoint of anisotropic Born "
         "modelling on p and q (docs/anisotropy.md)")
        ("migration.mute-direct", po::value<std::string>()->default_value("false"),
         "zero the data until the direct wave's onset (offset / the velocity at the source) plus a window, then "
         "a cosine taper of one dominant period: a window in seconds (e.g. 0.1), true (the wavelet's length, "
         "3 / ricker-f0) or false")
        ("migration.top-mute", po::value<double>()->default_value(0),
         "zero the image above this depth, m (e.g. a little below the receivers: the source imprint); 0: none")
        ("migration.top-mute-taper", po::value<double>()->default_value(50),
         "metres below migration.top-mute over which the image rises to full strength (half cosine)")
        ("migration.rho-filter", po::value<bool>()->default_value(true),
         "-d/dt on the data, so reflectors image zero-phase at their depth with positive polarity "
         "where impedance increases downward (not with born-adjoint, the exact adjoint)")
        ("migration.end-taper", po::value<std::string>()->default_value("auto"),
         "seconds at the end of each record tapered to 0 (half cosine) before the backward pass, so that it "
         "starts without a broadband step (grid-scale noise in the image, strongest with anisotropy); auto: "
         "1 / the wavelet's highest frequency (none with born-adjoint, the exact adjoint); 0: none")
        ("migration.normalise", po::value<bool>()->default_value(true), "divide the stack by the source illumination")
        ("migration.laplacian", po::value<bool>()->default_value(true), "apply -Laplacian to the stack (removes low-wavenumber noise)")
        ("migration.checkpoint-minutes", po::value<double>()->default_value(5),
         "minutes between checkpoints of the job folder (raw stack and state, after the shot that "
         "crosses the time; 0: after every shot); a run always checkpoints at its end")
        ("migration.keep-shot-images", po::value<bool>()->default_value(false),
         "also write each shot's raw image as a PNG in the job folder's shots/ (for QC)")
        ("migration.max-shots", po::value<int>()->default_value(-1), "migrate at most this many shots in this run, then stop (resume later)");
    return d;
}

po::options_description output_options() {
    po::options_description d("Output ([output] section)");
    d.add_options()("output.job", po::value<std::string>()->default_value("migration"), "job folder (state, stack, image, previews)");
    return d;
}

// An option that is "auto" (nullopt) or a finite number, positive (or also 0 where
// zero_ok); refused naming the option otherwise.
std::optional<double> auto_or_number(const po::variables_map& vm, const std::string& option, bool zero_ok,
                                     const std::string& unit, const std::string& fix) {
    const std::string text = vm[option].as<std::string>();
    if (text == "auto") return std::nullopt;
    double v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    const std::string what = "'" + text + "' is not a " + (zero_ok ? "non-negative" : "positive") + " number of " + unit;
    if (ec != std::errc() || end != text.data() + text.size()) fail_usage("option " + option, what, fix);  // exit 2
    if (!std::isfinite(v) || v < 0 || (v == 0 && !zero_ok)) fail("option " + option, what, fix);
    return v;
}

MigrationOptions migration_from(const po::variables_map& vm) {
    MigrationOptions m;
    m.propagation = propagation_from(vm);
    m.aperture = vm["migration.aperture"].as<double>();
    if (std::isnan(m.aperture))
        fail("option migration.aperture", "is not a number", "Give metres around the source and receivers, or -1 for the whole model");
    m.image_every = vm["migration.image-every"].as<int>();
    if (m.image_every < 0)
        fail("option migration.image-every", "must not be negative", "Give 0 (from the wavelet's band) or a number of steps");
    const std::string st = vm["migration.storage"].as<std::string>();
    if (st == "auto") m.storage = SourceStorage::Auto;
    else if (st == "snapshots") m.storage = SourceStorage::Snapshots;
    else if (st == "boundary") m.storage = SourceStorage::Boundary;
    else if (st == "checkpoints") m.storage = SourceStorage::Checkpoints;
    else fail_usage("option migration.storage", "unknown value '" + st + "'", "Use auto, snapshots, boundary or checkpoints");
    m.bf16_snapshots = vm["migration.bf16-snapshots"].as<bool>();
    if (const auto gb = auto_or_number(vm, "migration.memory-budget", false, "GB", "Give gigabytes, e.g. 4, or auto"))
        m.memory_budget = *gb * 1e9;
    const std::string c = vm["migration.condition"].as<std::string>();
    if (c == "cross-correlation") m.condition = ImagingCondition::CrossCorrelation;
    else if (c == "inverse-scattering") m.condition = ImagingCondition::InverseScattering;
    else if (c == "born-adjoint") m.condition = ImagingCondition::BornAdjoint;
    else fail_usage("option migration.condition", "unknown value '" + c + "'", "Use cross-correlation, inverse-scattering or born-adjoint");
    const std::string mute = vm["migration.mute-direct"].as<std::string>();
    m.mute_direct = mute != "false";
    if (mute != "true" && mute != "false") {
        char* end = nullptr;
        m.mute_after = std::strtod(mute.c_str(), &end);
        const std::string what = "'" + mute + "' is not a window in seconds, true or false",
                          fix = "Give the seconds kept muted after the direct wave's onset (e.g. 0.1), true or false";
        if (mute.empty() || *end) fail_usage("option migration.mute-direct", what, fix);  // exit 2
        if (!(m.mute_after >= 0) || !std::isfinite(m.mute_after)) fail("option migration.mute-direct", what, fix);
    }
    m.rho_filter = vm["migration.rho-filter"].as<bool>();
    if (const auto s = auto_or_number(vm, "migration.end-taper", true, "seconds", "Give seconds (e.g. 0.04), 0 for none, or auto"))
        m.end_taper = *s;
    // The exact adjoint takes the data as they are and images every step: a filter, a
    // taper or an imaging interval asked for beside it would be left out without a word.
    if (m.condition == ImagingCondition::BornAdjoint)
        for (const auto& [key, on] : {std::pair{"migration.rho-filter", m.rho_filter},
                                      std::pair{"migration.end-taper", m.end_taper > 0},
                                      std::pair{"migration.mute-direct", m.mute_direct},
                                      std::pair{"migration.image-every", m.image_every > 1}})
            if (on && !vm[key].defaulted())
                fail_usage(std::string("options ") + key + " and migration.condition born-adjoint",
                           std::string("both are given: the born-adjoint condition is the exact adjoint of Born "
                                       "modelling, which takes the data unfiltered, untapered and unmuted and images every "
                                       "step, so ") + key + " would be ignored",
                           std::string("Leave ") + key + " out with born-adjoint, or choose another condition");
    // bfloat16 keeps 8 bits of each value. Inverse scattering's time derivative, the
    // difference of two snapshots a step apart, drowns in their rounding: the bundled
    // example's final image came out 62% off in relative L2 (cross-correlation's 4.8%);
    // the born-adjoint condition would no longer be the exact adjoint. And only
    // snapshots are kept in it: beside another storage the option did nothing.
    if (m.bf16_snapshots && m.condition != ImagingCondition::CrossCorrelation)
        fail_usage("options migration.bf16-snapshots and migration.condition " + c,
                   "both are given: " + c + (m.condition == ImagingCondition::InverseScattering
                       ? " differences snapshots a step apart, which bfloat16 rounds to noise (the bundled example's "
                         "image 62% off in relative L2)"
                       : " is the exact adjoint of Born modelling, which rounding the snapshots breaks"),
                   "Leave out migration.bf16-snapshots, or use migration.storage boundary or checkpoints for less memory");
    if (m.bf16_snapshots && (m.storage == SourceStorage::Boundary || m.storage == SourceStorage::Checkpoints))
        fail_usage("options migration.bf16-snapshots and migration.storage " + st,
                   "both are given: only snapshots are kept in bfloat16, and " + st + " keeps none",
                   "Leave out migration.bf16-snapshots, or use migration.storage snapshots or auto");
    return m;
}

// The input files whose content the job folder's fingerprint holds: replacing one under
// the same name (even by one of the same size) must not resume into a stack of two
// models or two data sets. Every input file but the configuration file, whose settings
// the fingerprint holds by their values (settings_of), each known by its option (the
// files of a list by their places in it); hashes come later.
std::vector<JobFingerprint::Input> fingerprint_inputs(const po::options_description& desc, const po::variables_map& vm) {
    std::vector<JobFingerprint::Input> inputs;
    std::map<std::string, int> given;  // files of each option so far
    for (const auto& [option, path] : input_files(desc, vm)) {
        if (option == "config") continue;
        const int k = ++given[option];
        const bool list = vm[option].value().type() == typeid(std::vector<std::string>);
        inputs.push_back({list ? option + " " + std::to_string(k) : option, path, ""});
    }
    return inputs;
}

// Refuses two data.shots files of the same content (their hashes in `inputs`): a copy
// under another name would have its shots stacked twice. (The same file under two names
// is refused before, by std::filesystem::equivalent.)
void refuse_copies(const std::vector<JobFingerprint::Input>& inputs) {
    const auto shots = [](const JobFingerprint::Input& in) { return in.key.rfind("data.shots ", 0) == 0; };
    for (std::size_t i = 0; i < inputs.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (shots(inputs[i]) && shots(inputs[j]) && inputs[i].hash == inputs[j].hash)
                fail("option data.shots", inputs[i].path + " holds the same bytes as " + inputs[j].path +
                                              ": its shots would be stacked twice",
                     "List each shot file once (remove the copy from data.shots)");
}

// The shortest text that reads back as the same double: distinct values stay distinct,
// and the error that names a changed setting reads as the user wrote it.
std::string shortest(double d) {
    char buf[32];
    return std::string(buf, std::to_chars(buf, buf + sizeof buf, d).ptr - buf);
}

// data.receivers-outside drop: the receivers outside the model left out of every gather
// of the shot files, counted in the log; a gather left with none is refused (nothing of
// it could be migrated). refuse: the plan refuses the first one.
// (The option's value is checked before any file is read: receivers_outside_drop.)
void leave_out_receivers_outside(const Model& model, std::vector<io::ShotIndex>& indexes) {
    for (auto& index : indexes) {
        std::size_t traces = 0;
        for (std::size_t k = 0; k < index.size(); ++k) traces += index.geometry(k).ntraces();
        const std::size_t out = index.leave_out_receivers([&](const Position& p) { return in_model(model, p); });
        for (std::size_t k = 0; k < index.size(); ++k) {
            const ShotGather& g = index.geometry(k);
            if (g.receivers.empty())
                fail(index.path() + ": shot " + std::to_string(g.id),
                     "every receiver lies outside the model (data.receivers-outside drop left them all out): "
                     "nothing of it could be migrated",
                     "Leave the shot out of data.shots, or extend the model to its receivers");
        }
        if (out && parallel::World::get().root())  // (warnings come from every rank)
            spdlog::warn("shots {}: {} of its {}: receivers outside the model, left out (data.receivers-outside drop)",
                         index.path(), out, counted(long(traces), "trace"));
    }
}

// Everything that changes the image, for the job folder's fingerprint: the options
// (input files by their content: `inputs`, hashed), the model's spacing as used (not
// model.dx, dy and dz, whose 0 means "the file's": stating the file's own spacing on a
// resume changes nothing), the backend that runs (whatever propagation.device said).
JobFingerprint settings_of(const po::variables_map& vm, const Grid& model, const Backend& backend,
                           std::vector<JobFingerprint::Input> inputs) {
    std::set<std::string> files;  // options whose values are paths
    for (const auto& in : inputs) files.insert(JobFingerprint::option_of(in.key));
    std::ostringstream os;
    for (const auto& [key, value] : vm) {
        if (key == "config" || key == "output.job" || key == "migration.max-shots" ||
            key == "migration.checkpoint-minutes" || key == "propagation.device" || key == "propagation.threads" ||
            key == "parallel.ranks-per-shot" || key == "dry-run" || key == "migration.keep-shot-images" ||
            key == "propagation.batch" ||  // a batch's images are bit for bit its shots' alone
            key == "model.dx" || key == "model.dy" || key == "model.dz" || files.count(key))
            continue;
        os << key << "=";
        const auto& v = value.value();
        if (auto s = boost::any_cast<std::string>(&v)) os << *s;  // (compared by value: job_state)
        else if (auto d = boost::any_cast<double>(&v)) os << shortest(*d);
        else if (auto i = boost::any_cast<int>(&v)) os << *i;
        else if (auto b = boost::any_cast<bool>(&v)) os << *b;
        os << ";";
    }
    os << "model.spacing=" << shortest(model.dx) << "," << shortest(model.dy) << "," << shortest(model.dz) << ";";
    os << "backend=" << (backend.gpu ? "gpu" : "cpu") << ";";
    return {os.str(), std::move(inputs)};
}

}  // namespace

po::options_description migrate_command_options() {
    po::options_description desc;
    desc.add(model_options()).add(data_options()).add(wavelet_options()).add(propagation_options())
        .add(migration_options()).add(output_options()).add(plan_options());
    return desc;
}

int cmd_migrate(int argc, char** argv) {
    po::options_description desc = migrate_command_options();
    po::variables_map vm;
    if (!parse_options(argc, argv, kUsage, desc, model_command_options(), vm)) return 0;

    // No input may be a file the job writes or removes in its folder (its image, say).
    std::vector<Product> products;
    for (const auto& f : job_files(vm["output.job"].as<std::string>())) products.push_back({f, "output.job"});
    check_inputs_kept(desc, vm, products);
    // The GPU's start goes on beside the reads (choose_backend waits for it).
    start_device(parse_device(vm["propagation.device"].as<std::string>()), parallel::World::get().node_rank());
    if (!vm.count("data.shots")) fail_usage("option data.shots", "no shot files given", "Set [data] shots = FILE.sgy");
    const auto files = vm["data.shots"].as<std::vector<std::string>>();
    for (const auto& f : files)
        if (f.empty()) fail_usage("option data.shots", "an empty file name", "Give each shot file's path");
    for (std::size_t i = 0; i < files.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (std::filesystem::exists(files[i]) && std::filesystem::exists(files[j]) &&
                std::filesystem::equivalent(files[i], files[j]))
                fail("option data.shots", files[i] + " is given twice (its shots would be stacked twice)",
                     "List each shot file once");
    const std::string outside = vm["data.receivers-outside"].as<std::string>();
    if (outside != "refuse" && outside != "drop")
        fail_usage("option data.receivers-outside", "unknown value '" + outside + "'", "Use refuse or drop");
    const bool receivers_outside_drop = outside == "drop";
    // Three reads of different files at once, each on its own thread (one after another
    // they took 0.24, 0.10 and 0.18 s before a 3D migration's first step, H200 host,
    // 2026-11-24): the model (on every core), every shot file's trace headers (checked
    // now; a gather's samples are read when its turn comes), and on rank 0 the inputs'
    // content for the job's fingerprint (the other ranks never read the job's state, and
    // a dry run stops before it: a survey's files can take minutes to read in full).
    // Their errors come in that order.
    auto indexed = run_beside(true, 0, [&files] {
        const PhaseTimer indexing("index shots");
        std::vector<io::ShotIndex> indexes;
        for (const auto& f : files) indexes.emplace_back(f);
        return indexes;
    });
    // An error before the fingerprint is used stops the hashing (stop_hashing, set as the
    // scope ends) rather than waiting for it.
    std::atomic<bool> stop_hashing{false};
    auto hashed = run_beside(parallel::World::get().root() && !vm["dry-run"].as<bool>(), 0,
                             [inputs = fingerprint_inputs(desc, vm), &stop_hashing]() mutable {
                                 const PhaseTimer hashing("fingerprint inputs");
                                 for (auto& in : inputs) in.hash = io::content_hash(in.path, &stop_hashing);
                                 return inputs;
                             });
    const struct StopHashing {
        std::atomic<bool>& stop;
        ~StopHashing() { stop = true; }
    } stop_hashing_at_exit{stop_hashing};
    PhaseTimer reading("read model");
    const Model model = load_model(vm);
    reading.stop();
    std::vector<io::ShotIndex> indexes = indexed.get();
    if (receivers_outside_drop) leave_out_receivers_outside(model, indexes);
    std::vector<JobShot> names;
    std::vector<std::pair<std::size_t, std::size_t>> where;  // index and gather of each job shot
    for (std::size_t file = 0; file < indexes.size(); ++file) {
        const io::ShotIndex& index = indexes[file];
        spdlog::info("shots {}: {}{}", index.path(), counted(long(index.size()), "gather"),
                     index.dead_traces() ? fmt::format(", {} marked dead (trace byte 29 = 2) read as zeros",
                                                       counted(long(index.dead_traces()), "trace"))
                                         : "");
        for (std::size_t k = 0; k < index.size(); ++k) {
            names.push_back({index.path(), index.geometry(k).id});
            where.emplace_back(file, k);
        }
    }
    if (names.empty()) fail(files.front(), "holds no shot gathers", "Check the data.shots files");
    // A shot whose every sample is zero (a dead shot, a file zeroed by mistake) images
    // nothing, yet its source's illumination still divides the image: said, as it is read.
    const auto load_shot = [&](std::size_t i) {
        ShotGather g = indexes[where[i].first].load(where[i].second);
        if (std::all_of(g.data.begin(), g.data.end(), [](float v) { return v == 0.f; }))
            every_rank().warn("shot {} from {}: every sample is zero: it adds nothing to the image but its source's "
                              "illumination, which a normalised image is divided by. Leave it out of the job if it is dead",
                              g.id, names[i].file);
        return g;
    };
    const Wavelet wavelet = load_wavelet(vm);

    MigrationJobOptions job;
    job.folder = vm["output.job"].as<std::string>();
    job.migration = migration_from(vm);
    // A shot's work grows with its window: the largest go first, so that ranks end together.
    for (std::size_t i = 0; i < names.size(); ++i)
        names[i].cost = double(
            window_extent(model, indexes[where[i].first].geometry(where[i].second), job.migration.aperture)
                .grid.size());
    job.post.normalise = vm["migration.normalise"].as<bool>();
    job.post.laplacian = vm["migration.laplacian"].as<bool>();
    job.post.top_mute = vm["migration.top-mute"].as<double>();
    job.post.top_taper = vm["migration.top-mute-taper"].as<double>();
    if (!(job.post.top_mute >= 0) || !std::isfinite(job.post.top_mute))
        fail("option migration.top-mute", "the depth must be a finite number of metres, 0 or more",
             "Give the depth above which the image is zeroed, e.g. 50");
    if (!(job.post.top_taper >= 0) || !std::isfinite(job.post.top_taper))
        fail("option migration.top-mute-taper", "must be a finite number of metres, 0 or more", "Give metres, e.g. 50");
    const Grid& grid = model.grid();
    if (const double bottom = grid.z0 + (grid.nz - 1) * grid.dz; job.post.top_mute > 0 && job.post.top_mute >= bottom)
        fail("option migration.top-mute",
             fmt::format("zeroes the image above {:g} m, at or below the model's deepest sample ({:g} m): the "
                         "whole image would be zero", job.post.top_mute, bottom),
             "Give a depth above the reflectors to keep (e.g. a little below the receivers), or 0 for no mute");
    else if (job.post.top_mute > 0 && job.post.top_mute + job.post.top_taper > bottom)
        fail("option migration.top-mute-taper",
             fmt::format("{:g} m below the top mute at {:g} m ends beyond the model's deepest sample ({:g} m): the "
                         "image would nowhere reach full strength", job.post.top_taper, job.post.top_mute, bottom),
             fmt::format("Give a taper of at most {:g} m", bottom - job.post.top_mute));
    job.checkpoint_minutes = vm["migration.checkpoint-minutes"].as<double>();
    if (!(job.checkpoint_minutes >= 0))
        fail("option migration.checkpoint-minutes", "must be 0 or more minutes", "Give minutes, e.g. 5 (0: after every shot)");
    job.max_shots = vm["migration.max-shots"].as<int>();
    job.keep_shot_images = vm["migration.keep-shot-images"].as<bool>();
    // What runs and what the image is, in the log (the preview's title says it too).
    spdlog::info("migration: the {} imaging condition, image = {}; {} propagation in {} on the {}",
                 condition_name(job.migration.condition), post_words(job.post), physics_name(model),
                 job.migration.propagation.precision == Precision::Double ? "fp64" : "fp32",
                 job.migration.propagation.backend.gpu ? "GPU" : "CPU");
    // The plan, every shot's geometry and the job folder, checked before any shot; --dry-run stops.
    const PlanShots plan_shots{names.size(), [&](std::size_t i) -> const ShotGather& {
                                   return indexes[where[i].first].geometry(where[i].second);
                               }, [&](std::size_t i) { return names[i].file; }};
    PhaseTimer planning("plan and checks");
    // A dry run does not hash the inputs for the fingerprint, yet refuses a copy of a shot
    // file as the run will (refuse_copies). A survey's files often have equal sizes, so
    // they are told apart by their size and first megabyte (their first gathers' trace
    // headers), and read in full only where those agree.
    if (vm["dry-run"].as<bool>())
        parallel::World::get().on_root([&] {
            std::vector<JobFingerprint::Input> shots;
            for (auto& in : fingerprint_inputs(desc, vm))
                if (in.key.rfind("data.shots ", 0) == 0) shots.push_back(std::move(in));
            const auto head = [](const std::string& path) {
                std::string bytes(1 << 20, '\0');
                std::ifstream in(path, std::ios::binary);
                in.read(bytes.data(), std::streamsize(bytes.size()));
                bytes.resize(std::size_t(in.gcount()));
                return std::to_string(std::filesystem::file_size(path)) + ":" + io::bytes_hash({{bytes.data(), bytes.size()}});
            };
            std::map<std::string, int> heads;
            for (auto& in : shots) ++heads[in.hash = head(in.path)];
            std::vector<JobFingerprint::Input> alike;
            for (auto& in : shots)
                if (heads[in.hash] > 1) {
                    in.hash = io::content_hash(in.path);
                    alike.push_back(std::move(in));
                }
            refuse_copies(alike);
        });
    if (preflight_migrate(vm, model, plan_shots, wavelet, job.migration, job.folder)) return 0;
    planning.stop();
    // Only rank 0 opens the job folder: the others would read every input file in full
    // for a fingerprint they never use.
    JobFingerprint fingerprint;
    parallel::World::get().on_root([&] {
        auto inputs = hashed.get();
        refuse_copies(inputs);
        fingerprint = settings_of(vm, model.grid(), job.migration.propagation.backend, std::move(inputs));
    });
    const JobReport rep = run_migration_job(model, names, load_shot, wavelet, job, fingerprint);
    const int ranks = parallel::World::get().size();
    for (const auto& r : rep.ranks)
        if (ranks > 1)
            spdlog::info("rank {} on {}: {} of the {} it tried migrated, migrating {} ({:.0f}%, propagation steps {}), "
                         "waiting for work {}",
                         r.rank, r.node, r.migrated, counted(r.shots, "shot"), format_duration(r.busy), 100 * r.busy / std::max(1e-9, rep.seconds),
                         format_duration(r.propagation), format_duration(r.waiting + rep.seconds - r.wall));
    const double seconds = seconds_since_start();  // the whole command's wall time
    spdlog::info("migrated {} in this run on {} ({:.0f} shots/hour): {}", counted(rep.done_now, "shot"), counted(ranks, "rank"),
                 rep.done_now / std::max(1e-9, seconds) * 3600,
                 throughput_summary(seconds, rep.busy_seconds, rep.point_updates,
                                    job.migration.propagation.backend.gpu, ranks));
    spdlog::info("time by phase on rank 0: {}", phase_summary());
    if (const std::string t = write_timeline(parallel::World::get().rank()); !t.empty()) spdlog::info("wrote the timeline {}", t);
    spdlog::info("peak host memory {:.1f} MB (VmHWM; docs/memory.md)", peak_host_bytes() / 1e6);
    for (const auto& p : rep.outputs) spdlog::info("wrote {}", p);
    for (const auto& f : rep.failed_now) spdlog::error("shot {} from {} failed: {}", f.shot.id, f.shot.file, f.reason);
    if (rep.complete) {
        spdlog::info("done: {} stacked", counted(rep.total, "shot"));
        return 0;
    }
    const int done = rep.done_before + rep.done_now;
    // Rank 0's words: it holds the job's state (the other ranks' counts of this run's
    // failures are not theirs to give, and mpirun showed the line once a rank). A rerun
    // retries the failed shots, but this folder refuses changed input files and settings
    // (its fingerprint): only a cause outside them can have gone away.
    const bool root = parallel::World::get().root();
    if (root && rep.failed)
        spdlog::error("{} of {} done, {} failed ({} in this run; reasons above and in {}/state.json). Running the "
                      "same command again retries them, which helps where the cause lay outside the input files and "
                      "settings (memory, a device, a disk): a cause in them (bad samples, a geometry, a blow-up) is "
                      "fixed by changing them, which this job folder refuses, so migrate the fixed inputs into a new "
                      "output.job folder (or delete this one)",
                      done, counted(rep.total, "shot"), rep.failed, rep.failed_now.size(), job.folder);
    else if (root)
        spdlog::info("stopped after {} this run ({} of {} done); run the same command to resume", counted(rep.done_now, "shot"),
                     done, rep.total);
    // A signal first: a scheduler that requeues a job it stopped reads 128 + signal.
    return rep.signal ? 128 + rep.signal : rep.failed ? 3 : 0;
}

}  // namespace rtm::app
