#include "core/threads.h"

#if defined(__SSE__)
#include <xmmintrin.h>
#endif

#include <omp.h>

#include <exception>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <spdlog/spdlog.h>

#include "core/error.h"
#include "core/log.h"

namespace rtm {

// Threads a CPU beyond which a thread count is refused (set_cpu_threads).
constexpr int kMostThreadsPerCpu = 4;

void flush_denormals_to_zero() {
#if defined(__SSE__)
#pragma omp parallel
    _mm_setcsr(_mm_getcsr() | 0x8040);  // FTZ (bit 15) and DAZ (bit 6); the calling thread is among them
#endif
}
namespace {

// The leading positive integer of an environment variable (Slurm writes "2(x3)"), or 0.
int env_count(const char* name) {
    const char* s = std::getenv(name);
    if (!s || !*s) return 0;
    char* end = nullptr;
    const long v = std::strtol(s, &end, 10);
    return end != s && v > 0 && v < (1 << 24) ? int(v) : 0;
}

}  // namespace

void set_startup_environment(char** argv) {
    // Once: should a library drop a variable, the re-execution must not loop. The mark is
    // this process's id (execv keeps it), so an rtm that inherits it does not skip these.
    const std::string me = std::to_string(getpid());
    if (const char* started = std::getenv("RTM_STARTED"); started && me == started) {
        unsetenv("RTM_STARTED");
        return;
    }
    const bool wait = !std::getenv("OMP_WAIT_POLICY") && !std::getenv("GOMP_SPINCOUNT");
    const char* tunables = std::getenv("GLIBC_TUNABLES");
    const std::string before = tunables ? tunables : "";
    const bool huge = before.find("glibc.malloc.hugetlb") == std::string::npos;
    if (!wait && !huge) return;
    if (wait) setenv("OMP_WAIT_POLICY", "passive", 1);
    if (huge) setenv("GLIBC_TUNABLES", (before.empty() ? "" : before + ":").append("glibc.malloc.hugetlb=1").c_str(), 1);
    setenv("RTM_STARTED", me.c_str(), 1);
    execv("/proc/self/exe", argv);
    // Only on failure (no /proc): run on with the defaults, and say so in the log.
    if (wait) unsetenv("OMP_WAIT_POLICY");
    if (huge && tunables) setenv("GLIBC_TUNABLES", before.c_str(), 1);
    else if (huge) unsetenv("GLIBC_TUNABLES");
    unsetenv("RTM_STARTED");
}

std::string affinity_mask() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return {};  // (unknown: shares with every rank)
    return std::string(reinterpret_cast<const char*>(&set), sizeof set);
}

int ranks_sharing_cpus(const std::vector<std::string>& masks, std::size_t me) {
    const auto overlap = [](const std::string& a, const std::string& b) {
        if (a.empty() || b.empty()) return true;
        for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
            if (a[i] & b[i]) return true;
        return false;
    };
    int n = 0;
    for (const std::string& m : masks) n += overlap(m, masks.at(me));
    return n;
}

