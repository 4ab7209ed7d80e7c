#pragma once
// Runs the rtm executable as a user would and captures what it prints.
#include <array>
#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace rtm::test {

struct Result {
    int status = -1;  // exit code
    std::string output;  // stdout and stderr together
};

inline Result run_rtm(const std::string& args) {
    Result r;
    const std::string cmd = std::string(RTM_BINARY) + " " + args + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return r;
    std::array<char, 4096> buf;
    while (fgets(buf.data(), int(buf.size()), p)) r.output += buf.data();
    const int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

}  // namespace rtm::test
