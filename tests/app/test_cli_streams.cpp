// What rtm prints where, and what it makes of a command line: results and progress on
// stdout, warnings and errors on stderr, no colour codes off a terminal, --version,
// info --help, a forgotten --config, options a command does not use, and one INI file
// holding a modelling and a migration job.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include <nlohmann/json.hpp>

#include "run_rtm.h"
#include "support/catch.hpp"
#include "support/test_data.h"

using namespace rtm::test;
using Catch::Matchers::Contains;

namespace {

const std::string kModel = (source_dir() / "velocity_models" / "layers2d_vp.segy").string();

// One shot into 41 receivers over 0.3 s on the bundled 2D model (well under a second).
std::string small_model_job(const std::filesystem::path& dir, const std::string& extra = "") {
    return "model --model.vp " + kModel + " --acquisition.source-x0 1000 --acquisition.receiver-x0 500"
           " --acquisition.receiver-dx 50 --acquisition.receiver-nx 41 --acquisition.record-length 0.3"
           " --acquisition.record-dt 0.004 --propagation.device cpu --output.shots " + (dir / "shots.sgy").string() +
           " " + extra;
}

// An environment variable set for the rtm runs of one test, restored after it.
struct ScopedEnv {
    std::string name;
    ScopedEnv(const std::string& n, const std::string& value) : name(n) { setenv(n.c_str(), value.c_str(), 1); }
    ~ScopedEnv() { unsetenv(name.c_str()); }
};

}  // namespace

TEST_CASE("rtm model puts results and progress on stdout, warnings and errors on stderr") {
    const auto dir = scratch("cli-streams");
    // A 40 Hz Ricker (energy to 100 Hz) on the 10 m grid has fewer than 4 points per
    // shortest wavelength at the model's slowest velocity: the dispersion warning.
    const auto r = run_rtm_apart(small_model_job(dir, "--wavelet.ricker-f0 40"), dir / "stderr.txt");
    INFO("stdout:\n" << r.out << "stderr:\n" << r.err);
    REQUIRE(r.status == 0);
    CHECK_THAT(r.out, Contains("info") && Contains("done:") && Contains("wrote"));
    const std::string warning = "grid points per shortest wavelength";
    CHECK_THAT(r.err, Contains("warning") && Contains(warning));
    CHECK_THAT(r.out, !Contains("warning") && !Contains(warning));  // printed once, on stderr
    CHECK_THAT(r.err, !Contains("info"));

    const auto e = run_rtm_apart("model --model.vp " + (dir / "absent.sgy").string(), dir / "stderr.txt");
    INFO("stdout:\n" << e.out << "stderr:\n" << e.err);
    CHECK(e.status == 1);
    CHECK_THAT(e.err, Contains("error") && Contains("absent.sgy"));
    CHECK(e.out.empty());
}

TEST_CASE("no colour escape codes on stdout or stderr when they are not a terminal, even with a colour TERM") {
    const auto dir = scratch("cli-no-colour");
    const ScopedEnv term("TERM", "xterm-256color");  // so only "not a terminal" turns colours off
    // Info lines and a warning, then an error: every level that has a colour.
    const auto r = run_rtm_apart(small_model_job(dir, "--wavelet.ricker-f0 40"), dir / "stderr.txt");
    const auto e = run_rtm_apart("model --model.vp " + (dir / "absent.sgy").string(), dir / "stderr.txt");
    INFO("stdout:\n" << r.out << "stderr:\n" << r.err << e.err);
    CHECK_THAT(r.out, Contains("info"));
    CHECK_THAT(r.err, Contains("warning"));
    CHECK_THAT(e.err, Contains("error"));
    for (const std::string* text : {&r.out, &r.err, &e.out, &e.err}) CHECK(text->find('\x1b') == std::string::npos);
}

TEST_CASE("rtm --version and rtm version give the version, the git commit, CUDA and MPI") {
    const auto dir = scratch("cli-version");
    const auto r = run_rtm_apart("--version", dir / "stderr.txt");
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    CHECK_THAT(r.out, Contains(std::string("rtm ") + RTM_PROJECT_VERSION + "\n"));
    std::smatch commit;
    REQUIRE(std::regex_search(r.out, commit, std::regex("commit (\\S+)\n")));
    // From a git checkout, the commit git describe gives (hex digits, perhaps a tag before
    // them and -dirty after); "unknown" only outside one.
    if (std::filesystem::exists(source_dir() / ".git"))
        CHECK(std::regex_match(commit[1].str(), std::regex("([^ ]+-g)?[0-9a-f]{7,40}(-dirty)?")));
    else
        CHECK(commit[1] == "unknown");
    CHECK(std::regex_search(r.out, std::regex("CUDA: (built in \\(runtime [0-9]+\\.[0-9]+\\)|not built in)")));
    // The MPI library's own version string (MPI_Get_library_version), or one rank without it.
    CHECK(std::regex_search(r.out, std::regex("MPI: (MPI \\(.+\\)|no MPI \\(built without it: one rank\\))")));
    CHECK(run_rtm("version").output == r.out);
}

