#include "parallel/world.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "core/error.h"
#include "core/threads.h"

#include <chrono>
#include <thread>

#include "parallel/native.h"

namespace rtm::parallel {

namespace {
World g_world;
}

const World& World::get() { return g_world; }

// The environment each process manager sets in its ranks (Open MPI, PMIx, PMI and
// Hydra, Slurm, Cray PALS and ALPS, MVAPICH). A process started alone is a world of one
// rank without MPI at all: MPI_Init's singleton start (Open MPI starts a helper daemon)
// took 0.4 s of every command, a quarter of a 16-shot 2D migration on an H200. A
// launcher missing here would start N one-rank jobs: where in doubt (any Slurm task),
// MPI starts.
bool started_as_rank() {
    for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALNRANKS",
                          "SLURM_PROCID", "PALS_RANKID", "ALPS_APP_PE", "MV2_COMM_WORLD_RANK"})
        if (std::getenv(v)) return true;
    return false;
}

#ifdef RTM_HAVE_MPI

namespace {

bool mpi_on() {
    int init = 0, done = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&done);
    return init && !done;
}

// The communicators Worlds stand for: MPI_COMM_WORLD first, then those split from it
// (a handful per job: they live as long as the process).
std::vector<MPI_Comm> g_comms{MPI_COMM_WORLD};

// MPI counts are int: large buffers go in pieces of 1 GB. RTM_MPI_CHUNK_BYTES sets a
// smaller piece, for tests of the many-piece paths without gigabytes of memory.
std::size_t chunk_bytes() {
    static const std::size_t chunk = [] {
        const char* e = std::getenv("RTM_MPI_CHUNK_BYTES");
        const long long v = e ? std::atoll(e) : 0;
        return v > 0 ? std::size_t(std::min<long long>(v, INT_MAX)) : std::size_t(1) << 30;
    }();
    return chunk;
}


}  // namespace

MPI_Comm Native::comm(const World& w) { return g_comms[std::size_t(w.comm_)]; }

Session::Session(int& argc, char**& argv) {
    if (!started_as_rank()) {
        char name[256] = {};
        if (gethostname(name, sizeof name - 1) == 0 && name[0]) g_world.node_name_ = name;
        return;  // (every collective of a world of one rank is the identity: no MPI call)
    }
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_world.rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &g_world.size_);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_world.rank_, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &g_world.node_rank_);
    MPI_Comm_size(node, &g_world.node_size_);
    MPI_Comm_free(&node);
    char name[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    MPI_Get_processor_name(name, &len);
    g_world.node_name_.assign(name, std::size_t(len));
    // An error on one rank ends the job (World::abort) rather than leaving others in a
    // collective; MPI's own errors return codes we turn into rtm::Error.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

Session::~Session() {
    if (mpi_on()) MPI_Finalize();
}

namespace {
void check(int rc, const char* what) {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    fail(std::string("MPI ") + what, std::string(text, std::size_t(len)), "Check the MPI installation and the job's ranks");
}
}  // namespace

void World::barrier() const {
    if (size_ > 1) check(MPI_Barrier(Native::comm(*this)), "barrier");
}

void World::broadcast(void* data, std::size_t bytes) const {
    if (size_ == 1) return;
    const std::size_t chunk = chunk_bytes();
    for (std::size_t at = 0; at < bytes; at += chunk)
        check(MPI_Bcast(static_cast<char*>(data) + at, int(std::min(chunk, bytes - at)), MPI_BYTE, 0, Native::comm(*this)),
              "broadcast");
}

std::vector<std::string> World::gather(const std::string& mine) const {
    if (size_ == 1) return {mine};
    if (mine.size() > INT_MAX) fail("MPI gather", "a rank's report is over 2 GB", "Internal error");
    int n = int(mine.size());
    std::vector<int> counts(root() ? size_ : 0), at(root() ? size_ : 0);
    check(MPI_Gather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, Native::comm(*this)), "gather");
    std::string all;
    if (root()) {
        long total = 0;
        for (int r = 0; r < size_; ++r) at[r] = int(total), total += counts[r];
        if (total > INT_MAX) fail("MPI gather", "the ranks' reports are over 2 GB", "Internal error");
        all.resize(std::size_t(total));
    }
    check(MPI_Gatherv(mine.data(), n, MPI_CHAR, all.data(), counts.data(), at.data(), MPI_CHAR, 0, Native::comm(*this)),
          "gather");
    std::vector<std::string> out;
    if (root())
        for (int r = 0; r < size_; ++r) out.push_back(all.substr(std::size_t(at[r]), std::size_t(counts[r])));
    return out;
}