ThreadChoice choose_threads(int option, const std::string& option_name, int sharing) {
    ThreadChoice c;
    cpu_set_t set;
    CPU_ZERO(&set);
    c.affinity_cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? std::max(1, CPU_COUNT(&set))
                                                                   : std::max(1, int(sysconf(_SC_NPROCESSORS_ONLN)));
    for (const char* v : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"})
        if (const int n = env_count(v)) {
            c.local_ranks = n;
            break;
        }
    if (option > 0) {
        c.threads = option;
        c.from = "option " + option_name;
    } else if (const int n = env_count("OMP_NUM_THREADS")) {
        c.threads = n;
        c.from = "OMP_NUM_THREADS";
    } else {
        c.threads = std::max(1, c.affinity_cpus / (sharing > 0 ? sharing : c.local_ranks));
    }
    c.sharing = sharing;
    if (const char* w = std::getenv("OMP_WAIT_POLICY")) c.wait_policy = w;
    else if (const char* s = std::getenv("GOMP_SPINCOUNT")) c.wait_policy = std::string("GOMP_SPINCOUNT=") + s;
    else c.wait_policy = "libgomp default (spins)";
    if (const char* t = std::getenv("GLIBC_TUNABLES")) c.tunables = t;
    // What the kernel does with glibc's request: "always", "madvise" (honoured) or "never".
    std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string modes;
    std::getline(thp, modes);
    const auto open = modes.find('['), close = modes.find(']');
    c.transparent_huge_pages = open != std::string::npos && close > open ? modes.substr(open + 1, close - open - 1) : "unknown";
    c.huge_pages = c.tunables.find("glibc.malloc.hugetlb=1") != std::string::npos ||
                   c.tunables.find("glibc.malloc.hugetlb=2") != std::string::npos;
    return c;
}

std::string describe(const ThreadChoice& c) {
    return "CPU threads: " + std::to_string(c.threads) + " (" + (c.from.empty() ? "" : c.from + "; ") + "affinity " +
           std::to_string(c.affinity_cpus) + (c.affinity_cpus == 1 ? " CPU, " : " CPUs, ") +
           std::to_string(c.local_ranks) + (c.local_ranks == 1 ? " rank" : " ranks") + " on this node" +
           (c.sharing > 0 && c.local_ranks > 1 ? ", " + std::to_string(c.sharing) + " sharing these CPUs" : "") +
           "; OpenMP wait policy " + c.wait_policy + "; host memory in " +
           (c.huge_pages ? "huge pages where the kernel gives them (transparent huge pages: " +
                               c.transparent_huge_pages + ")"
                         : std::string("4 kB pages")) +
           (c.tunables.empty() ? "" : ", GLIBC_TUNABLES " + c.tunables) + ")";
}

int set_cpu_threads(int option, const std::string& option_name, int sharing) {
    if (option < 0)
        fail("option " + option_name, "must not be negative",
             "Give 0 (the CPUs this process may use, shared between the ranks of the node) or a thread count");
    const ThreadChoice c = choose_threads(option, option_name, sharing);
    // More threads than this process's CPUs wait for each other's time slices at every
    // barrier of a step: slower than one a core (a warning), and far beyond them (ten
    // thousand threads on two cores ran for minutes, a hundred thousand crashed libgomp)
    // a unit slip (refused). The ranks of a node may each be bound to their own CPUs
    // (mpirun binds to cores), so this process's affinity is the measure, not the node's.
    const std::string fix = option > 0 ? "Set " + option_name + " to 0 (the CPUs shared between the node's ranks) or "
                                       : std::string("Unset OMP_NUM_THREADS or set it ");
    const std::string bound = c.local_ranks > 1 ? " (under mpirun a rank may use only the CPUs it is bound to: "
                                                  "give each more with mpirun's --map-by ...:PE=N, or Slurm's "
                                                  "--cpus-per-task)"
                                                : "";
    if (c.threads > kMostThreadsPerCpu * c.affinity_cpus)
        fail(option > 0 ? "option " + option_name : std::string("OMP_NUM_THREADS"),
             std::to_string(c.threads) + " CPU threads on the " + std::to_string(c.affinity_cpus) +
                 " CPUs this process may use: each would wait for the others' cores",
             fix + "to at most " + std::to_string(c.affinity_cpus) + bound);
    omp_set_num_threads(c.threads);
    spdlog::info("{}", describe(c));
    if (c.threads > c.affinity_cpus)
        spdlog::warn("{} ({}) on the {} this process may use: the threads wait for each other's "
                     "cores, slower than one a core. {}to at most {}",
                     counted(c.threads, "CPU thread"), c.from, counted(c.affinity_cpus, "CPU"), fix, c.affinity_cpus);
    return c.threads;
}

int current_threads() { return omp_get_max_threads(); }
void use_threads(int n) { omp_set_num_threads(n); }

}  // namespace rtm
