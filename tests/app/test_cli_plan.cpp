// The plan before the work (issue 9, items 1 and 2): rtm model and rtm migrate print
// what they will do, refuse what cannot run (naming the option or file) before anything
// large is allocated, check every shot and every output path before the first
// propagation, and stop after the plan with --dry-run.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>

#include "cli_models.h"
#include "io/model_io.h"
#include "io/shot_io.h"
#include "run_rtm.h"
#include "support/catch.hpp"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

const std::string kModel = (source_dir() / "velocity_models" / "layers2d_vp.segy").string();
const std::string kSmooth = (source_dir() / "velocity_models" / "layers2d_vp_smooth.segy").string();

// "--key value" options with those of `extra` replacing the same keys of `base`
// (rtm refuses an option given twice); a key without a value is a switch.
std::string options(const std::string& base, const std::string& extra) {
    std::vector<std::pair<std::string, std::string>> kv;
    for (const std::string& text : {base, extra}) {
        std::istringstream in(text);
        std::vector<std::string> words{std::istream_iterator<std::string>(in), {}};
        for (std::size_t i = 0; i < words.size();) {
            const std::string key = words[i++];
            const std::string value = i < words.size() && words[i].rfind("--", 0) != 0 ? words[i++] : "";
            auto it = std::find_if(kv.begin(), kv.end(), [&](const auto& p) { return p.first == key; });
            if (it != kv.end()) it->second = value;
            else kv.emplace_back(key, value);
        }
    }
    std::string out;
    for (const auto& [k, v] : kv) out += " " + k + (v.empty() ? "" : " " + v);
    return out;
}

// A small modelling job on the bundled 2D model (x from world X = 1000 m, 4 km long):
// 2 shots, 41 receivers, 0.3 s records at 4 ms.
std::string model_job(const fs::path& dir, const std::string& extra = "") {
    return "model" + options("--model.vp " + kModel + " --acquisition.source-x0 1000 --acquisition.source-dx 1000"
                             " --acquisition.source-nx 2 --acquisition.receiver-x0 500 --acquisition.receiver-dx 50"
                             " --acquisition.receiver-nx 41 --acquisition.record-length 0.3 --acquisition.record-dt 0.004"
                             " --propagation.device cpu --output.shots " + (dir / "shots.sgy").string(),
                             extra);
}

// Two gathers over the bundled 2D model (its line runs along world X from 1000 m at
// Y = 0): 21 channels, `nt` samples at `dt`; the second gather at world Y = `y2`.
std::string shots_file(const fs::path& dir, int nt, double dt, double y2 = 0) {
    std::vector<ShotGather> shots(2);
    for (int k = 0; k < 2; ++k) {
        ShotGather& g = shots[k];
        g.id = k + 1, g.nt = nt, g.dt = dt;
        const double y = k == 1 ? y2 : 0;
        g.source = {1800.0 + 400 * k, y, 10};
        for (int r = 0; r < 21; ++r) g.receivers.push_back({1500.0 + 50 * r, y, 10});
        g.data.assign(21 * std::size_t(nt), 0.f);
    }
    const std::string path = (dir / "shots.sgy").string();
    io::write_shots(path, shots);
    return path;
}

std::string migrate_job(const std::string& shots, const fs::path& dir, const std::string& extra = "") {
    return "migrate" + options("--model.vp " + kSmooth + " --data.shots " + shots +
                               " --propagation.device cpu --output.job " + (dir / "job").string(),
                               extra);
}

// Seconds a command takes: every refusal here comes before any allocation or
// propagation, in well under the time the work would take.
template <class F>
double seconds_of(F&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Every name under `dir`, to see that a dry run leaves nothing behind.
std::vector<std::string> names_under(const fs::path& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir)) out.push_back(e.path().string());
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

TEST_CASE("rtm model --dry-run prints the plan (grid, dt and why, steps, shots, memory, time) and writes nothing", "[plan]") {
    const auto dir = scratch("cli-plan-model");
    const auto r = run_rtm(model_job(dir, "--dry-run"));
    INFO(r.output);
    CHECK(r.status == 0);
    // The bundled model: 401 x 151 nodes; 20 C-PML cells a side: 441 x 191 = 84231 points.
    CHECK_THAT(r.output, Contains("plan: grid 401 x 1 x 151 + 20 C-PML cells a side = 84231 points"));
    // v_max 4400 m/s at 10 m: dt_max = 0.5547... * 10 / 4400 ~ 1.26 ms; 80% of it is 1.01 ms,
    // so the largest divisor of 4 ms below it is 1 ms: 300 steps for 0.3 s, plus the
    // time-dispersion margin.
    CHECK_THAT(r.output, Contains("plan: dt 1 ms (the largest divisor of the 4 ms record interval"));
    CHECK_THAT(r.output, Contains("for the 0.3 s record"));
    CHECK_THAT(r.output, Contains("plan: 2 shots, up to 41 receivers each"));
    CHECK_THAT(r.output, Contains("plan: memory per shot:") && Contains("a rank may hold "));
    CHECK_THAT(r.output, Contains("plan: estimated time"));
    CHECK_THAT(r.output, Contains("dry run"));
    CHECK_FALSE(fs::exists(dir / "shots.sgy"));
    CHECK_FALSE(fs::exists(dir / "shots.png"));
}

