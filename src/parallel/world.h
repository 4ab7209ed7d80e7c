#pragma once
// The processes of a job: MPI's world when rtm runs under mpirun or srun (and was built
// with MPI), one process otherwise. The same code runs either way; a build without MPI
// is one rank.
//
// Ranks are grouped by node (processes that share memory): the node-local rank picks
// the GPU, so one rank per GPU is `mpirun -np <GPUs>` on one node, or as many per node.
//
// A World may also stand for a part of the job (split): the ranks of one shot group,
// or the groups' leaders (parallel/shot_groups.h). Its collectives then involve only
// those ranks; rank() and size() are within it, node_rank() stays the process's.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace rtm::parallel {

class World {
public:
    // The world of this process (one rank until a Session has started MPI).
    static const World& get();

    int rank() const { return rank_; }
    int size() const { return size_; }
    int node_rank() const { return node_rank_; }  // among the ranks of this node
    int node_size() const { return node_size_; }
    bool root() const { return rank_ == 0; }
    std::string node_name() const { return node_name_; }

    void barrier() const;
    // Root's bytes to every rank (any size).
    void broadcast(void* data, std::size_t bytes) const;
    void broadcast(std::string& s) const;
    void broadcast(std::vector<std::string>& v) const;
    template <class T>
    void broadcast(std::vector<T>& v) const {  // T trivially copyable
        std::uint64_t n = v.size();
        broadcast(&n, sizeof n);
        v.resize(n);
        broadcast(v.data(), n * sizeof(T));
    }
    // Every rank's string, in rank order, on the root (empty elsewhere).
    std::vector<std::string> gather(const std::string& mine) const;
    // Combines every rank's array of `count` elements of `bytes` each into the root's,
    // with combine(in, inout, n) (associative and commutative); others' arrays are left
    // holding partial sums (a tree's inner ranks combine their subtrees' into their own).
    using Combine = void (*)(const void* in, void* inout, std::size_t n);
    void reduce_to_root(void* data, std::size_t count, std::size_t bytes, Combine combine) const;

    // Runs `what` on the root and shares its outcome: when it throws, every rank throws
    // an rtm::Error with the same message (logged once, by the root). Use it for work
    // that only the root does (reading a file, the job folder) before a collective.
    void on_root(const std::function<void()>& what) const;
    // Ends every rank at once (a rank that cannot go on while others wait for it).
    [[noreturn]] void abort(int code) const;

    // Collective: the ranks of equal `color` (>= 0) form a world each, ranked as here
    // (MPI_Comm_split). Without MPI: this one-rank world.
    World split(int color) const;
    // Every rank's bytes on every rank, in rank order (any sizes).
    std::vector<std::vector<char>> allgather(const void* data, std::size_t bytes) const;
    // Collective: the ranks of this process's node (in this world) whose CPUs overlap its
    // own, itself included (core/threads.h, ranks_sharing_cpus); 0 in a world of one rank
    // (not known: the environment's count of ranks on the node stands for it).
    int cpu_sharers() const;
    // Whether `mine` holds on every rank (a blocking AND over all ranks).
    bool all(bool mine) const;
    // As all(), for a rank that may meet the others elsewhere: when some rank does not
    // arrive within `seconds` (it waits in another collective, e.g. an exchange that this
    // rank left by an error), the job is ended, naming this rank, `what` and the wait.
    bool agree(bool mine, double seconds, const std::string& what) const;
    // Sends `bytes` to rank `to` while receiving `rbytes` from rank `from` (-1: none).
    void sendrecv(const void* data, std::size_t bytes, int to, void* rdata, std::size_t rbytes, int from) const;

private:
    friend class Session;
    friend struct Native;
    int rank_ = 0, size_ = 1, node_rank_ = 0, node_size_ = 1;
    std::string node_name_ = "localhost";
    int comm_ = 0;  // which communicator (world.cpp's table; 0: every rank)
};

// Whether a process manager (mpirun, srun, ...) started this process as a rank, from
// the environment it sets: even a world of one rank is then a launcher's child.
bool started_as_rank();

// Starts MPI for the life of main (when built with it, and started as a rank by mpirun
// or srun: a process started alone is one rank without MPI), and ends it.
class Session {
public:
    Session(int& argc, char**& argv);
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;
};

// "MPI (Open MPI 4.1.4)" or "no MPI (built without it)": for rtm --version.
std::string mpi_description();

// "parallel: N ranks, G per shot, N/G groups" ("parallel: 1 rank" alone).
std::string layout_description(int ranks_per_shot);

}  // namespace rtm::parallel
