// CPU threads on shared machines (issue 9, item 7) and `rtm bench`'s default device and
// ceiling (item 8), from the command line.
#include <sched.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_rtm.h"
#include "support/catch.hpp"
#include "support/test_data.h"

using namespace rtm::test;
using Catch::Matchers::Contains;

namespace {

// Sets (or, with nullptr, removes) environment variables for the rtm runs of one test
// and puts back what was there.
class Env {
public:
    void set(const char* name, const char* value) {
        const char* old = std::getenv(name);
        saved_.push_back({name, old ? std::string(old) : std::string(), old != nullptr});
        if (value) setenv(name, value, 1);
        else unsetenv(name);
    }
    ~Env() {
        for (auto it = saved_.rbegin(); it != saved_.rend(); ++it)
            if (it->had) setenv(it->name.c_str(), it->value.c_str(), 1);
            else unsetenv(it->name.c_str());
    }

private:
    struct Saved {
        std::string name, value;
        bool had;
    };
    std::vector<Saved> saved_;
};

// One 0.1 s shot on the bundled 2D model, on the CPU: about a second.
std::string tiny_model(const std::string& name, const std::string& extra = "") {
    const auto dir = scratch(name);
    return "model --model.vp " + (source_dir() / "velocity_models" / "layers2d_vp.segy").string() +
           " --acquisition.source-x0 1000 --acquisition.source-nx 1 --acquisition.receiver-x0 500"
           " --acquisition.receiver-dx 50 --acquisition.receiver-nx 11 --acquisition.record-length 0.1"
           " --acquisition.record-dt 0.004 --propagation.device cpu --output.shots " +
           (dir / "shots.sgy").string() + " " + extra;
}

// The value libgomp printed last for `name` under OMP_DISPLAY_ENV=verbose ("  NAME = 'V'"):
// the last is the process that ran the job (an earlier one may have executed rtm again).
std::string last_displayed(const std::string& output, const std::string& name) {
    const auto at = output.rfind("  " + name + " = '");
    if (at == std::string::npos) return "";
    const auto from = at + name.size() + 6;
    return output.substr(from, output.find('\'', from) - from);
}

int affinity_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    REQUIRE(sched_getaffinity(0, sizeof set, &set) == 0);
    return CPU_COUNT(&set);
}

}  // namespace

TEST_CASE("rtm runs OpenMP with the passive wait policy unless the user set one") {
    Env env;
    env.set("OMP_DISPLAY_ENV", "verbose");  // libgomp prints the settings it read at start
    env.set("GOMP_SPINCOUNT", nullptr);
    env.set("OMP_NUM_THREADS", nullptr);
    SECTION("not set: libgomp of the working process spins 0 times, as OMP_WAIT_POLICY=passive makes it") {
        env.set("OMP_WAIT_POLICY", nullptr);
        const auto r = run_rtm(tiny_model("threads-passive"));
        INFO(r.output);
        REQUIRE(r.status == 0);
        // libgomp's default is 300000 spins (its manual, GOMP_SPINCOUNT): 0 proves the
        // policy reached libgomp, which a setenv inside main would not.
        CHECK(last_displayed(r.output, "GOMP_SPINCOUNT") == "0");
        CHECK_THAT(r.output, Contains("OpenMP wait policy passive"));
    }
    SECTION("the user's choice stays") {
        env.set("OMP_WAIT_POLICY", "active");
        const auto r = run_rtm(tiny_model("threads-active"));
        INFO(r.output);
        REQUIRE(r.status == 0);
        CHECK(last_displayed(r.output, "GOMP_SPINCOUNT") == "30000000000");  // libgomp's ACTIVE spin count
        CHECK_THAT(r.output, Contains("OpenMP wait policy active"));
    }
}

TEST_CASE("rtm asks glibc for huge pages (GLIBC_TUNABLES) unless the user chose, keeping the user's other tunables") {
    struct Case {
        const char* what;
        const char* tunables;  // GLIBC_TUNABLES as the user set it (null: unset)
        const char* mark;      // RTM_STARTED inherited (null: none)
        std::vector<std::string> said;  // in the "CPU threads" line
    };
    const Case cases[] = {
        {"not set: added, and the process that works has it", nullptr, nullptr,
         {"host memory in huge pages where the kernel gives them (transparent huge pages: ",
          "), GLIBC_TUNABLES glibc.malloc.hugetlb=1)"}},
        {"other tunables: kept, and huge pages added after them", "glibc.malloc.arena_max=2", nullptr,
         {"), GLIBC_TUNABLES glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1)"}},
        {"a mark inherited from another rtm (RTM_STARTED) does not skip them", nullptr, "1",
         {"GLIBC_TUNABLES glibc.malloc.hugetlb=1)"}},
        {"the user's hugetlb=0 stays", "glibc.malloc.hugetlb=0", nullptr, {"host memory in 4 kB pages"}},
    };
    for (const Case& c : cases) {
        Env env;
        env.set("OMP_NUM_THREADS", nullptr);
        env.set("GLIBC_TUNABLES", c.tunables);
        env.set("RTM_STARTED", c.mark);
        const auto r = run_rtm(tiny_model("huge-pages"));
        INFO(c.what << "\n" << r.output);
        REQUIRE(r.status == 0);
        for (const std::string& s : c.said) CHECK_THAT(r.output, Contains(s));
    }
}

