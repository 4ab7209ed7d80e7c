#pragma once
// Shell commands run by the tests, and mpirun as they run it.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/wait.h>

namespace rtm::test {

struct Result {
    int status = -1;  // exit code
    std::string output;  // stdout and stderr together
};

// Runs a shell command line; its exit code and what it wrote to stdout.
inline Result run_shell(const std::string& cmd) {
    Result r;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return r;
    std::array<char, 4096> buf;
    while (fgets(buf.data(), int(buf.size()), p)) r.output += buf.data();
    const int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

#ifdef RTM_MPIEXEC
// "mpirun ... -np RANKS " (to be followed by the program): root may run it (CI
// containers), ranks may outnumber the cores (--oversubscribe), one OpenMP thread a rank,
// and the library path passed on where it is set (the GPU machine's staged libraries).
inline std::string mpirun_command(int ranks) {
    return "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " + std::string(RTM_MPIEXEC) +
           " --oversubscribe -x OMP_NUM_THREADS=1" + (std::getenv("LD_LIBRARY_PATH") ? " -x LD_LIBRARY_PATH" : "") +
           " -np " + std::to_string(ranks) + " ";
}
#endif

}  // namespace rtm::test
