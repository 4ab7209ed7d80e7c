#include "core/host_memory.h"

#include <fstream>
#include <sstream>
#include <string>

namespace rtm {

double peak_host_bytes() {
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("VmHWM:", 0) == 0) {
            std::istringstream fields(line.substr(6));
            double kb = 0;
            fields >> kb;  // "VmHWM:    12345 kB"
            return kb * 1024;
        }
    return 0;
}

}  // namespace rtm
