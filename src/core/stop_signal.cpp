#include "core/stop_signal.h"

#include <unistd.h>

namespace rtm {

namespace {

volatile std::sig_atomic_t g_stop_signal = 0;
volatile std::sig_atomic_t g_announce = 0;

extern "C" void on_stop_signal(int sig) {
    g_stop_signal = sig;
    if (!g_announce) return;
    // The only output a handler may make (write is async-signal-safe): the user who
    // pressed Ctrl-C learns that it was heard, and what a second one does.
    static const char kSaid[] = "\nrtm: stopping after the work under way (a second signal stops at once)\n";
    [[maybe_unused]] const auto n = ::write(STDERR_FILENO, kSaid, sizeof kSaid - 1);
}

}  // namespace

StopOnSignal::StopOnSignal(bool announce) {
    g_stop_signal = 0;
    g_announce = announce;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND | SA_RESTART;  // reads under way (segyio's fread) go on
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
    sigaction(SIGHUP, nullptr, &old_hup_);
    if (old_hup_.sa_handler != SIG_IGN) sigaction(SIGHUP, &sa, nullptr);  // (under nohup: ignored still)
}

StopOnSignal::~StopOnSignal() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
    sigaction(SIGHUP, &old_hup_, nullptr);
    g_stop_signal = 0;  // (a later modelling in the same process is not stopped by it)
}

int stop_signal() { return g_stop_signal; }

void ignore_broken_pipes() { std::signal(SIGPIPE, SIG_IGN); }

}  // namespace rtm