TEST_CASE("rtm migrate --dry-run prints the plan with the source-wavefield storage and starts no job", "[plan]") {
    const auto dir = scratch("cli-plan-migrate");
    const std::string shots = shots_file(dir, 200, 0.004);
    auto r = run_rtm(migrate_job(shots, dir, "--dry-run"));
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Contains("plan: largest shot window") && Contains("damping cells a side"));
    CHECK_THAT(r.output, Contains("plan: source wavefield: snapshots") && Contains("imaging every"));
    CHECK_THAT(r.output, Contains("plan: estimated time") && Contains("2 propagations a shot"));
    CHECK_FALSE(fs::exists(dir / "job" / "state.json"));
    // A budget below the snapshots and the band (1 MB): checkpoints, the source recomputed
    // (pipeline/memory_plan.h), more than two propagations.
    r = run_rtm(migrate_job(shots, dir, "--dry-run --migration.memory-budget 0.001"));
    CHECK_THAT(r.output, Contains("plan: source wavefield: checkpoints") && Contains("propagations a shot"));
    CHECK(r.output.find("2 propagations a shot") == std::string::npos);
    // Below one checkpoint: refused, advising another storage only where one was chosen
    // (auto and checkpoints hold the least already).
    for (const char* storage : {"auto", "checkpoints", "snapshots"}) {
        r = run_rtm(migrate_job(shots, dir, "--dry-run --migration.memory-budget 1e-9 --migration.storage " + std::string(storage)));
        INFO(storage << ": " << r.output);
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains("option migration.memory-budget: a shot of this job cannot keep its source "
                                      "wavefield in the budget of 1e-09 GB"));
        CHECK(contains(r.output, "use migration.storage auto or checkpoints") == (std::string(storage) == "snapshots"));
    }
}

TEST_CASE("a time step that plans more steps than can run is refused at once, naming propagation.dt", "[plan]") {
    const auto dir = scratch("cli-plan-dt");
    Result r;
    const double s = seconds_of([&] { r = run_rtm(model_job(dir, "--propagation.dt 1e-9")); });
    INFO(r.output);
    CHECK(r.status == 1);
    // 0.3 s / 1e-9 s = 3e8 steps, beyond kMaxSteps (1e7).
    CHECK_THAT(r.output, Contains("option propagation.dt") && Contains("3e+08 time steps") && Contains("cannot run"));
    CHECK(s < 20);
}

TEST_CASE("a record length that overflows the sample count is refused naming acquisition.record-length", "[plan]") {
    const auto dir = scratch("cli-plan-length");
    const auto r = run_rtm(model_job(dir, "--acquisition.record-length 1e9"));
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("option acquisition.record-length") && Contains("more than a trace can hold"));
    CHECK_THAT(r.output, !Contains("-2147483647"));
}

TEST_CASE("velocities outside a plausible m/s range are refused naming the file and node, km/s with a hint", "[plan]") {
    const auto dir = scratch("cli-plan-velocity");
    Volume fast = constant_model(60, 30, 10, 2000.f);
    fast.at(30, 0, 15) = 1e9f;
    const std::string fast_path = (dir / "fast.sgy").string();
    io::write_volume(fast_path, fast);
    const std::string geometry = " --acquisition.source-x0 100 --acquisition.receiver-x0 0 --acquisition.receiver-dx 10"
                                 " --acquisition.receiver-nx 50 --acquisition.record-length 0.3 --propagation.device cpu"
                                 " --output.shots " + (dir / "s.sgy").string();
    Result r;
    const double s = seconds_of([&] { r = run_rtm("model --model.vp " + fast_path + geometry); });
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains(fast_path) && Contains("node (ix 30, iy 0, iz 15") && Contains("1e+09 m/s") &&
                             Contains("outside the plausible 300 to 1.5e+04 m/s"));
    CHECK(s < 20);

    const std::string kms_path = (dir / "kms.sgy").string();
    io::write_volume(kms_path, constant_model(60, 30, 10, 2.5f));
    r = run_rtm("model --model.vp " + kms_path + geometry);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains(kms_path) && Contains("look like km/s") && Contains("Multiply the model by 1000"));
}

