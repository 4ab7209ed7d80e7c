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

// Keeps freed heap memory in the process for reuse (glibc's trim and mmap thresholds
// fixed high) instead of returning it to the system at each free. Per-trace and per-shot
// scratch of a few hundred kB to tens of MB was mapped, faulted in page by page and
// unmapped again at every use; with 16 threads doing it at once (trace transforms) the
// address-space lock serialised them, and on the GPU machine (gVisor) page faults are
// dear: a 2D shot's receiver data took 167 ms, 6x its arithmetic (issue 12, item 3).
// Called first thing in main; the peak resident memory (VmHWM) is unchanged, since
// kept memory is what the next allocation of the same size takes.
void keep_freed_memory();

}  // namespace rtm
