#pragma once
// The process's peak resident memory, for the commands' summaries (docs/memory.md
// states what it should be; tests/app/test_cli_memory.cpp holds rtm to it).

#include <string>

namespace rtm {

// Peak resident set size of this process so far in bytes (VmHWM of /proc/self/status),
// or 0 where the system does not report it.
double peak_host_bytes();

// The host memory this process may hold, in bytes: the machine's, or less where a
// limit says so. A job's plan and its automatic memory budget hold to it; a job that
// counted the machine's memory inside a tighter limit was killed by the kernel (a
// cgroup's OOM killer: no message, no output) or failed an allocation mid-shot.
// `sharers`: the processes that share the machine's (or the cgroup's) memory, such as
// the ranks of a node; each has its part of it. The address-space limit is each
// process's own, not shared.
struct HostMemory {
    double total = 0;      // this process's part: the most it may hold (0: not reported)
    double available = 0;  // of which it can have now without swapping (0: none, or not reported)
    // What sets `total`, to go before the whole amount in a message: "this machine's",
    // "the cgroup's limit (FILE) of" (what Slurm's --mem and containers set) or "the
    // address-space limit (ulimit -v) of"; `shared_by` processes share that amount (1
    // for the address-space limit).
    std::string limited_by;
    int shared_by = 1;
    // `total` for a message: "this machine's 24.7 GB, shared by the node's 4 ranks".
    std::string said() const;
};
HostMemory host_memory(int sharers = 1);

// The address space `threads` threads reserve beyond what they allocate: a stack each
// (RLIMIT_STACK, else 8 MB) and a 64 MB glibc heap for each but the main thread, up to
// MALLOC_ARENA_MAX heaps in all (the main one counted). Under an address-space limit,
// host_memory's `available` leaves it out (counting the threads already running too:
// conservative).
double thread_reserve(int threads);

namespace detail {

// The memory limit of the cgroup a process is in (`proc_cgroup`: the text of its
// /proc/self/cgroup), the tightest of its own and its parents', under the cgroup v2
// and v1 mount points `v2_root` and `v1_root`; `room` is that level's limit less its
// usage, the page cache of files (which the kernel reclaims before it kills) not counted
// as used. No limit: limit 0.
struct CgroupMemory {
    double limit = 0, room = 0;
    std::string file;  // the file that sets it
};
CgroupMemory cgroup_memory(const std::string& proc_cgroup, const std::string& v2_root, const std::string& v1_root);

}  // namespace detail

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
