// `mpirun -np N rtm model|migrate`: shots shared out over ranks give the files of one
// process, bit for bit; a job whose rank was killed resumes with another rank count to
// the same image; a shot that fails is retried once on another rank. CPU ranks, so that
// all of this runs in CI (one thread per rank, oversubscribed on small machines).
#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>
#include <sys/wait.h>
#include <unistd.h>

#include "io/shot_io.h"
#include "run_rtm.h"
#include "support/catch.hpp"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

const std::string kVp = (source_dir() / "velocity_models" / "layers2d_vp.segy").string();
const std::string kSmooth = (source_dir() / "velocity_models" / "layers2d_vp_smooth.segy").string();

std::string model_args(const fs::path& out) {
    return "model --model.vp " + kVp +
           " --acquisition.source-x0 400 --acquisition.source-dx 400 --acquisition.source-nx 8"
           " --acquisition.receiver-x0 0 --acquisition.receiver-dx 25 --acquisition.receiver-nx 161"
           " --acquisition.record-length 0.6 --acquisition.record-dt 0.004 --wavelet.ricker-f0 10"
           " --propagation.device cpu --propagation.threads 1 --output.shots " + out.string();
}

// Eight shots, modelled once by one process.
const fs::path& shots_file() {
    static const fs::path p = [] {
        const auto dir = scratch("cli-mpi-shots");
        const auto r = run_rtm(model_args(dir / "shots.sgy"));
        INFO(r.output);
        REQUIRE(r.status == 0);
        return dir / "shots.sgy";
    }();
    return p;
}

std::string migrate_args(const fs::path& job, const std::string& shots = "") {
    return "migrate --model.vp " + kSmooth + " --data.shots " + (shots.empty() ? shots_file().string() : shots) +
           " --wavelet.ricker-f0 10 --migration.aperture 600 --propagation.device cpu --propagation.threads 1"
           " --output.job " + job.string();
}

#ifdef RTM_MPIEXEC

// The pid of rank `rank` of the rtm processes whose command line names `marker`, or -1.
pid_t rank_pid(int rank, const std::string& marker) {
    const fs::path rtm = fs::canonical(RTM_BINARY);
    for (const auto& e : fs::directory_iterator("/proc")) {
        const std::string name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::error_code ec;
        if (fs::read_symlink(e.path() / "exe", ec) != rtm || ec) continue;
        const std::string cmdline = bytes_of(e.path() / "cmdline"), env = bytes_of(e.path() / "environ");
        if (cmdline.find(marker) != std::string::npos &&
            env.find(std::string("OMPI_COMM_WORLD_RANK=") + std::to_string(rank) + '\0') != std::string::npos)
            return pid_t(std::stol(name));
    }
    return -1;
}
#endif

}  // namespace

#ifndef RTM_MPIEXEC
TEST_CASE("mpirun runs of rtm (this build has no MPI)") { skip("rtm was built without MPI: no mpirun runs to test"); }
#else

TEST_CASE("mpirun -np 3 rtm model writes the shot file of one process, bit for bit") {
    const auto dir = scratch("cli-mpi-model");
    const auto r = mpi_rtm(3, model_args(dir / "three.sgy"));
    INFO(r.output);
    REQUIRE(r.status == 0);
    CHECK_THAT(r.output, Contains("parallel: 3 ranks, 1 per shot, 3 groups"));
    CHECK_THAT(r.output, Contains("[rank 2]"));
    // The steps' time is the ranks' sum, and the share is of their 3 walls: said so.
    CHECK_THAT(r.output, Contains(" s in propagation steps summed over 3 ranks (propagation share ") &&
                             Contains("% of their 3 x "));
    CHECK(bytes_of(dir / "three.sgy") == bytes_of(shots_file()));
    CHECK(fs::exists(dir / "three.png"));
}

TEST_CASE("under mpirun with SPDLOG_LEVEL=debug the job's log comes from rank 0 alone") {
    // The variable set every logger's level: rank 1 printed the whole log again.
    const auto r = mpi_rtm(2, model_args(scratch("cli-mpi-debug") / "s.sgy") + " --dry-run", "SPDLOG_LEVEL=debug ");
    INFO(r.output);
    REQUIRE(r.status == 0);
    CHECK_THAT(r.output, Contains("[rank 0] info wavelet: Ricker"));
    CHECK_THAT(r.output, !Contains("[rank 1] info wavelet") && !Contains("[rank 1] info plan"));
}