TEST_CASE("rtm info --help prints its usage and exits 0, an unknown option exits 2 naming it") {
    const auto dir = scratch("cli-info-help");
    const auto h = run_rtm_apart("info --help", dir / "stderr.txt");
    CHECK(h.status == 0);
    CHECK_THAT(h.out, Contains("usage: rtm info FILE.sgy"));
    CHECK(h.err.empty());
    const auto u = run_rtm_apart("info --bogus " + kModel, dir / "stderr.txt");
    CHECK(u.status == 2);
    CHECK_THAT(u.err, Contains("'--bogus'"));
}

TEST_CASE("a forgotten --config is named: rtm model job.ini asks whether --config job.ini was meant") {
    const auto dir = scratch("cli-forgot-config");
    const auto r = run_rtm_apart("model job.ini", dir / "stderr.txt");
    INFO(r.out << r.err);
    CHECK(r.status == 2);  // a usage error
    CHECK_THAT(r.err, Contains("Did you mean --config job.ini?"));
    const auto s = run_rtm_apart("migrate --config job.ini " + kModel, dir / "stderr.txt");
    INFO(s.out << s.err);
    CHECK(s.status == 2);
    CHECK_THAT(s.err, Contains(kModel) && Contains("is not an option"));
}

TEST_CASE("options a command does not have are refused naming them, from the command line and the INI file") {
    const auto dir = scratch("cli-unused-options");
    const auto err = dir / "stderr.txt";
    // Another command's option on the command line.
    auto r = run_rtm_apart(small_model_job(dir, "--migration.aperture 500"), err);
    CHECK(r.status == 2);  // usage errors, all
    CHECK_THAT(r.err, Contains("migration.aperture") && Contains("rtm model does not use it"));
    for (const std::string option : {"acquisition.source-x0", "model.born-dm"}) {  // Born modelling is rtm model's
        r = run_rtm_apart("migrate --" + option + " 5 --model.vp " + kModel, err);
        CHECK(r.status == 2);
        CHECK_THAT(r.err, Contains(option) && Contains("rtm migrate does not use it"));
    }
    // An option no command has, on the command line and in the file.
    r = run_rtm_apart(small_model_job(dir, "--wavelet.ricker-f00 12"), err);
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains("wavelet.ricker-f00") && Contains("unknown to rtm model"));
    const auto ini = dir / "typo.ini";
    std::ofstream(ini) << "[model]\nvp = " << kModel << "\n[migration]\naperturee = 500\n";
    r = run_rtm_apart("migrate --config " + ini.string(), err);
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Contains(ini.string()) && Contains("migration.aperturee"));
}

// README and every command's usage: exit status 2 on a usage error, 1 on any other.
TEST_CASE("a usage error exits 2 in every command: an unknown option, a value that does not parse, a value missing") {
    const auto dir = scratch("cli-usage-errors");
    const auto err = dir / "stderr.txt";
    const std::string ini = (dir / "job.ini").string();
    std::ofstream(ini) << "[wavelet]\nricker-f0 = ten\n";
    struct Case {
        std::string args, named;
    };
    for (const Case& c : {Case{"model --bogus", "bogus"}, Case{"migrate --bogus", "bogus"},
                          Case{"info --bogus " + kModel, "--bogus"}, Case{"bench --bogus", "--bogus"},
                          Case{"model --wavelet.ricker-f0 abc", "wavelet.ricker-f0"},
                          Case{"migrate --wavelet.ricker-f0 abc", "wavelet.ricker-f0"},
                          Case{"migrate --propagation.pml 1.5", "propagation.pml"},
                          Case{"model --config", "config"}, Case{"migrate --config", "config"},
                          Case{"migrate --config " + ini, "ricker-f0"}}) {
        const auto r = run_rtm_apart(c.args, err);
        INFO(c.args << "\n" << r.out << r.err);
        CHECK(r.status == 2);
        CHECK_THAT(r.err, Contains(c.named));
    }
    // Other errors stay 1: a value that parses but is wrong, a file that cannot be read.
    const auto pml = run_rtm_apart(small_model_job(dir, "--propagation.pml -1"), err);
    CHECK(pml.status == 1);
    CHECK_THAT(pml.err, Contains("option propagation.pml"));
    CHECK(run_rtm_apart("migrate --config " + (dir / "absent.ini").string(), err).status == 1);
}

TEST_CASE("a folder or a binary file given to --config is refused in a short message, not as an INI line of its bytes") {
    const auto dir = scratch("cli-config-not-ini");
    const auto err = dir / "stderr.txt";
    auto r = run_rtm_apart("migrate --config " + dir.string(), err);
    INFO(r.err);
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Contains(dir.string() + ": is a folder, not an INI configuration file"));
    r = run_rtm_apart("model --config " + kModel, err);
    INFO(r.err);
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Contains(kModel + ": is not an INI text file"));
    // It used to print the 3200-byte textual header as the invalid line.
    CHECK(r.err.size() < 3200);
}

