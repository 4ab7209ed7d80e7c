// rtm: seismic forward modelling and reverse-time migration.
#include <cstring>
#include <exception>
#include <iostream>
#include <string>

#include <spdlog/spdlog.h>

#include "app/commands.h"
#include "app/streams.h"
#include "bench/bench.h"
#include "core/error.h"
#include "core/threads.h"

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

int main(int argc, char** argv) {
    rtm::use_passive_openmp_wait(argv);  // first: may execute rtm again (core/threads.h)
    rtm::app::set_up_logging();
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
    } catch (const rtm::Error& e) {
        spdlog::error("{}", e.what());
        return 1;
    } catch (const std::exception& e) {
        spdlog::error("unexpected failure: {}", e.what());
        return 1;
    }
}
