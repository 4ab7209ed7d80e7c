#include "app/streams.h"

#include <memory>

#include <spdlog/cfg/env.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

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

void set_up_logging() {
    // color_mode::automatic: escape codes only when the stream is a terminal (and TERM
    // says it has colours), so pipes and log files get plain text.
    const auto mode = spdlog::color_mode::automatic;
    auto out = std::make_shared<BelowWarningStdoutSink>(mode);
    auto err = std::make_shared<spdlog::sinks::ansicolor_stderr_sink_mt>(mode);
    err->set_level(spdlog::level::warn);
    auto logger = std::make_shared<spdlog::logger>("rtm", spdlog::sinks_init_list{out, err});
    logger->set_pattern("[%H:%M:%S] %^%l%$ %v");
    logger->set_level(spdlog::level::info);
    spdlog::set_default_logger(logger);
    spdlog::cfg::load_env_levels();
}

}  // namespace rtm::app
