#include "app/streams.h"

#include <memory>

#include <spdlog/cfg/env.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "parallel/world.h"

namespace rtm::app {

namespace {

// A sink's own level is a floor; stdout also needs a ceiling, so that a warning is
// printed once (on stderr) and not on both streams.
using StdoutSink = spdlog::sinks::ansicolor_stdout_sink_mt;
class BelowWarningStdoutSink : public StdoutSink {
public:
    using StdoutSink::StdoutSink;
    void log(const spdlog::details::log_msg& msg) override {
        if (msg.level < spdlog::level::warn) StdoutSink::log(msg);
    }
};

}  // namespace

void set_up_logging(int rank, int ranks) {
    // color_mode::automatic: escape codes only when the stream is a terminal (and TERM
    // says it has colours), so pipes and log files get plain text.
    // Under mpirun a rank's stdout is a pseudo-terminal of Open MPI's, wherever mpirun's
    // own output goes: no colour for a launcher's ranks, one of them too (mpirun -np 1
    // into a log file wrote escape codes).
    const auto mode = ranks > 1 || parallel::started_as_rank() ? spdlog::color_mode::never : spdlog::color_mode::automatic;
    auto out = std::make_shared<BelowWarningStdoutSink>(mode);
    auto err = std::make_shared<spdlog::sinks::ansicolor_stderr_sink_mt>(mode);
    err->set_level(spdlog::level::warn);
    auto logger = std::make_shared<spdlog::logger>("rtm", spdlog::sinks_init_list{out, err});
    auto mine = std::make_shared<spdlog::logger>("every-rank", spdlog::sinks_init_list{out, err});
    // Under mpirun every line says its rank; the job's messages come from rank 0 only
    // (core/log.h), a rank's own (its shots, its warnings and errors) from each.
    const std::string who = ranks > 1 ? "[rank " + std::to_string(rank) + "] " : "";
    logger->set_pattern("[%H:%M:%S] " + who + "%^%l%$ %v");
    mine->set_pattern("[%H:%M:%S] " + who + "%^%l%$ %v");
    logger->set_level(rank == 0 ? spdlog::level::info : spdlog::level::warn);
    mine->set_level(spdlog::level::info);
    spdlog::set_default_logger(logger);
    spdlog::register_logger(mine);
    spdlog::cfg::load_env_levels();
    // (SPDLOG_LEVEL=debug sets every logger's level: the other ranks would print the whole
    // job's log again. They keep at least warn.)
    if (rank != 0 && logger->level() < spdlog::level::warn) logger->set_level(spdlog::level::warn);
}

}  // namespace rtm::app
