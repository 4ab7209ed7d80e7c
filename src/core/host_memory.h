#pragma once
// The process's peak resident memory, for the commands' summaries (docs/memory.md
// states what it should be; tests/app/test_cli_memory.cpp holds rtm to it).

namespace rtm {

// Peak resident set size of this process so far in bytes (VmHWM of /proc/self/status),
// or 0 where the system does not report it.
double peak_host_bytes();

// Memory the system can give this process now without swapping (MemAvailable of
// /proc/meminfo) in bytes, or 0 where the system does not report it.
double available_host_bytes();

}  // namespace rtm
