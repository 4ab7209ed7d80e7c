#pragma once
// SIGINT, SIGTERM or SIGHUP (Ctrl-C, a scheduler's stop, a closed terminal or ssh
// session) asks a long command to stop at its next safe point (after the shot or batch
// under way) instead of dying mid-write: the command checks stop_signal() between units
// of work, leaves its outputs whole and exits with 128 + the signal. A second signal
// kills at once (SA_RESETHAND). A SIGHUP that is ignored (nohup) stays ignored.
#include <csignal>

namespace rtm {

// Installs the handlers for its lifetime (the previous ones come back after it).
// `announce`: the handler says on stderr that the signal was heard (one rank of a job
// says it, not every one).
class StopOnSignal {
public:
    explicit StopOnSignal(bool announce);
    ~StopOnSignal();
    StopOnSignal(const StopOnSignal&) = delete;
    StopOnSignal& operator=(const StopOnSignal&) = delete;

private:
    struct sigaction old_int_ {}, old_term_ {}, old_hup_ {};
};

// The signal received while the StopOnSignal alive now was, or 0.
int stop_signal();

// Ignores SIGPIPE for the whole process: a log line to a pipe whose reader has gone (`|
// head`, a dead tee) is then lost (the logger drops a failed write), instead of the job
// being killed mid-shot without a checkpoint or a word. Called by main for the jobs.
void ignore_broken_pipes();

}  // namespace rtm