TEST_CASE("propagation.threads wins over OMP_NUM_THREADS and that over the CPUs shared between the ranks") {
    Env env;
    env.set("OMP_NUM_THREADS", nullptr);
    env.set("OMPI_COMM_WORLD_LOCAL_SIZE", nullptr);
    env.set("MPI_LOCALNRANKS", nullptr);
    env.set("SLURM_NTASKS_PER_NODE", nullptr);
    const std::string n = std::to_string(affinity_cpus());
    SECTION("default: the CPUs of the affinity mask") {
        const auto r = run_rtm(tiny_model("threads-default"));
        INFO(r.output);
        REQUIRE(r.status == 0);
        CHECK_THAT(r.output, Contains("CPU threads: " + n + " (affinity " + n + " CPU"));
        CHECK_THAT(r.output, Contains(", 1 rank on this node"));
    }
    SECTION("default under mpirun: shared between the ranks of the node, at least 1") {
        env.set("OMPI_COMM_WORLD_LOCAL_SIZE", "100000");  // more ranks than any machine's CPUs
        const auto r = run_rtm(tiny_model("threads-ranks"));
        INFO(r.output);
        REQUIRE(r.status == 0);
        CHECK_THAT(r.output, Contains("CPU threads: 1 (affinity " + n + " CPU") && Contains("100000 ranks on this node"));
    }
    SECTION("OMP_NUM_THREADS over the default") {
        env.set("OMP_NUM_THREADS", "3");
        const auto r = run_rtm(tiny_model("threads-env"));
        INFO(r.output);
        REQUIRE(r.status == 0);
        CHECK_THAT(r.output, Contains("CPU threads: 3 (OMP_NUM_THREADS;"));
    }
    SECTION("the option over OMP_NUM_THREADS") {
        env.set("OMP_NUM_THREADS", "3");
        const auto r = run_rtm(tiny_model("threads-option", "--propagation.threads 1"));
        INFO(r.output);
        REQUIRE(r.status == 0);
        CHECK_THAT(r.output, Contains("CPU threads: 1 (option propagation.threads;"));
    }
    SECTION("a negative count is refused naming the option") {
        const auto r = run_rtm(tiny_model("threads-negative", "--propagation.threads -2"));
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains("propagation.threads") && Contains("must not be negative"));
    }
}

TEST_CASE("rtm bench uses rtm model's device by default and its CPU ratio stays within the ceiling") {
    const auto json = scratch("bench-default") / "bench.json";
    const auto r = run_rtm("bench --grid 64x64 --steps 5 --repeats 3 --json " + json.string());
    INFO(r.output);
    REQUIRE(r.status == 0);
    // rtm model's rule (propagation.device auto): the GPU when one is usable, else the CPU.
    const bool cpu = contains(r.output, "(--device auto: no GPU");
    CHECK_THAT(r.output, Contains("(--device auto: "));
    std::ifstream in(json);
    const auto j = nlohmann::json::parse(in);
    REQUIRE(j["rows"].size() == 1);
    CHECK(j["rows"][0]["device"] == (cpu ? "cpu" : "gpu"));
    // The ceiling is the best copy bandwidth of the same minimal-byte pattern on arrays of
    // the grid's size (where the grid lives) and beyond the caches: the update, which
    // moves at least those bytes, cannot beat it (a 64x64 step measured ~23% on 2 cores).
    CHECK(j["rows"][0]["ratio"].get<double>() <= 1.0);
}

