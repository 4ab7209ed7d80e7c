// rtm migrate: velocity model + recorded shots -> stacked depth image.
#include <charconv>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string_view>

#include <spdlog/spdlog.h>

#include "app/commands.h"
#include "app/config.h"
#include "app/job_options.h"
#include "core/error.h"
#include "core/host_memory.h"
#include "io/file_hash.h"
#include "io/shot_index.h"
#include "pipeline/migration_job.h"

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
    "state.json and the others go on; running the command again retries it.\n"
    "\n"
    "Exit status: 0 when every shot tried is done (or the run stopped at migration.max-shots),\n"
    "3 when the job holds failed shots (each with its reason in the log and state.json),\n"
    "128 + the signal when SIGINT or SIGTERM stopped it, failed shots or not (after the shot under way, with a\n"
    "checkpoint and the image: resume by running it again), 1 on an error that stops the\n"
    "job, 2 on a usage error.";

po::options_description data_options() {
    po::options_description d("Recorded data ([data] section)");
    d.add_options()
        ("data.shots", po::value<std::vector<std::string>>()->multitoken()->composing(),
         "SEG-Y shot files (repeat the option or list several); every gather is migrated");
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
         "propagations, little memory) or auto (snapshots when they fit the memory budget)")
        ("migration.bf16-snapshots", po::value<bool>()->default_value(false), "keep snapshots in bfloat16 (half the memory)")
        ("migration.memory-budget", po::value<double>()->default_value(4), "GB for the kept source wavefield of one shot")
        ("migration.condition", po::value<std::string>()->default_value("cross-correlation"),
         "imaging condition: cross-correlation, inverse-scattering (energy norm: suppresses "
         "low-wavenumber backscatter) or born-adjoint (the exact adjoint of Born modelling)")
        ("migration.mute-direct", po::value<bool>()->default_value(false),
         "zero the data before the direct arrival (at the source's velocity) plus the wavelet's length")
        ("migration.rho-filter", po::value<bool>()->default_value(true),
         "-d/dt on the data, so reflectors image zero-phase at their depth with positive polarity "
         "where impedance increases downward")
        ("migration.normalise", po::value<bool>()->default_value(true), "divide the stack by the source illumination")
        ("migration.laplacian", po::value<bool>()->default_value(true), "apply -Laplacian to the stack (removes low-wavenumber noise)")
        ("migration.checkpoint-minutes", po::value<double>()->default_value(5),
         "minutes between checkpoints of the job folder (raw stack and state, after the shot that "
         "crosses the time; 0: after every shot); a run always checkpoints at its end")
        ("migration.max-shots", po::value<int>()->default_value(-1), "migrate at most this many shots in this run, then stop (resume later)");
    return d;
}

po::options_description output_options() {
    po::options_description d("Output ([output] section)");
    d.add_options()("output.job", po::value<std::string>()->default_value("migration"), "job folder (state, stack, image, previews)");
    return d;
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
    else fail("option migration.storage", "unknown value '" + st + "'", "Use auto, snapshots or boundary");
    m.bf16_snapshots = vm["migration.bf16-snapshots"].as<bool>();
    m.memory_budget = vm["migration.memory-budget"].as<double>() * 1e9;
    if (!(m.memory_budget > 0)) fail("option migration.memory-budget", "must be positive", "Give gigabytes, e.g. 4");
    const std::string c = vm["migration.condition"].as<std::string>();
    if (c == "cross-correlation") m.condition = ImagingCondition::CrossCorrelation;
    else if (c == "inverse-scattering") m.condition = ImagingCondition::InverseScattering;
    else if (c == "born-adjoint") m.condition = ImagingCondition::BornAdjoint;
    else fail("option migration.condition", "unknown value '" + c + "'", "Use cross-correlation, inverse-scattering or born-adjoint");
    m.mute_direct = vm["migration.mute-direct"].as<bool>();
    m.rho_filter = vm["migration.rho-filter"].as<bool>();
    return m;
}

// Everything that changes the image, for the job folder's fingerprint: the options,
// the backend that runs (whatever propagation.device said) and the content of every
// input file.
JobFingerprint settings_of(const po::variables_map& vm, const std::vector<std::string>& files, const Backend& backend) {
    std::ostringstream os;
    for (const auto& [key, value] : vm) {
        if (key == "config" || key == "output.job" || key == "migration.max-shots" ||
            key == "migration.checkpoint-minutes" || key == "propagation.device" || key == "propagation.threads")
            continue;
        os << key << "=";
        const auto& v = value.value();
        if (auto s = boost::any_cast<std::string>(&v)) os << *s;
        else if (auto d = boost::any_cast<double>(&v)) {
            // The shortest text that reads back as the same double: distinct values stay
            // distinct, and the error that names a changed setting reads as the user wrote it.
            char buf[32];
            os << std::string_view(buf, std::to_chars(buf, buf + sizeof buf, *d).ptr - buf);
        }
        else if (auto i = boost::any_cast<int>(&v)) os << *i;
        else if (auto b = boost::any_cast<bool>(&v)) os << *b;
        else if (auto l = boost::any_cast<std::vector<std::string>>(&v))
            for (const auto& x : *l) os << x << ",";
        os << ";";
    }
    os << "backend=" << (backend.gpu ? "gpu" : "cpu") << ";";
    JobFingerprint fp;
    fp.settings = os.str();
    // Replacing an input under the same name (even by one of the same size) must not
    // resume into a stack of two models or two data sets.
    std::vector<std::string> inputs = files;
    for (const char* k : {"model.vp", "wavelet.file"})
        if (vm.count(k)) inputs.push_back(vm[k].as<std::string>());
    for (const auto& f : inputs) fp.inputs.emplace_back(f, io::content_hash(f));
    return fp;
}

}  // namespace

