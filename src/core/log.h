#pragma once
// Two loggers. The default one (spdlog::info, ...) speaks for the job: under mpirun only
// rank 0 prints below warnings, so a message of the whole job appears once. every_rank()
// speaks for one rank (its shots), on every rank, prefixed with the rank when there
// are several (app/streams.cpp sets both up).
#include <spdlog/spdlog.h>

#include <string>

namespace rtm {

// A count with its noun, for messages: "1 shot", "8 shots" (nouns with a plain "s").
inline std::string counted(long long n, const char* noun) {
    return std::to_string(n) + ' ' + noun + (n == 1 ? "" : "s");
}

inline spdlog::logger& every_rank() {
    const auto l = spdlog::get("every-rank");
    return l ? *l : *spdlog::default_logger_raw();
}

}  // namespace rtm
