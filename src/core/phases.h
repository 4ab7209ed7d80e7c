#pragma once
// Where a command's wall time went, phase by phase (issue 12: "measure the whole job"):
// the host work around the propagation (reading, set-up, moving traces and images,
// writing) is what keeps a GPU idle, and this names it. Each rank adds up its own
// phases; the commands log them at the end ("time by phase: ...").
//
// Phases are leaves: a timed block does not contain another, so on one thread the sum is
// at most the wall time and the rest is "other". Work done in the background (a batch's
// traces written while the next one propagates) overlaps the main thread's phases, and
// "other" is then what is left, at least 0. Thread-safe.
#include <chrono>
#include <string>

namespace rtm {

// Adds the span [start, end) to the phase `name` (a string literal; phases keep their
// first order).
void add_phase_span(const char* name, std::chrono::steady_clock::time_point start,
                    std::chrono::steady_clock::time_point end);
// "read 1.2 s, set-up 5.1 s, ..., other 0.3 s (of 7.0 s since start)": the phases so far
// (those under 5 ms left out) and the rest of the process's wall time.
std::string phase_summary();
// The process's wall time so far, from its start (as phase_summary counts it): what a
// command's summary divides by (issue 12: GPU busy = kernel time / the whole command).
double seconds_since_start();

// With RTM_TIMELINE=FILE in the environment, every span is also kept with its thread,
// and write_timeline writes them as Chrome trace events (JSON: open the file in
// https://ui.perfetto.dev or chrome://tracing) to FILE on rank 0, FILE.rankN on rank N:
// which thread did what when, so the gaps where a GPU waited on the host can be seen.
// Returns the file written, or "" when RTM_TIMELINE is not set or the file cannot be
// written (a warning names it: the job's products are written by then).
std::string write_timeline(int rank);

// Times the rest of its scope as phase `name`.
class PhaseTimer {
public:
    explicit PhaseTimer(const char* name) : name_(name), start_(std::chrono::steady_clock::now()) {}
    ~PhaseTimer() { stop(); }
    void stop() {  // ends the phase early (later calls do nothing)
        if (!name_) return;
        add_phase_span(name_, start_, std::chrono::steady_clock::now());
        name_ = nullptr;
    }
    PhaseTimer(const PhaseTimer&) = delete;
    PhaseTimer& operator=(const PhaseTimer&) = delete;

private:
    const char* name_;
    std::chrono::steady_clock::time_point start_;
};

}  // namespace rtm