po::options_description migrate_command_options() {
    po::options_description desc;
    desc.add(model_options()).add(data_options()).add(wavelet_options()).add(propagation_options())
        .add(migration_options()).add(output_options());
    return desc;
}

int cmd_migrate(int argc, char** argv) {
    po::options_description desc = migrate_command_options();
    po::variables_map vm;
    if (!parse_options(argc, argv, kUsage, desc, model_command_options(), vm)) return 0;

    const Model model = load_model(vm);
    refuse_anisotropy(model, "migration");
    if (!vm.count("data.shots")) fail("option data.shots", "no shot files given", "Set [data] shots = FILE.sgy");
    const auto files = vm["data.shots"].as<std::vector<std::string>>();
    for (std::size_t i = 0; i < files.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (std::filesystem::exists(files[i]) && std::filesystem::exists(files[j]) &&
                std::filesystem::equivalent(files[i], files[j]))
                fail("option data.shots", files[i] + " is given twice (its shots would be stacked twice)",
                     "List each shot file once (the command line adds to the config file's list)");
    // Every file indexed (trace headers only, checked now); a gather's samples are read
    // when its turn comes.
    std::vector<io::ShotIndex> indexes;
    std::vector<JobShot> names;
    std::vector<std::pair<std::size_t, std::size_t>> where;  // index and gather of each job shot
    for (const auto& f : files) {
        const io::ShotIndex& index = indexes.emplace_back(f);
        spdlog::info("shots {}: {} gathers", f, index.size());
        for (std::size_t k = 0; k < index.size(); ++k) {
            names.push_back({f, index.geometry(k).id});
            where.emplace_back(indexes.size() - 1, k);
        }
    }
    if (names.empty()) fail(files.front(), "holds no shot gathers", "Check the data.shots files");
    const auto load_shot = [&](std::size_t i) { return indexes[where[i].first].load(where[i].second); };
    const Wavelet wavelet = load_wavelet(vm);

    MigrationJobOptions job;
    job.folder = vm["output.job"].as<std::string>();
    job.migration = migration_from(vm);
    // Checked before any shot (from the first gather's headers): an imaging interval
    // beyond the record would fail every shot alike.
    imaging_interval(job.migration, wavelet,
                     time_axis(model, indexes[where[0].first].geometry(where[0].second), wavelet,
                               job.migration.propagation));
    job.post.normalise = vm["migration.normalise"].as<bool>();
    job.post.laplacian = vm["migration.laplacian"].as<bool>();
    job.checkpoint_minutes = vm["migration.checkpoint-minutes"].as<double>();
    if (!(job.checkpoint_minutes >= 0))
        fail("option migration.checkpoint-minutes", "must be 0 or more minutes", "Give minutes, e.g. 5 (0: after every shot)");
    job.max_shots = vm["migration.max-shots"].as<int>();
    const JobReport rep = run_migration_job(model, names, load_shot, wavelet, job,
                                            settings_of(vm, files, job.migration.propagation.backend));
    spdlog::info("peak host memory {:.1f} MB (VmHWM; docs/memory.md)", peak_host_bytes() / 1e6);
    for (const auto& p : rep.outputs) spdlog::info("wrote {}", p);
    for (const auto& f : rep.failed_now) spdlog::error("shot {} from {} failed: {}", f.shot.id, f.shot.file, f.reason);
    if (rep.complete) {
        spdlog::info("done: {} shots stacked", rep.total);
        return 0;
    }
    const int done = rep.done_before + rep.done_now;
    if (rep.failed)
        spdlog::error("{} of {} shots done, {} failed ({} in this run; reasons above and in {}/state.json): fix what "
                      "they say and run the same command to retry them",
                      done, rep.total, rep.failed, rep.failed_now.size(), job.folder);
    else
        spdlog::info("stopped after {} shots this run ({} of {} done); run the same command to resume", rep.done_now,
                     done, rep.total);
    // A signal first: a scheduler that requeues a job it stopped reads 128 + signal.
    return rep.signal ? 128 + rep.signal : rep.failed ? 3 : 0;
}

}  // namespace rtm::app
