#include "app/preflight.h"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>

#include <spdlog/spdlog.h>

#include "core/error.h"
#include "parallel/shot_groups.h"
#include "parallel/slab_layout.h"
#include "io/model_io.h"
#include "io/output_path.h"
#include "parallel/world.h"
#include "pipeline/migration_job.h"

namespace rtm::app {

namespace fs = std::filesystem;

namespace {

// SEG-Y keeps the samples per trace and the sample interval (microseconds) in unsigned
// 16-bit fields (binary header bytes 3221 and 3217, trace bytes 115 and 117).
constexpr int kSegyMaxField = 65535;

bool dry_run(const po::variables_map& vm, const std::vector<std::string>& plan) {
    for (const auto& line : plan) spdlog::info("{}", line);
    if (!vm["dry-run"].as<bool>()) return false;
    spdlog::info("dry run: the model, every shot's geometry and the output paths are checked; nothing was propagated");
    return true;
}

// Refuses a shot group whose ranks cannot share the shots' grid in z-slabs
// (parallel/slab_layout.h), before any propagation: every shot's box has the model's
// depth samples plus the absorbing layers (none on top under a free surface). Anisotropic
// slabs run without the Born operators (born: Born modelling or the born-adjoint
// condition asked for), as the slab propagator says.
void check_slabs(const Model& model, const PropagationOptions& prop, bool born) {
    const int per_shot = parallel::ShotGroups::get().per_shot();
    if (per_shot == 1) return;
    if (!model.extra.empty() && born)  // options that conflict: a usage error (exit 2)
        fail_usage("option parallel.ranks-per-shot",
             "is " + std::to_string(per_shot) + ": one shot of an anisotropic (VTI/TTI) model over several ranks "
             "has no Born modelling or born-adjoint condition yet",
             "Set parallel.ranks-per-shot = 1 for it");
    const int lo = prop.free_surface ? 0 : prop.pml_cells, hi = prop.pml_cells;
    parallel::slab_layout(model.grid().nz + lo + hi, lo, hi, prop.free_surface, per_shot);
}

}  // namespace

po::options_description plan_options() {
    po::options_description d("Plan");
    d.add_options()("dry-run", po::bool_switch(),
                    "print the plan, check every shot against the model and every output path, then stop");
    return d;
}


void check_inputs_kept(const po::options_description& desc, const po::variables_map& vm,
                       const std::vector<Product>& products) {
    for (const auto& [in, path] : input_files(desc, vm))
        for (const Product& p : products) {
            std::error_code ec;  // (a product that does not exist yet is no input)
            if (fs::equivalent(path, p.path, ec) && !ec)
                fail("option " + p.option,
                     "'" + p.path + "' is the file given as " + in + (path == p.path ? "" : " ('" + path + "')") +
                         ": rtm writes (or removes) it, which would lose that input",
                     "Give " + p.option + " another path, or move the input elsewhere");
        }
}

bool preflight_model(const po::variables_map& vm, const Model& model, const std::vector<ShotGather>& geometry,
                     const Wavelet& wavelet, const PropagationOptions& prop, bool born, const std::string& shots_out,
                     const std::string& preview_out) {
    const std::string source = vm.count("acquisition.geometry") ? vm["acquisition.geometry"].as<std::string>()
                                                                : std::string("options acquisition.*");
    const PlanShots shots{geometry.size(), [&](std::size_t k) -> const ShotGather& { return geometry[k]; },
                          [&](std::size_t) { return source; }};
    check_slabs(model, prop, born);
    const auto plan = plan_job(model, vm["model.vp"].as<std::string>(), shots, wavelet, prop, nullptr, born);
    io::check_output_path(shots_out, "output.shots", false);
    io::check_output_path(preview_out, "output.preview", false);
    const ShotGather& s = geometry.front();  // every shot's sampling is the first's (plan_job)
    const double us = s.dt * 1e6;
    if (std::abs(us - std::round(us)) > 1e-6 * us || std::round(us) < 1 || std::round(us) > kSegyMaxField)
        fail("option acquisition.record-dt",
             "a sample interval of " + std::to_string(us) + " us cannot be written to SEG-Y (whole microseconds, 1 to " +
                 std::to_string(kSegyMaxField) + ")",
             "Give a record interval of whole microseconds, e.g. 0.002");
    if (s.nt > kSegyMaxField)
        fail("option acquisition.record-length",
             std::to_string(s.nt) + " samples a trace, more than SEG-Y's " + std::to_string(kSegyMaxField),
             "Shorten the record or sample it coarser (acquisition.record-dt)");
    return dry_run(vm, plan);
}

namespace {

// A new job writes image.sgy and the rest into its folder and removes stale stack files
// there: a folder without a job (state.json) may hold other files (a log), not files of
// those names. (Its lock, and a state.json.tmp of a job killed before its state was first
// saved, are a job that never began.) Rank 0 alone looks, as it alone opens the folder:
// another rank looking later would find the job rank 0 has begun meanwhile.
void check_new_job_folder(const std::string& path) {
    parallel::World::get().on_root([&] {
        std::error_code ec;
        if (fs::exists(fs::path(path) / "state.json", ec)) return;
        for (const auto& f : job_files(path)) {
            const std::string name = fs::path(f).filename().string();
            // (state.json itself, now: another run began the job since the look above; its
            // lock refuses this run when it opens the folder.)
            if (name == "job.lock" || name == "state.json" || name == "state.json.tmp") continue;
            fail("option output.job", "'" + path + "' holds " + name + " but no job (no state.json): a new job would "
                                      "overwrite or remove it",
                 "Give output.job a new folder, or move " + f + " elsewhere");
        }
    });
}

}  // namespace

bool preflight_migrate(const po::variables_map& vm, const Model& model, const PlanShots& shots,
                       const Wavelet& wavelet, const MigrationOptions& migration, const std::string& job_folder) {
    check_slabs(model, migration.propagation, migration.condition == ImagingCondition::BornAdjoint);
    // (A CPU shot group images these conditions across its slabs' faces one shot at a
    // time: a batch's shots failed together mid-run and ran again alone.)
    if (parallel::ShotGroups::get().per_shot() > 1 && !migration.propagation.backend.gpu &&
        std::min<std::size_t>(std::size_t(std::max(0, migration.propagation.batch)), shots.count) > 1 &&
        migration.condition != ImagingCondition::CrossCorrelation)
        fail("option propagation.batch",
             "is " + std::to_string(migration.propagation.batch) + ": over z-slabs on the CPU, the inverse-scattering "
             "and born-adjoint conditions take one shot at a time",
             "Set propagation.batch = 1 (or 0) with parallel.ranks-per-shot above 1");
    const auto plan = plan_job(model, vm["model.vp"].as<std::string>(), shots, wavelet, migration.propagation, &migration);
    io::check_output_path(job_folder, "output.job", true);
    check_new_job_folder(job_folder);
    // A taper as long as a record leaves none of it at full strength.
    if (const double taper = end_taper_seconds(migration, wavelet); taper > 0)
        for (std::size_t i = 0; i < shots.count; ++i)
            if (const ShotGather& s = shots.geometry(i); taper >= (s.nt - 1) * s.dt)
                fail("option migration.end-taper",
                     fmt::format("{:g} s{} is as long as the record of shot {} in {} ({:g} s): the whole record "
                                 "would be tapered", taper,
                                 migration.end_taper < 0 ? " (auto: 1 / the wavelet's f-max)" : "", s.id,
                                 shots.source(i), (s.nt - 1) * s.dt),
                     "Give a taper shorter than the records (e.g. 0.04), or 0 for none");
    // A mute that leaves no sample of a shot at full strength (onset, window, taper: its
    // nearest receiver's data reach it only after the record's end) leaves its image zero
    // or nearly. Where every shot is so, so is the job's: refused. Where some are (far
    // shots of an ocean-bottom survey), said, with the first of them.
    if (migration.mute_direct) {
        std::size_t muted = 0, first = 0;
        double first_full = 0;
        for (std::size_t i = 0; i < shots.count; ++i) {
            const ShotGather& s = shots.geometry(i);
            const DirectMute mute(s, model, wavelet, migration.mute_after);
            double full = std::numeric_limits<double>::infinity();
            for (std::size_t r = 0; r < s.ntraces(); ++r) full = std::min(full, mute.start(s, r) + mute.taper);
            if (full >= (s.nt - 1) * s.dt && muted++ == 0) first = i, first_full = full;
        }
        if (muted > 0) {
            const ShotGather& s = shots.geometry(first);
            const DirectMute mute(s, model, wavelet, migration.mute_after);
            const std::string what = fmt::format(
                "its window of {:g} s{} after the direct wave's onset, and the {:.3g} s taper after it, leave no sample of "
                "{} at full strength (the first: shot {} in {}, whose nearest receiver's data would reach it at {:.3g} s, "
                "after its record's end at {:g} s)",
                mute.window, migration.mute_after >= 0 ? "" : " (true: the wavelet's length)", mute.taper,
                muted == shots.count ? std::string("any shot") : fmt::format("{} of the {} shots", muted, shots.count),
                s.id, shots.source(first), first_full, (s.nt - 1) * s.dt);
            if (muted == shots.count)
                fail("option migration.mute-direct", what + ": the image would be zero or nearly",
                     "Give a shorter window in seconds (e.g. 0.1), or false");
            parallel::World::get().on_root(
                [&] { spdlog::warn("option migration.mute-direct: {}: their images will be zero or nearly", what); });
        }
    }
    // The image and the illumination are written on the model's grid, after the last shot.
    io::volume_fields(model.grid(), "model.vp " + vm["model.vp"].as<std::string>() + " (the grid of image.sgy)");
    return dry_run(vm, plan);
}

}  // namespace rtm::app
