#pragma once
// Where rtm's messages go: one logger with two sinks, info and debug (results,
// progress) to stdout, warnings and errors to stderr. Colour only on a terminal.
namespace rtm::app {

// Makes that logger the default one, and a second one for messages every rank prints
// (core/log.h); under mpirun lines carry the rank. SPDLOG_LEVEL=debug in the
// environment shows the debug messages (spdlog's own convention).
void set_up_logging(int rank = 0, int ranks = 1);

}  // namespace rtm::app