TEST_CASE("mpirun -np 3 rtm migrate gives the image and illumination of one process, bit for bit") {
    const auto dir = scratch("cli-mpi-migrate");
    const auto one = run_rtm(migrate_args(dir / "one"));
    INFO(one.output);
    REQUIRE(one.status == 0);
    CHECK_THAT(one.output, Contains("parallel: 1 rank"));
    const auto three = mpi_rtm(3, migrate_args(dir / "three"));
    INFO(three.output);
    REQUIRE(three.status == 0);
    CHECK_THAT(three.output, Contains("parallel: 3 ranks, 1 per shot, 3 groups") && Contains("8 shots stacked"));
    // The summary gives each rank's shots, busy and waiting time.
    for (int r = 0; r < 3; ++r) CHECK_THAT(three.output, Contains("rank " + std::to_string(r) + " on "));
    // Each shot's progress line gives the job's count with it: 1 to 8, each once, whichever
    // ranks end together (two ranks ending together both said "1 of 8").
    std::vector<int> counts;
    const std::regex done_re(R"(\((\d+) of 8 done)");
    for (auto m = std::sregex_iterator(three.output.begin(), three.output.end(), done_re); m != std::sregex_iterator(); ++m)
        counts.push_back(std::stoi((*m)[1]));
    std::sort(counts.begin(), counts.end());
    CHECK(counts == std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8});
    CHECK(bytes_of(dir / "three" / "image.sgy") == bytes_of(dir / "one" / "image.sgy"));
    CHECK(bytes_of(dir / "three" / "illumination.sgy") == bytes_of(dir / "one" / "illumination.sgy"));
}

TEST_CASE("mpirun -np 2 rtm migrate in batches of 3 gives the image and illumination of one process shot by shot, bit for bit") {
    const auto dir = scratch("cli-mpi-migrate-batch");
    const auto one = run_rtm(migrate_args(dir / "one"));
    INFO(one.output);
    REQUIRE(one.status == 0);
    // The receivers span the model: every shot's window is the whole model, one batch key.
    const auto two = mpi_rtm(2, migrate_args(dir / "two") + " --propagation.batch 3");
    INFO(two.output);
    REQUIRE(two.status == 0);
    CHECK_THAT(two.output, Contains("in a batch of") && Contains("8 shots stacked"));
    CHECK(bytes_of(dir / "two" / "image.sgy") == bytes_of(dir / "one" / "image.sgy"));
    CHECK(bytes_of(dir / "two" / "illumination.sgy") == bytes_of(dir / "one" / "illumination.sgy"));
}

TEST_CASE("a job with a rank killed by SIGKILL resumes on another rank count to the uninterrupted image") {
    const auto dir = scratch("cli-mpi-kill");
    const auto whole = run_rtm(migrate_args(dir / "whole"));
    REQUIRE(whole.status == 0);
    const auto job = dir / "killed";
    // Every rank checkpoints after each shot; rank 1 is killed once it has one.
    const std::string cmd = "exec " + mpirun_command(3) + RTM_BINARY + " " +
                            migrate_args(job, "") + " --migration.checkpoint-minutes 0 > " +
                            (dir / "killed.log").string() + " 2>&1";
    const pid_t mpirun = fork();
    REQUIRE(mpirun >= 0);
    if (mpirun == 0) {
        execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
    pid_t victim = -1;
    for (int i = 0; i < 3000 && victim < 0; ++i) {
        if (bytes_of(job / "part-1.bin").find("RTMPART3") != std::string::npos) victim = rank_pid(1, job.string());
        if (victim < 0) usleep(20000);
    }
    INFO(bytes_of(dir / "killed.log"));
    REQUIRE(victim > 0);
    kill(victim, SIGKILL);
    int status = 0;
    waitpid(mpirun, &status, 0);
    CHECK(!(WIFEXITED(status) && WEXITSTATUS(status) == 0));  // the job did not end normally
    REQUIRE(fs::exists(job / "part-1.bin"));
    // Resumed on two ranks: the parts' shots are recovered, not redone.
    const auto r = mpi_rtm(2, migrate_args(job));
    INFO(r.output);
    REQUIRE(r.status == 0);
    CHECK_THAT(r.output, Contains("recovered") && Contains("resuming job"));
    CHECK(bytes_of(job / "image.sgy") == bytes_of(dir / "whole" / "image.sgy"));
}

TEST_CASE("a shot that fails on one rank is tried once on another, then recorded failed while the others are stacked") {
    const auto dir = scratch("cli-mpi-failed");
    // Shot 3's traces scaled to 1e38: its receiver wavefield overflows (as in the
    // one-process test of failed shots), on any rank.
    auto shots = io::read_shots(shots_file().string());
    double peak = 0;
    for (float v : shots[2].data) peak = std::max(peak, double(std::abs(v)));
    for (float& v : shots[2].data) v = float(v * (1e38 / peak));
    const std::string file = (dir / "shots.sgy").string();
    io::write_shots(file, shots);
    const auto r = mpi_rtm(2, migrate_args(dir / "job", file));
    INFO(r.output);
    CHECK(r.status == 3);
    CHECK_THAT(r.output, Contains("failed (another rank tries it once more)") &&
                             Contains("failed, not stacked") && Contains("writing the image of 7 of 8 shots"));
    // The job's summary once, from rank 0, which holds the job's state (every rank gave
    // it, the others with "0 in this run"); each rank's line counts the shots it migrated
    // apart from those it tried (the failed one was tried twice).
    std::size_t summaries = 0;
    for (std::size_t at = 0; (at = r.output.find("shots done, ", at)) != std::string::npos; ++at) ++summaries;
    CHECK(summaries == 1);
    CHECK_THAT(r.output, Contains("7 of 8 shots done, 1 failed (1 in this run;"));
    int migrated = 0, tried = 0;
    const std::regex line(R"(rank \d on [^:]+: (\d+) of the (\d+) shots it tried migrated)");
    for (auto it = std::sregex_iterator(r.output.begin(), r.output.end(), line); it != std::sregex_iterator(); ++it)
        migrated += std::stoi((*it)[1]), tried += std::stoi((*it)[2]);
    CHECK(migrated == 7);
    CHECK(tried == 9);
}

TEST_CASE("mpirun -np 1 rtm writes no colour escape codes into a log file") {
    // Open MPI hands its ranks a pseudo-terminal for stdout wherever mpirun's own goes,
    // so a rank cannot tell a terminal from a file: a launcher's ranks never colour (one
    // rank wrote 17 escape codes into its log). TERM says colours, so only that decides.
    const auto dir = scratch("cli-mpi-colour");
    const auto r = mpi_rtm(1, "migrate --model.vp " + kSmooth + " --data.shots " + shots_file().string() +
                                  " --wavelet.ricker-f0 10 --migration.aperture 600 --propagation.device cpu"
                                  " --propagation.threads 1 --output.job " + (dir / "job").string() + " --dry-run",
                           "TERM=xterm-256color ");
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Contains("info"));
    CHECK(r.output.find('\x1b') == std::string::npos);
}

