#include "core/host_memory.h"

#include <fstream>
#include <sstream>
#include <string>

namespace rtm {

namespace {

// The value of "KEY:    12345 kB" in a /proc file, in bytes; 0 when absent.
double proc_kb(const char* file, const std::string& key) {
    std::ifstream in(file);
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(key, 0) == 0) {
            std::istringstream fields(line.substr(key.size()));
            double kb = 0;
            fields >> kb;
            return kb * 1024;
        }
    return 0;
}

}  // namespace

double peak_host_bytes() { return proc_kb("/proc/self/status", "VmHWM:"); }

double available_host_bytes() { return proc_kb("/proc/meminfo", "MemAvailable:"); }

}  // namespace rtm