TEST_CASE("one INI holds a modelling and a migration job: each command skips the other's options, saying so at debug level") {
    const auto dir = scratch("cli-shared-ini");
    const auto ini = dir / "job.ini";
    std::ofstream(ini) << "[model]\nvp = " << kModel << "\n"
                       << "[acquisition]\nsource-x0 = 1000\nreceiver-x0 = 500\nreceiver-dx = 50\nreceiver-nx = 41\n"
                          "record-length = 0.3\nrecord-dt = 0.004\n"
                       << "[propagation]\ndevice = cpu\n"
                       << "[data]\nshots = " << (dir / "shots.sgy").string() << "\n"
                       << "[migration]\naperture = 500\n"
                       << "[output]\nshots = " << (dir / "shots.sgy").string() << "\njob = " << (dir / "job").string() << "\n";
    const auto err = dir / "stderr.txt";
    // At the default level the skipping is silent.
    auto m = run_rtm_apart("model --config " + ini.string(), err);
    INFO(m.out << m.err);
    REQUIRE(m.status == 0);
    CHECK_THAT(m.out, !Contains("ignores"));
    {
        const ScopedEnv debug("SPDLOG_LEVEL", "debug");
        m = run_rtm_apart("model --config " + ini.string(), err);
        INFO(m.out << m.err);
        REQUIRE(m.status == 0);
        for (const char* key : {"data.shots", "migration.aperture", "output.job"})
            CHECK_THAT(m.out, Contains(std::string("rtm model ignores ") + key));
        CHECK_THAT(m.out, !Contains("ignores acquisition") && !Contains("ignores output.shots"));
        const auto g = run_rtm_apart("migrate --config " + ini.string(), err);
        INFO(g.out << g.err);
        REQUIRE(g.status == 0);
        for (const char* key : {"acquisition.source-x0", "acquisition.record-dt", "output.shots"})
            CHECK_THAT(g.out, Contains(std::string("rtm migrate ignores ") + key));
        CHECK_THAT(g.out, !Contains("ignores migration") && !Contains("ignores data"));
    }
    CHECK(std::filesystem::exists(dir / "job" / "image.sgy"));
    // data.shots on the command line replaces the INI file's, as every option does (it
    // used to be added to them: both files migrated into one image).
    std::filesystem::copy_file(dir / "shots.sgy", dir / "other.sgy");
    const auto o = run_rtm_apart("migrate --config " + ini.string() + " --data.shots " + (dir / "other.sgy").string() +
                                     " --output.job " + (dir / "job2").string() + " --dry-run",
                                 err);
    INFO(o.out << o.err);
    CHECK(o.status == 0);
    CHECK_THAT(o.out, Contains("other.sgy: 1 gather\n") && !Contains((dir / "shots.sgy").string()));
}

// RTM_TIMELINE (core/phases.h): the phases' spans as Chrome trace events, one per timed
// block, each within the run and on a thread; their sum per name is the summary's figure
// (both come from the same spans). An unwritable path is a warning naming the variable,
// the job's products written.
TEST_CASE("RTM_TIMELINE writes every phase's span as a Chrome trace event, and an unwritable one is a warning") {
    const auto dir = scratch("cli-timeline");
    const auto file = dir / "timeline.json";
    const auto r = run_rtm(small_model_job(dir), "RTM_TIMELINE=" + file.string() + " ");
    INFO(r.output);
    REQUIRE(r.status == 0);
    CHECK_THAT(r.output, Contains("wrote the timeline " + file.string()));
    std::ifstream in(file);
    const auto j = nlohmann::json::parse(in);
    const auto& events = j.at("traceEvents");
    REQUIRE(events.size() >= 4);
    std::map<std::string, double> seconds;
    for (const auto& e : events) {
        CHECK(e.at("ph") == "X");
        CHECK(e.at("ts").get<double>() >= 0);
        CHECK(e.at("dur").get<double>() >= 0);
        CHECK(e.at("tid").get<int>() >= 0);
        seconds[e.at("name").get<std::string>()] += e.at("dur").get<double>() / 1e6;
    }
    REQUIRE(seconds.count("propagation steps"));
    REQUIRE(seconds.count("write gathers"));
    // The summary prints each phase to 0.01 s: the same sum, rounded.
    std::smatch m;
    REQUIRE(std::regex_search(r.output, m, std::regex("propagation steps ([0-9.]+) s")));
    CHECK(std::abs(std::stod(m[1]) - seconds["propagation steps"]) <= 0.005 + 1e-9);

    const auto bad = run_rtm(small_model_job(dir), "RTM_TIMELINE=" + (dir / "absent" / "t.json").string() + " ");
    INFO(bad.output);
    CHECK(bad.status == 0);
    CHECK_THAT(bad.output, Contains("warning") && Contains("RTM_TIMELINE") && Contains("absent/t.json"));
    CHECK(std::filesystem::exists(dir / "shots.sgy"));
}