TEST_CASE("rtm bench --physics vti|tti times the CPU's VTI/TTI step, its bytes counted, and refuses other modes as a usage error") {
    // (On a build without CUDA it sent the user to --device gpu, which sent them back.)
    const auto dir = scratch("bench-tti-cpu");
    const struct {
        const char* args;
        const char* mode;
        double bytes;  // values moved a point (src/bench/bench.cpp, cpu_tti), 4 B each
    } cases[] = {{"--physics tti --grid 32x32x32", "tti", 26 * 4.0}, {"--physics vti --grid 64x64", "vti", 9 * 4.0},
                 {"--physics tti --grid 64x64", "tti", 21 * 4.0}};
    for (const auto& c : cases) {
        const auto json = dir / "bench.json";
        const auto r = run_rtm(std::string("bench --device cpu --steps 2 --repeats 1 ") + c.args + " --json " + json.string());
        INFO(c.args << ": " << r.output);
        REQUIRE(r.status == 0);
        std::ifstream in(json);
        const auto j = nlohmann::json::parse(in);
        REQUIRE(j["rows"].size() == 1);
        const auto& row = j["rows"][0];
        CHECK(row["variant"] == "tti_step_cpu");
        CHECK(row["mode"] == c.mode);
        CHECK(row["bytes_per_point"].get<double>() == c.bytes);
        // The step moves at least the counted bytes through more arrays (15 for TTI) than the
        // ceiling's copy (4, of the grid's size), so it cannot beat the copy's rate.
        CHECK((row["ratio"].get<double>() > 0 && row["ratio"].get<double>() <= 1.0));
    }
    const auto r = run_rtm("bench --device cpu --physics tti --mode modelling --grid 64x64 --steps 2 --repeats 1");
    INFO(r.output);
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Contains("option --physics tti: times the VTI/TTI step alone"));
}

TEST_CASE("rtm bench --sustain is refused where it would hold nothing") {
    SECTION("on the CPU") {
        const auto r = run_rtm("bench --device cpu --grid 64x64 --steps 2 --repeats 1 --sustain 5");
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains("option --sustain") && Contains("runs on the CPU"));
    }
    SECTION("for a mode that is not a kernel's") {
        const auto r = run_rtm("bench --mode rtm --sustain 5");
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains("option --sustain") && Contains("Leave it out for --mode rtm"));
    }
    SECTION("a negative or absurd duration") {
        for (const char* s : {"-1", "1e9", "nan"}) {
            const auto r = run_rtm(std::string("bench --grid 64x64 --steps 2 --repeats 1 --sustain ") + s);
            INFO(s << ": " << r.output);
            CHECK(r.status == 1);
            CHECK_THAT(r.output, Contains("option --sustain") && Contains("Give 0 to 3600 seconds"));
        }
    }
}

TEST_CASE("rtm bench refuses what it cannot time and names the option before any work") {
    // Each within seconds: a 1x1x1 grid once ran for minutes, a 10^15-point one ended in
    // std::bad_alloc.
    const struct {
        const char* args;
        const char* says;
    } cases[] = {
        {"--grid 1x1x1", "has a size below 16 points"},
        {"--grid 0x0", "has a size below 16 points"},
        {"--grid 100000x100000x100000", "GB of host memory, which has"},
        {"--grid 64x64 --repeats 0", "option --repeats: must be at least 1"},
        {"--grid 64x64 --steps 0", "option --steps: must be at least 1"},
        {"--mode modelling --grid 64x64 --pml -1", "option --pml: must not be negative"},
    };
    for (const auto& c : cases) {
        const auto r = run_rtm(std::string("bench --device cpu ") + c.args);
        INFO(c.args << ": " << r.output);
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains(c.says));
        CHECK_THAT(r.output, !Contains("std::"));
    }
}

TEST_CASE("rtm bench refuses a value that does not parse or is none of the choices as a usage error") {
    // Exit 2, as every command's; an unknown --mode ran the modelling bench, exit 0.
    const struct {
        const char* args;
        const char* says;
    } cases[] = {
        {"--mode bogus", "option --mode: unknown mode 'bogus'. Use full, stencil, modelling, rtm or slabs"},
        {"--grid abc", "option --grid: 'abc' is not NXxNYxNZ (3D) or NXxNZ (2D)"},
        {"--grid 64", "option --grid: '64' is not NXxNYxNZ"},
        {"--grid 64x64abc", "option --grid: '64x64abc' is not NXxNYxNZ"},
        {"--precision bogus", "option --precision: unknown precision 'bogus'. Use single or double"},
        {"--device bogus", "option --device: unknown device 'bogus'"},
        {"--boundary bogus", "option --boundary: unknown boundary 'bogus'"},
        {"--physics bogus", "option --physics: unknown physics 'bogus'"},
        {"--scaling bogus", "option --scaling: unknown scaling 'bogus'"},
    };
    for (const auto& c : cases) {
        const std::string args = c.args;
        const auto r = run_rtm(std::string("bench --steps 2 --repeats 1 ") + (contains(args, "--grid") ? "" : "--grid 64x64 ") + args);
        INFO(c.args << ": " << r.output);
        CHECK(r.status == 2);
        CHECK_THAT(r.output, Contains(c.says));
        CHECK_THAT(r.output, !Contains("ceiling:"));  // before any work
    }
}