// A refusal of a plan beyond the host memory: it names the machine's, or a limit tighter
// than it where the tests run in one (a container's cgroup, ulimit -v).
bool beyond_host_memory(const std::string& out) {
    for (const char* held : {"more than this machine's", "more than the cgroup's limit", "more than the address-space limit"})
        if (out.find(held) != std::string::npos) return true;
    return false;
}

TEST_CASE("plans beyond the machine's memory are refused before allocating, naming what sets them", "[plan]") {
    const auto dir = scratch("cli-plan-memory");
    struct Case {
        std::string args, names;
    };
    const Case cases[] = {
        // 1e8 receivers: 2.8 GB of positions and channels plus 76 samples each (30 GB).
        {"--acquisition.receiver-nx 100000000", "acquisition.receiver-nx"},
        // 1e7-sample records of 41 receivers at 0.1 ms: a trace alone is 40 MB, the
        // traces at the step 41 x 1e7 x 8 B = 3.3 GB; with 2000 receivers 160 GB.
        {"--acquisition.record-dt 0.0001 --acquisition.record-length 999 --acquisition.receiver-nx 2000",
         "acquisition.receiver-nx"},
        // 100 000 absorbing cells a side: (401 + 2e5) x (151 + 2e5) points, 4e10 x 28 B.
        {"--propagation.pml 100000", "propagation.pml"},
    };
    for (const auto& c : cases) {
        Result r;
        const double s = seconds_of([&] { r = run_rtm(model_job(dir, c.args)); });
        INFO(c.args << "\n" << r.output);
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains(c.names));
        CHECK(beyond_host_memory(r.output));
        CHECK_THAT(r.output, !Contains("bad_alloc"));
        CHECK(s < 20);
    }
    const auto r = run_rtm(model_job(dir, "--wavelet.ricker-f0 1e-6"));
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("option wavelet.ricker-f0") && Contains("longer than any seismic record"));
    // Migration's automatic memory budget is what the propagation's arrays leave (none
    // here): the layers that set their size are named, not the budget.
    const auto m = run_rtm(migrate_job(shots_file(dir, 200, 0.004), dir, "--propagation.pml 100000 --dry-run"));
    INFO(m.output);
    CHECK(m.status == 1);
    CHECK_THAT(m.output, Contains("propagation.pml") && !Contains("migration.memory-budget"));
    CHECK(beyond_host_memory(m.output));
}

TEST_CASE("shots whose records cannot hold a reflection are refused naming the file, shot and header fields", "[plan]") {
    const auto dir = scratch("cli-plan-record");
    // 200 samples at 1 us: 0.2 ms of record, against one period of f_max = 2.5 x 10 Hz (40 ms).
    auto r = run_rtm(migrate_job(shots_file(dir, 200, 1e-6), dir));
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains((dir / "shots.sgy").string() + ": shot 1") && Contains("200 samples at 1 us") &&
                             Contains("trace byte 117"));
    CHECK_FALSE(fs::exists(dir / "job" / "state.json"));
    // Two samples at 4 ms: a 4 ms record.
    const auto dir2 = scratch("cli-plan-record2");
    r = run_rtm(migrate_job(shots_file(dir2, 2, 0.004), dir2));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("shot 1") && Contains("2 samples at 4000 us") && Contains("nothing could be imaged"));
}

TEST_CASE("a velocity model given as the shots file is refused, saying so", "[plan]") {
    const auto dir = scratch("cli-plan-model-as-shots");
    const auto r = run_rtm(migrate_job(kModel, dir));
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains(kModel) && Contains("A velocity model given as the shots file looks like this") &&
                             Contains("model.vp"));
}

TEST_CASE("shots 5 km off a 2D model's line are refused before the first shot, naming the file and shot", "[plan]") {
    const auto dir = scratch("cli-plan-offline");
    const auto r = run_rtm(migrate_job(shots_file(dir, 200, 0.004, 5000), dir));
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains((dir / "shots.sgy").string() + ": shot 2 source") &&
                             Contains("lies 5000 m off the 2D model's line"));
    CHECK_FALSE(fs::exists(dir / "job" / "state.json"));  // before any shot
}

