#pragma once
// The JSON results of rtm bench (--json): kept out of bench_common.h, which nvcc compiles.
#include <ctime>
#include <string>

#include <nlohmann/json.hpp>

namespace rtm::bench {

// The start of every JSON result: UTC date, the command and the device.
inline nlohmann::json json_header(const std::string& cmd, const std::string& device) {
    char date[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    return {{"date", date}, {"command", cmd}, {"device", device}};
}

}  // namespace rtm::bench