void World::reduce_to_root(void* data, std::size_t count, std::size_t bytes, Combine combine) const {
    if (size_ == 1 || count == 0) return;
    // A binomial tree of plain sends and receives, in pieces of at most 64 MB, each piece
    // received while the one before is combined (combine runs on this rank's threads).
    // MPI_Reduce called a user operation on segments of a few kB, on one thread, and
    // moved the 3 GB of a 3D job's exact sums from 2 ranks in 0.94 s (H200 host): the
    // reduction was most of a 2-GPU job's serial end. Any tree gives the same bytes:
    // combine is exact (associative and commutative).
    constexpr int kTag = 8;
    const std::size_t per = std::max<std::size_t>(1, std::min<std::size_t>(chunk_bytes(), std::size_t(64) << 20) / bytes);
    char* mine = static_cast<char*>(data);
    std::vector<char> pieces[2];
    for (int step = 1; step < size_; step <<= 1) {
        if (rank_ & step) {  // this rank's part goes to rank - step; its work ends
            for (std::size_t at = 0; at < count; at += per)
                check(MPI_Send(mine + at * bytes, int(std::min(per, count - at) * bytes), MPI_BYTE, rank_ - step, kTag,
                               Native::comm(*this)),
                      "reduce (send)");
            return;
        }
        const int from = rank_ + step;
        if (from >= size_) continue;
        for (auto& b : pieces) b.resize(per * bytes);
        MPI_Request pending = MPI_REQUEST_NULL;
        auto receive = [&](std::size_t at) {
            check(MPI_Irecv(pieces[(at / per) % 2].data(), int(std::min(per, count - at) * bytes), MPI_BYTE, from, kTag,
                            Native::comm(*this), &pending),
                  "reduce (receive)");
        };
        receive(0);
        for (std::size_t at = 0; at < count; at += per) {
            check(MPI_Wait(&pending, MPI_STATUS_IGNORE), "reduce (receive)");
            if (at + per < count) receive(at + per);
            combine(pieces[(at / per) % 2].data(), mine + at * bytes, std::min(per, count - at));
        }
    }
}

void World::abort(int code) const {
    if (g_world.size_ > 1 && mpi_on()) MPI_Abort(MPI_COMM_WORLD, code);
    std::exit(code);
}

World World::split(int color) const {
    World w = *this;
    if (size_ == 1) return w;
    MPI_Comm c;
    check(MPI_Comm_split(Native::comm(*this), color, rank_, &c), "split");
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_Comm_rank(c, &w.rank_);
    MPI_Comm_size(c, &w.size_);
    w.comm_ = int(g_comms.size());
    g_comms.push_back(c);
    return w;
}

std::vector<std::vector<char>> World::allgather(const void* data, std::size_t bytes) const {
    if (size_ == 1) return {std::vector<char>(static_cast<const char*>(data), static_cast<const char*>(data) + bytes)};
    // The parts' sizes, then rounds of at most one piece from each rank (a z-slab's part
    // of a large 3D shot image is gigabytes: no MPI count may pass INT_MAX).
    const std::uint64_t n = bytes;
    std::vector<std::uint64_t> sizes(static_cast<std::size_t>(size_));
    check(MPI_Allgather(&n, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, Native::comm(*this)), "allgather");
    std::vector<std::vector<char>> out;
    for (const std::uint64_t z : sizes) out.emplace_back(static_cast<std::size_t>(z));
    // A round's pieces together stay under INT_MAX (its counts and displacements are int).
    const std::size_t chunk = std::max<std::size_t>(1, std::min(chunk_bytes(), std::size_t(INT_MAX) / std::size_t(size_)));
    const std::size_t most = *std::max_element(sizes.begin(), sizes.end());
    std::vector<int> counts(static_cast<std::size_t>(size_)), at(static_cast<std::size_t>(size_));
    std::vector<char> round;
    for (std::size_t off = 0; off < most || off == 0; off += chunk) {
        int total = 0;
        for (std::size_t r = 0; r < sizes.size(); ++r) {
            counts[r] = int(std::min<std::uint64_t>(chunk, sizes[r] > off ? sizes[r] - off : 0));
            at[r] = total;
            total += counts[r];
        }
        round.resize(std::size_t(total));
        check(MPI_Allgatherv(static_cast<const char*>(data) + std::min(off, bytes), counts[std::size_t(rank_)],
                             MPI_BYTE, round.data(), counts.data(), at.data(), MPI_BYTE, Native::comm(*this)),
              "allgather");
        for (std::size_t r = 0; r < sizes.size(); ++r)
            if (counts[r] > 0)
                std::copy(round.begin() + at[r], round.begin() + at[r] + counts[r], out[r].begin() + std::ptrdiff_t(off));
        if (most == 0) break;
    }
    return out;
}