TEST_CASE("every shot's geometry is checked before the first propagation", "[plan]") {
    const auto dir = scratch("cli-plan-geometry");
    // The second source at x = 5000 m lies past the model's 4000 m.
    auto r = run_rtm(model_job(dir, "--acquisition.source-dx 4000"));
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("shot 2 source") && Contains("lies outside the model"));
    CHECK_THAT(r.output, !Contains("modelling 2 shots"));  // said just before propagating
    CHECK_FALSE(fs::exists(dir / "shots.sgy"));
}

TEST_CASE("output paths are checked before the work: not under a file, not a folder, within SEG-Y's limits", "[plan]") {
    const auto dir = scratch("cli-plan-outputs");
    std::ofstream(dir / "afile") << "x";
    auto r = run_rtm(model_job(dir, "--output.shots " + (dir / "afile" / "s.sgy").string()));
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("option output.shots") && Contains("is a file"));
    CHECK_THAT(r.output, !Contains("modelling 2 shots"));

    fs::create_directories(dir / "afolder");
    r = run_rtm(model_job(dir, "--output.shots " + (dir / "afolder").string() + " --output.preview " +
                                   (dir / "p.png").string()));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("option output.shots") && Contains("is a folder, not a file"));

    const std::string shots = shots_file(dir, 200, 0.004);
    r = run_rtm(migrate_job(shots, dir, "--output.job " + (dir / "afile").string()));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("option output.job") && Contains("is a file, not a folder"));

    // 70 s at 1 ms: 70001 samples, beyond SEG-Y's 65535.
    r = run_rtm(model_job(dir, "--acquisition.record-length 70 --acquisition.record-dt 0.001 --acquisition.receiver-nx 2"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("option acquisition.record-length") && Contains("70001 samples") &&
                             Contains("SEG-Y's 65535"));
    // Half a microsecond cannot be written in SEG-Y's whole microseconds.
    r = run_rtm(model_job(dir, "--acquisition.record-dt 0.0000005 --acquisition.record-length 0.1"));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("option acquisition.record-dt") && Contains("whole microseconds"));
}

TEST_CASE("a dry run checks the output paths as the run does: a folder that takes no new file is refused, and "
          "nothing is left behind", "[plan]") {
    const auto dir = scratch("cli-plan-dry-outputs");
    const std::string shots = shots_file(dir, 200, 0.004);
    // /proc takes no new entry, whoever asks (root passes every permission test).
    for (const std::string dry : {" --dry-run", ""}) {
        auto r = run_rtm(model_job(dir, "--output.shots /proc/rtm-test.sgy" + dry));
        INFO(r.output);
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains("option output.shots: '/proc/rtm-test.sgy' cannot be written"));
        r = run_rtm(migrate_job(shots, dir, "--output.job /proc/rtm-test-job" + dry));
        INFO(r.output);
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains("option output.job: '/proc/rtm-test-job' cannot be written"));
    }
    const auto before = names_under(dir);
    const auto r = run_rtm(migrate_job(shots, dir, "--output.job " + (dir / "new" / "job").string() + " --dry-run"));
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK(names_under(dir) == before);
}

TEST_CASE("the plan and the shot count one checkpoint alike: a budget the dry run passes runs, one it refuses would fail", "[plan]") {
    // A small 3D window (aperture 50 m on the 25 m dome: 5 x 5 nodes + 8 layers a side),
    // where the padded box the propagator holds (halos of 4, rows of 32 values) is about
    // twice the computed points: the plan counted the points, planned one checkpoint at
    // half its size, and passed budgets with which every shot then failed.
    const auto dir = scratch("cli-plan-checkpoint-3d");
    const std::string dome = (source_dir() / "velocity_models" / "dome3d_vp.segy").string();
    const std::string shot = (dir / "shot.sgy").string();
    const auto m = run_rtm("model --model.vp " + dome + " --propagation.pml 8 --acquisition.source-x0 1000"
                           " --acquisition.source-y0 750 --acquisition.source-depth 30 --acquisition.receiver-x0 950"
                           " --acquisition.receiver-dx 25 --acquisition.receiver-nx 5 --acquisition.receiver-y0 750"
                           " --acquisition.receiver-depth 30 --acquisition.record-length 0.2 --wavelet.ricker-f0 8"
                           " --propagation.device cpu --propagation.threads 1 --output.shots " + shot);
    INFO(m.output);
    REQUIRE(m.status == 0);
    const auto migrate = [&](const std::string& job, const std::string& extra) {
        return run_rtm("migrate --model.vp " + dome + " --data.shots " + shot + " --wavelet.ricker-f0 8 --propagation.pml 8"
                       " --migration.aperture 50 --propagation.device cpu --propagation.threads 1"
                       " --migration.storage checkpoints --output.job " + (dir / job).string() + " " + extra);
    };
    // The refusal names one checkpoint's size (3 significant digits).
    auto r = migrate("tiny", "--dry-run --migration.memory-budget 1e-9");
    INFO(r.output);
    REQUIRE(r.status == 1);
    const std::string key = "one checkpoint ";
    const auto at = r.output.find(key);
    REQUIRE(at != std::string::npos);
    const double state_gb = std::stod(r.output.substr(at + key.size()));
    REQUIRE(state_gb > 0);
    // 2% either side of it, beyond the 0.5% of its printed digits: the plan refuses
    // below and passes above, and the shot that the plan passed runs.
    const auto budget = [](double gb) {
        char text[32];
        std::snprintf(text, sizeof text, "%.6g", gb);
        return "--migration.memory-budget " + std::string(text);
    };
    r = migrate("below", "--dry-run " + budget(0.98 * state_gb));
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("cannot keep its source wavefield"));
    r = migrate("above-dry", "--dry-run " + budget(1.02 * state_gb));
    CHECK(r.status == 0);
    r = migrate("above", budget(1.02 * state_gb));
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Contains("done: 1 shot stacked"));
}

