#include "core/host_memory.h"

#include <malloc.h>
#include <omp.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
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

double thread_reserve(int threads) {
    rlimit stack{};
    const double stack_bytes = getrlimit(RLIMIT_STACK, &stack) == 0 && stack.rlim_cur != RLIM_INFINITY
                                   ? double(stack.rlim_cur)
                                   : 8.0 * (1 << 20);
    // (The main thread allocates from the main heap, which is not one of these; arenas
    // beyond MALLOC_ARENA_MAX are shared.)
    int arenas = threads;
    if (const char* e = std::getenv("MALLOC_ARENA_MAX")) {
        const int n = std::atoi(e);
        if (n > 0) arenas = std::min(arenas, n);
    }
    return threads * stack_bytes + std::max(0, arenas - 1) * 64.0 * (1 << 20);
}

double peak_host_bytes() { return proc_kb("/proc/self/status", "VmHWM:"); }

namespace detail {

namespace {

// The first number of a file ("max" and an absent file: -1).
double number_in(const std::filesystem::path& file) {
    std::ifstream in(file);
    std::string word;
    if (!(in >> word) || word == "max") return -1;
    try {
        return std::stod(word);
    } catch (const std::exception&) {
        return -1;
    }
}

// The sum of the values of `keys` ("KEY 12345" lines) in a cgroup's memory.stat (0 when absent).
double stat_values(const std::filesystem::path& file, std::initializer_list<const char*> keys) {
    std::ifstream in(file);
    std::string k;
    double v = 0, sum = 0;
    while (in >> k >> v)
        for (const char* key : keys) sum += k == key ? v : 0;
    return sum;
}

}  // namespace

CgroupMemory cgroup_memory(const std::string& proc_cgroup, const std::string& v2_root, const std::string& v1_root) {
    namespace fs = std::filesystem;
    CgroupMemory best;
    // Each level from the process's cgroup up to the mount point: the tightest limit
    // wins. (In a container the mount point is often the container's own cgroup, its
    // path in /proc/self/cgroup absent under it: the mount point itself is read then.)
    const auto walk = [&](const std::string& root, const std::string& path, const char* max_file, const char* usage_file,
                          std::initializer_list<const char*> cache_keys) {
        fs::path level = fs::path(root) / fs::path(path).relative_path();
        for (;;) {
            const double limit = number_in(level / max_file);
            // v1 says "no limit" with a huge number (2^63 rounded down to a page).
            if (limit > 0 && limit < 1e18 && (best.limit == 0 || limit < best.limit)) {
                const double used = number_in(level / usage_file) - stat_values(level / "memory.stat", cache_keys);
                best = {limit, std::max(0.0, limit - std::max(0.0, used)), (level / max_file).string()};
            }
            if (level == fs::path(root) || level.parent_path() == level) break;
            level = level.parent_path();
        }
    };
    std::istringstream lines(proc_cgroup);
    std::string line;
    while (std::getline(lines, line)) {
        // "ID:CONTROLLERS:PATH": v2 is "0::PATH", v1's memory line names "memory".
        const auto a = line.find(':'), b = line.find(':', a + 1);
        if (a == std::string::npos || b == std::string::npos) continue;
        const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
        if (line.compare(0, a, "0") == 0 && controllers.empty())
            walk(v2_root, path, "memory.max", "memory.current", {"inactive_file", "active_file"});
        else if (("," + controllers + ",").find(",memory,") != std::string::npos)
            walk(v1_root, path, "memory.limit_in_bytes", "memory.usage_in_bytes",
                 {"total_inactive_file", "total_active_file"});
    }
    return best;
}

}  // namespace detail

HostMemory host_memory(int sharers) {
    sharers = std::max(1, sharers);
    // The machine's memory, or its cgroup's where that is less: shared by the sharers.
    double total = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
    double available = proc_kb("/proc/meminfo", "MemAvailable:");
    std::string limited_by = "this machine's";
    std::ifstream in("/proc/self/cgroup");
    const std::string cgroups((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const detail::CgroupMemory c = detail::cgroup_memory(cgroups, "/sys/fs/cgroup", "/sys/fs/cgroup/memory");
    if (c.limit > 0 && c.limit < total) {
        total = c.limit;
        limited_by = "the cgroup's limit (" + c.file + ") of";
    }
    if (c.limit > 0) available = std::min(available, c.room);
    HostMemory m{total / sharers, available / sharers, limited_by, sharers};
    // The address-space limit: this process's own. Its threads reserve address space
    // beyond what they allocate: a stack each, and glibc's heap of 64 MB for each thread
    // that allocates (up to MALLOC_ARENA_MAX heaps). Counted here as to come, which is
    // conservative for threads already running: with 16 threads, 1.2 GB that a plan taking
    // the limit less VmSize handed to the source wavefield, whose shots then failed.
    rlimit as{};
    if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
        const double limit = double(as.rlim_cur);
        if (limit < m.total) m = {limit, m.available, "the address-space limit (ulimit -v) of", 1};
        const double room = limit - proc_kb("/proc/self/status", "VmSize:") - thread_reserve(omp_get_max_threads());
        m.available = std::min(m.available, std::max(0.0, room));
    }
    return m;
}

std::string HostMemory::said() const {
    std::ostringstream os;
    os.precision(3);
    os << limited_by << " " << total * shared_by / 1e9 << " GB";
    if (shared_by > 1) os << ", shared by the node's " << shared_by << " ranks";
    return os.str();
}

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
