#include "core/host_memory.h"

#include <malloc.h>

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

void keep_freed_memory() {
#if defined(__GLIBC__)
    // Blocks up to 32 MB (glibc's largest mmap threshold) from the heaps; above it,
    // mmap: a whole wavefield or gather, whose pages go back when it is freed. A heap's
    // free top is returned to the system only beyond 512 MB.
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}

}  // namespace rtm