TEST_CASE("receivers outside the model: refused by default, naming the option that drops them, and dropped they give the image of a file without them", "[plan]") {
    const auto dir = scratch("cli-plan-receivers-outside");
    // Two gathers, 21 receivers from world X `x0` every 50 m (the model's line starts at
    // X = 1000 m), a spike on each trace; `keep` chooses the receivers written.
    const auto write = [&](const std::string& name, double x0, auto keep) {
        std::vector<ShotGather> shots(2);
        for (int k = 0; k < 2; ++k) {
            ShotGather& g = shots[k];
            g.id = k + 1, g.nt = 200, g.dt = 0.004;
            g.source = {1800.0 + 400 * k, 0, 10};
            std::vector<int> spikes;  // receiver r's at sample 60 + 2 r
            for (int r = 0; r < 21; ++r)
                if (keep(x0 + 50 * r)) {
                    g.receivers.push_back({x0 + 50 * r, 0, 10});
                    g.channels.push_back(r + 1);
                    spikes.push_back(60 + 2 * r);
                }
            g.data.assign(g.receivers.size() * 200, 0.f);
            for (std::size_t r = 0; r < g.receivers.size(); ++r) g.trace(r)[spikes[r]] = 1.f;
        }
        const std::string path = (dir / name).string();
        io::write_shots(path, shots);
        return path;
    };
    // Receivers 800 .. 1800 m: the first four (800 .. 950 m) lie before the model's line.
    const std::string all = write("all.sgy", 800, [](double) { return true; });
    const std::string inside = write("inside.sgy", 800, [](double x) { return x >= 1000; });
    const std::string fast = " --migration.aperture 200 --migration.image-every 4";
    for (const char* job : {"refused", "dropped", "without", "none", "typo"}) fs::create_directories(dir / job);

    auto r = run_rtm(migrate_job(all, dir / "refused", fast));
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains(all + ": shot 1 receiver 1") && Contains("lies outside the model") &&
                             Contains("data.receivers-outside drop"));

    r = run_rtm(migrate_job(all, dir / "dropped", fast + " --data.receivers-outside drop"));
    INFO(r.output);
    REQUIRE(r.status == 0);
    CHECK_THAT(r.output, Contains("shots " + all + ": 8 of its 42 traces: receivers outside the model, left out"));
    const auto without = run_rtm(migrate_job(inside, dir / "without", fast));
    INFO(without.output);
    REQUIRE(without.status == 0);
    // The same image, bit for bit: the dropped traces are as if the file had not held them.
    CHECK(io::read_volume((dir / "dropped" / "job" / "image.sgy").string()).data ==
          io::read_volume((dir / "without" / "job" / "image.sgy").string()).data);

    // A gather whose every receiver lies outside is refused, naming it; an unknown choice
    // is a usage error.
    const std::string none = write("none.sgy", -2000, [](double) { return true; });
    r = run_rtm(migrate_job(none, dir / "none", fast + " --data.receivers-outside drop"));
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains(none + ": shot 1") && Contains("every receiver lies outside the model"));
    r = run_rtm(migrate_job(all, dir / "typo", fast + " --data.receivers-outside skip"));
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Contains("data.receivers-outside") && Contains("Use refuse or drop"));
}
