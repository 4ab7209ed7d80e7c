#pragma once
// CPU threads that behave on shared machines (issue 9, item 7), and host memory in huge
// pages (issue 12).
//
// libgomp's default wait policy spins for about 300 000 iterations at every barrier
// before it sleeps; two rtm processes on one 2-core machine each ran 21x slower so
// (81 s instead of 4.4 s). libgomp reads OMP_WAIT_POLICY and GOMP_SPINCOUNT once, when
// it is loaded, before main; so when the user set neither, rtm sets
// OMP_WAIT_POLICY=passive and executes itself again (same pid, same arguments).
//
// Large host arrays (a 3D window's domain, a shot's images, traces) are first touched
// in 4 kB page faults, one thread's zeroing at a time: with glibc.malloc.hugetlb=1 in
// GLIBC_TUNABLES (read by glibc at start, also before main) malloc asks the kernel for
// transparent huge pages, and a 3D migration of 4 shots (400 x 400 x 300, H200 host,
// 2026-11-23) took 19.9 s instead of 22.9 (its images to the host 0.55 s instead of
// 1.50, its set-up 1.83 s instead of 2.85) for 0.4% more peak memory. rtm adds it unless
// GLIBC_TUNABLES already names glibc.malloc.hugetlb (=0 keeps 4 kB pages).
#include <future>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace rtm {

// Called first thing in main. Returns (having done nothing) when the user set
// OMP_WAIT_POLICY or GOMP_SPINCOUNT and GLIBC_TUNABLES names glibc.malloc.hugetlb, or
// when this process is already the re-execution; else does not return unless the
// re-execution failed, in which case the defaults stay and the log line says so.
void set_startup_environment(char** argv);

struct ThreadChoice {
    int threads = 1;
    int affinity_cpus = 1;    // CPUs in this process's affinity mask (sched_getaffinity)
    int local_ranks = 1;      // ranks on this node (OMPI_COMM_WORLD_LOCAL_SIZE, MPI_LOCALNRANKS, SLURM_NTASKS_PER_NODE)
    int sharing = 0;          // of them, those whose CPUs overlap this process's (0: not known)
    std::string from;         // "option NAME", "OMP_NUM_THREADS" or "" (the default)
    std::string wait_policy;  // "passive", "active", "GOMP_SPINCOUNT=N" or "libgomp default (spins)"
    std::string tunables;     // GLIBC_TUNABLES
    bool huge_pages = false;  // it holds glibc.malloc.hugetlb=1 (or 2): asked of glibc (2.35 and later)
    std::string transparent_huge_pages;  // the kernel's mode: "always", "madvise", "never" or "unknown"
};

// option > 0 wins; else OMP_NUM_THREADS when set; else the CPUs of the affinity mask
// divided by the ranks that share them (`sharing`, when known: > 0), else by the ranks
// on this node; at least 1.
ThreadChoice choose_threads(int option, const std::string& option_name, int sharing = 0);

// This process's affinity mask, as bytes (sched_getaffinity), for ranks_sharing_cpus.
std::string affinity_mask();
// Of the ranks' affinity masks `masks` (affinity_mask(); those of one node), how many
// overlap masks[me], itself included: the ranks its CPUs are shared with. mpirun's
// --bind-to socket gives the ranks of a socket the same CPUs, --bind-to core and Slurm's
// --cpus-per-task each rank its own: dividing a rank's CPUs by all the node's ranks left
// half of a two-socket node idle, or 7 of a task's 8 CPUs.
int ranks_sharing_cpus(const std::vector<std::string>& masks, std::size_t me);

// "CPU threads: 2 (affinity 2 CPUs, 1 rank on this node; OpenMP wait policy passive)"
std::string describe(const ThreadChoice& c);

// Flushes float denormals to zero (FTZ and DAZ) in this thread and every OpenMP thread:
// decaying wavefields (damping layers, late times) reach float's denormal range, where
// some CPUs run arithmetic tens of times slower (seen: a migration shot 30x slower on
// the GPU machine's host); values below 1e-38 of a field that started near 1 change
// nothing we compute. main calls it first, so that every computation of the process
// (the stack's post-processing too) runs in one floating-point environment whichever
// backend propagated: a job's image is the same bit for bit whether its rank 0 ran
// shots on the CPU, on a GPU, or none. Threads made later inherit it.
void flush_denormals_to_zero();

// Chooses, applies (omp_set_num_threads), logs describe() at info level; returns the count.
// Throws naming the option (or OMP_NUM_THREADS) when it is negative or more than four
// threads a CPU of this process's affinity; warns beyond one a CPU.
int set_cpu_threads(int option, const std::string& option_name, int sharing = 0);

// This thread's OpenMP thread count (omp_get_max_threads), and setting it.
int current_threads();
void use_threads(int n);

// fn on a new thread with `share` of this thread's OpenMP threads (at least 1): a new
// thread starts from the process's default, not this rank's count (several ranks on a
// node would each take every core). Or, when !beside, deferred to the future's get(), on
// the caller's thread and threads. Every task rtm starts beside its work goes through here.
template <class Fn>
auto run_beside(bool beside, double share, Fn fn) -> std::future<std::invoke_result_t<Fn&>> {
    if (!beside) return std::async(std::launch::deferred, std::move(fn));
    const int n = current_threads() * share >= 1 ? int(current_threads() * share) : 1;
    return std::async(std::launch::async, [n, fn = std::move(fn)]() mutable {
        use_threads(n);
        return fn();
    });
}

}  // namespace rtm