TEST_CASE("rtm bench refuses --variant and --zchunk where no variant runs and more steps than a job may take") {
    SECTION("on the CPU, whatever it names") {
        for (const char* v : {"bogus", "t32x8"}) {
            const auto r = run_rtm(std::string("bench --device cpu --grid 64x64 --steps 2 --repeats 1 --variant ") + v);
            INFO(v << ": " << r.output);
            CHECK(r.status == 2);
            CHECK_THAT(r.output, Contains("option --variant: '" + std::string(v) + "' names a GPU kernel variant; "
                                          "this bench runs on the CPU") &&
                                     Contains("step_cpu") && Contains("Leave --variant out, or use --device gpu"));
        }
    }
    SECTION("--zchunk on the CPU, or negative") {
        const auto r = run_rtm("bench --device cpu --grid 64x64 --steps 2 --repeats 1 --zchunk 8");
        INFO(r.output);
        CHECK(r.status == 2);
        CHECK_THAT(r.output, Contains("option --zchunk: sets the GPU kernels' z planes per block; this bench runs on the CPU"));
        const auto neg = run_rtm("bench --device cpu --grid 64x64 --steps 2 --repeats 1 --zchunk -5");
        INFO(neg.output);
        CHECK(neg.status == 1);
        CHECK_THAT(neg.output, Contains("option --zchunk: must not be negative"));
    }
    SECTION("more steps than rtm model and migrate allow (it ran for hours, without an ETA)") {
        const auto r = run_rtm("bench --device cpu --grid 64x64 --steps 2000000000");
        INFO(r.output);
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains("options --steps and --repeats: 2000000000 steps x 5 repeats are more than 10000000"));
        CHECK_THAT(r.output, !Contains("ceiling:"));
    }
    SECTION("for --mode rtm") {
        const auto r = run_rtm("bench --mode rtm --variant t32x8");
        INFO(r.output);
        CHECK(r.status == 2);
        CHECK_THAT(r.output, Contains("option --variant: is for --mode full, stencil and modelling on a GPU"));
    }
}

TEST_CASE("rtm bench checks the --json path before any work") {
    const auto dir = scratch("bench-json");
    const struct {
        std::string path;
        const char* says;
    } cases[] = {
        // (A missing folder is made, as rtm model's outputs' are; one that cannot be is refused.)
        {"/proc/nonexistent/x.json", "option --json: '/proc/nonexistent/x.json' cannot be written: the folder /proc takes no new files"},
        {dir.string(), "is a folder, not a file. Give --json a file name"},
        {(dir / "file.txt" / "x.json").string(), "file.txt is a file. Choose a path under a folder"},
    };
    std::ofstream(dir / "file.txt") << "x";
    for (const auto& c : cases) {
        const auto r = run_rtm("bench --device cpu --grid 64x64 --steps 2 --repeats 1 --json " + c.path);
        INFO(c.path << ": " << r.output);
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains(c.says));
        CHECK_THAT(r.output, !Contains("ceiling:"));  // the results were lost after the work
    }
    // Nothing left behind by the check (its probe folder is removed at once).
    CHECK(std::distance(std::filesystem::directory_iterator(dir), {}) == 1);
}

TEST_CASE("rtm bench --mode rtm names --steps when the shot is too short to image, before any work") {
    const auto r = run_rtm("bench --mode rtm --device cpu --grid 64x64 --steps 5 --repeats 1");
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("option --steps: 5 steps are too few for --mode rtm: the shot is imaged every "));
    CHECK_THAT(r.output, !Contains("migration.image-every") && !Contains("device :"));
    // The count it asks for runs.
    const auto at = r.output.find("Give --steps ");
    REQUIRE(at != std::string::npos);
    const int n = std::atoi(r.output.c_str() + at + 13);
    const auto ok = run_rtm("bench --mode rtm --device cpu --grid 64x64 --pml 10 --repeats 1 --steps " + std::to_string(n));
    INFO(ok.output);
    CHECK(ok.status == 0);
    CHECK_THAT(ok.output, !Contains("image-every"));
}
