#pragma once
// Runs the rtm executable as a user would and captures what it prints.
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

#include <segyio/segy.h>

#include "support/shell.h"

namespace rtm::test {

// rtm with `args`, `env` before it (e.g. "VAR=1 "); its output is stdout and stderr.
inline Result run_rtm(const std::string& args, const std::string& env = "") {
    return run_shell(env + RTM_BINARY + " " + args + " 2>&1");
}

#ifdef RTM_MPIEXEC
// rtm under mpirun on `ranks` ranks (support/shell.h), `env` before it (e.g. "VAR=1 ").
inline Result mpi_rtm(int ranks, const std::string& args, const std::string& env = "") {
    return run_shell(env + mpirun_command(ranks) + RTM_BINARY + " " + args + " 2>&1");
}
#endif

// The whole content of a file ("" when it is absent).
inline std::string bytes_of(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// A SEG-Y file's textual header as text (segyio reads rtm's EBCDIC as ASCII); "" when
// it cannot be read.
inline std::string textual_header(const std::filesystem::path& p) {
    segy_file* f = segy_open(p.string().c_str(), "rb");
    if (!f) return "";
    std::array<char, SEGY_TEXT_HEADER_SIZE + 1> text{};
    const bool ok = segy_read_textheader(f, text.data()) == SEGY_OK;
    segy_close(f);
    return ok ? std::string(text.data()) : "";
}

// rtm's two streams apart: stdout through a pipe, stderr into `err_file` (neither a terminal).
struct Streams {
    int status = -1;
    std::string out, err;
};
inline Streams run_rtm_apart(const std::string& args, const std::filesystem::path& err_file) {
    const Result r = run_shell(std::string(RTM_BINARY) + " " + args + " 2> " + err_file.string());
    return {r.status, r.output, bytes_of(err_file)};
}

// Starts `cmd` through sh, with SIGHUP and SIGPIPE at their defaults (a test runner that
// ignores them, nohup or some CI agents, would pass that on, and sh cannot undo it);
// its process id, or -1.
inline pid_t spawn_sh(const std::string& cmd) {
    const pid_t pid = fork();
    if (pid == 0) {
        std::signal(SIGHUP, SIG_DFL);
        std::signal(SIGPIPE, SIG_DFL);
        execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
    return pid < 0 ? -1 : pid;
}

// `cmd` through sh (spawn_sh); its exit status.
inline int run_with_default_signals(const std::string& cmd) {
    const pid_t pid = spawn_sh(cmd);
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Starts `rtm args` in the background (`shell` before it, e.g. "cd DIR && "), its output
// to `log`, and returns its process id once `log` or the file `watch` contains `text`
// (polled every 20 ms, for at most a minute); -1 when it could not start.
inline pid_t start_rtm(const std::string& args, const std::filesystem::path& log, const std::string& text,
                       const std::string& shell = "", const std::filesystem::path& watch = "") {
    const pid_t pid = spawn_sh(shell + "exec " + std::string(RTM_BINARY) + " " + args + " > " + log.string() + " 2>&1");
    if (pid < 0) return -1;
    const std::filesystem::path& where = watch.empty() ? log : watch;
    for (int i = 0; i < 3000 && bytes_of(where).find(text) == std::string::npos; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return pid;
}

// Sends `sig` to a process start_rtm started and returns its exit code, 128 + the signal
// when the signal ended it (as a shell says).
inline int end_rtm(pid_t pid, int sig) {
    kill(pid, sig);
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

// Starts `rtm args` in the background, its output to `log`, and once `log` or the file
// `watch` contains `text` sends it `sig`; returns its exit code (end_rtm).
inline int interrupt_rtm(const std::string& args, const std::filesystem::path& watch, const std::string& text, int sig,
                         const std::filesystem::path& log = "/dev/null") {
    const pid_t pid = start_rtm(args, log, text, "", watch);
    return pid < 0 ? -1 : end_rtm(pid, sig);
}

}  // namespace rtm::test