TEST_CASE("ranks given different jobs (mpirun's MPMD form or a configuration file that differs between nodes) are refused before any work") {
    const auto dir = scratch("cli-mpi-differ");
    // Rank 1 another imaging interval: ranks would have migrated with different settings into one folder.
    const std::string a = migrate_args(dir / "job"), b = a + " --migration.image-every 5";
    const auto r = run_shell(mpirun_command(1) + RTM_BINARY + " " + a + " : -np 1 " + RTM_BINARY + " " + b + " 2>&1");
    INFO(r.output);
    CHECK(r.status == 2);
    CHECK_THAT(r.output, Contains("rank 1 of 2 was given other settings than rank 0 (migration.image-every is '0' on "
                                  "rank 0, '5' on rank 1)") &&
                             Contains("not mpirun's MPMD form"));
    CHECK_FALSE(fs::exists(dir / "job" / "state.json"));
    // The same command line, and a configuration file of one name that differs (as copies
    // on two nodes' own disks would): each rank runs in its own folder.
    for (const char* r : {"0", "1"}) {
        fs::create_directories(dir / r);
        std::ofstream(dir / r / "job.ini") << "[migration]\nimage-every = " << (r[0] == '0' ? 4 : 5) << "\n";
    }
    const auto c = run_shell(mpirun_command(2) + "sh -c 'cd " + dir.string() + "/$OMPI_COMM_WORLD_RANK && exec " +
                             RTM_BINARY + " " + migrate_args(dir / "job2") + " --config job.ini' 2>&1");
    INFO(c.output);
    CHECK(c.status == 2);
    CHECK_THAT(c.output, Contains("rank 1 of 2 was given other settings than rank 0 (migration.image-every is '4' on "
                                  "rank 0, '5' on rank 1), from its command line or its copy of job.ini") &&
                             Contains("on storage every node sees"));
    // Threads change no byte of a rank's results: ranks with other counts (nodes with
    // other core counts) run the job.
    std::string two = migrate_args(dir / "job3");
    const std::string one_thread = "--propagation.threads 1";
    REQUIRE(two.find(one_thread) != std::string::npos);
    two.replace(two.find(one_thread), one_thread.size(), "--propagation.threads 2");
    const auto t = run_shell(mpirun_command(1) + RTM_BINARY + " " + migrate_args(dir / "job3") + " : -np 1 " + RTM_BINARY +
                             " " + two + " 2>&1");
    INFO(t.output);
    CHECK(t.status == 0);
    CHECK_THAT(t.output, Contains("done: 8 shots stacked"));
}

TEST_CASE("parallel.ranks-per-shot above one process's single rank is refused, naming the option") {
    const auto r = run_rtm(migrate_args(scratch("cli-mpi-per-shot") / "job") + " --parallel.ranks-per-shot 2");
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("parallel.ranks-per-shot") && Contains("does not divide the job's 1 rank into groups"));
}

#endif