bool World::all(bool mine) const {
    if (size_ == 1) return mine;
    int in = mine, out = 0;
    check(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LAND, Native::comm(*this)), "allreduce");
    return out != 0;
}

bool World::agree(bool mine, double seconds, const std::string& what) const {
    if (size_ == 1) return mine;
    int in = mine, out = 0;
    MPI_Request req;
    check(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_LAND, Native::comm(*this), &req), "allreduce");
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    for (int done = 0;;) {
        check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "allreduce");
        if (done) return out != 0;
        if (std::chrono::steady_clock::now() > until) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    const World& job = World::get();
    std::fprintf(stderr, "rtm: rank %d of %d: %s; the other ranks of its shot group did not come to agree within "
                         "%.0f s (they wait elsewhere, e.g. in the exchange this rank left): ending the job "
                         "(run the same command again to resume)\n", job.rank(), job.size(), what.c_str(), seconds);
    job.abort(1);
}

void World::sendrecv(const void* data, std::size_t bytes, int to, void* rdata, std::size_t rbytes, int from) const {
    if (bytes > INT_MAX || rbytes > INT_MAX) fail("MPI exchange", "a message over 2 GB", "Use more ranks per shot");
    check(MPI_Sendrecv(data, int(bytes), MPI_BYTE, to < 0 ? MPI_PROC_NULL : to, 7, rdata, int(rbytes), MPI_BYTE,
                       from < 0 ? MPI_PROC_NULL : from, 7, Native::comm(*this), MPI_STATUS_IGNORE),
          "exchange");
}

std::string mpi_description() {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    std::string v(version, std::size_t(len));
    v = v.substr(0, v.find_first_of(",\n"));
    return "MPI (" + v + ")";
}

#else  // one process: every collective is the identity

Session::Session(int&, char**&) {}
Session::~Session() = default;
void World::barrier() const {}
void World::broadcast(void*, std::size_t) const {}
std::vector<std::string> World::gather(const std::string& mine) const { return {mine}; }
void World::reduce_to_root(void*, std::size_t, std::size_t, Combine) const {}
void World::abort(int code) const { std::exit(code); }
World World::split(int) const { return *this; }
std::vector<std::vector<char>> World::allgather(const void* data, std::size_t bytes) const {
    return {std::vector<char>(static_cast<const char*>(data), static_cast<const char*>(data) + bytes)};
}
bool World::all(bool mine) const { return mine; }
bool World::agree(bool mine, double, const std::string&) const { return mine; }
void World::sendrecv(const void*, std::size_t, int, void*, std::size_t, int) const {
    fail("exchange", "a rank has no neighbours without MPI", "Internal error");
}
std::string mpi_description() { return "no MPI (built without it: one rank)"; }

#endif

int World::cpu_sharers() const {
    if (size_ == 1) return 0;
    const std::string mine = node_name_ + '\0' + affinity_mask();
    const auto all = allgather(mine.data(), mine.size());
    std::vector<std::string> masks;  // of this node's ranks
    std::size_t me = 0;
    for (std::size_t r = 0; r < all.size(); ++r) {
        const std::string s(all[r].begin(), all[r].end());
        const std::size_t cut = s.find('\0');
        if (cut == std::string::npos || s.compare(0, cut, node_name_) != 0 || cut != node_name_.size()) continue;
        if (int(r) == rank_) me = masks.size();
        masks.push_back(s.substr(cut + 1));
    }
    return ranks_sharing_cpus(masks, me);
}

void World::broadcast(std::string& s) const {
    std::uint64_t n = s.size();
    broadcast(&n, sizeof n);
    s.resize(n);
    broadcast(s.data(), n);
}

void World::broadcast(std::vector<std::string>& v) const {
    std::uint64_t n = v.size();
    broadcast(&n, sizeof n);
    v.resize(n);
    for (auto& s : v) broadcast(s);
}

void World::on_root(const std::function<void()>& what) const {
    std::string error;
    if (root()) try {
            what();
        } catch (const std::exception& e) {
            error = e.what();
            if (size_ == 1) throw;
        }
    broadcast(error);
    if (error.empty()) return;
    if (root()) throw Error(error);
    throw ReportedError(error);
}

std::string layout_description(int per_shot) {
    const World& w = World::get();
    if (w.size() == 1) return "parallel: 1 rank";
    return "parallel: " + std::to_string(w.size()) + " ranks, " + std::to_string(per_shot) + " per shot, " +
           std::to_string(w.size() / per_shot) + " groups";
}

}  // namespace rtm::parallel
