// rtm: seismic forward modelling and reverse-time migration.
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <exception>
#include <iostream>
#include <string>

#include <spdlog/spdlog.h>

#include "app/commands.h"
#include "app/streams.h"
#include "bench/bench.h"
#include "core/error.h"
#include "core/host_memory.h"
#include "core/stop_signal.h"
#include "core/threads.h"
#include "parallel/world.h"

namespace {

const char* kUsage =
    "rtm: seismic forward modelling and reverse-time migration\n"
    "\n"
    "usage: rtm COMMAND [options]    (rtm COMMAND --help for its options)\n"
    "       rtm --version                version, commit, CUDA and MPI support\n"
    "\n"
    "commands:\n"
    "  info FILE...   what SEG-Y files hold: format, sampling, geometry, extent, ranges\n"
    "  model          velocity model + acquisition + wavelet -> synthetic shot gathers (SEG-Y)\n"
    "  migrate        velocity model + shot gathers -> reverse-time-migrated depth image (SEG-Y)\n"
    "  bench          kernel and modelling throughput against the measured bandwidth ceiling\n"
    "  version        as --version\n"
    "\n"
    "Results and progress go to stdout, warnings and errors to stderr (colours only on a\n"
    "terminal); SPDLOG_LEVEL=debug in the environment adds the debug messages.\n";

}  // namespace

namespace {

// An error on one rank of several: rank 0 reports it and ends the job; the others wait
// a moment first, so that an error every rank meets (a bad option, a missing file) is
// printed once, and one that only this rank meets (its GPU, its shot) still is.
// `code`: the exit status (2 for a usage error, 1 for any other).
int fail_rank(const std::string& message, bool reported, int code = 1) {
    const auto& world = rtm::parallel::World::get();
    if (world.size() == 1) {
        spdlog::error("{}", message);
        return code;
    }
    if (!world.root()) std::this_thread::sleep_for(std::chrono::seconds(2));
    if (!reported) spdlog::get("every-rank")->error("{}", message);
    world.abort(code);
}

}  // namespace

int main(int argc, char** argv) {
    rtm::set_startup_environment(argv);  // first: may execute rtm again (core/threads.h)
    rtm::flush_denormals_to_zero();      // one floating-point environment for the whole process
    rtm::keep_freed_memory();            // scratch reused, not mapped and faulted in again (core/host_memory.h)
    // MPI for the commands that run jobs over ranks (mpirun rtm model|migrate); the
    // others stay one plain process.
    std::unique_ptr<rtm::parallel::Session> mpi;
    // and `rtm bench --mode slabs` (one shot over the ranks' GPUs).
    bool slabs_bench = false;
    for (int i = 2; i + 1 < argc && argc >= 2 && !std::strcmp(argv[1], "bench"); ++i)
        slabs_bench = slabs_bench || (!std::strcmp(argv[i], "--mode") && !std::strcmp(argv[i + 1], "slabs"));
    if (argc >= 2 && (!std::strcmp(argv[1], "model") || !std::strcmp(argv[1], "migrate") || slabs_bench))
        mpi = std::make_unique<rtm::parallel::Session>(argc, argv);
    // A job's log to a closed pipe does not kill it (core/stop_signal.h); `rtm info | head`
    // still ends with the pipe.
    if (argc >= 2 && (!std::strcmp(argv[1], "model") || !std::strcmp(argv[1], "migrate"))) rtm::ignore_broken_pipes();
    const auto& world = rtm::parallel::World::get();
    rtm::app::set_up_logging(world.rank(), world.size());
    if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
        std::cout << kUsage;
        return argc < 2 ? 2 : 0;
    }
    const std::string cmd = argv[1];
    if (cmd == "--version" || cmd == "version") return rtm::app::cmd_version();
    try {
        if (cmd == "info") return rtm::app::cmd_info(argc - 1, argv + 1);
        if (cmd == "model") return rtm::app::cmd_model(argc - 1, argv + 1);
        if (cmd == "migrate") return rtm::app::cmd_migrate(argc - 1, argv + 1);
        if (cmd == "bench") return rtm::run_bench(argc - 1, argv + 1);
        std::cerr << "rtm: unknown command '" << cmd << "'\n\n" << kUsage;
        return 2;
    } catch (const rtm::ReportedError& e) {
        return fail_rank(e.what(), true);
    } catch (const rtm::UsageError& e) {  // every rank parses the same command line
        return fail_rank(e.what(), false, 2);
    } catch (const rtm::Error& e) {
        return fail_rank(e.what(), false);
    } catch (const std::bad_alloc& e) {
        return fail_rank(rtm::failure_text(e), false);
    } catch (const std::exception& e) {
        return fail_rank(std::string("unexpected failure: ") + e.what(), false);
    }
}
