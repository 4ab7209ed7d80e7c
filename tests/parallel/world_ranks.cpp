// A small MPI program for test_world_mpi.cpp: the World operations that shot groups and
// z-slabs use, run under mpirun. Prints "rank R: ok" when every check of its mode holds.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "parallel/world.h"

using rtm::parallel::World;

namespace {

int failures = 0;
void check(bool ok, const char* what) {
    if (!ok) {
        std::printf("rank %d: FAILED %s\n", World::get().rank(), what);
        ++failures;
    }
}

// -np 4: two pairs (split by rank / 2), each exchanging, gathering and agreeing alone.
void collectives() {
    const World& w = World::get();
    const World pair = w.split(w.rank() / 2);
    check(pair.size() == 2 && pair.rank() == w.rank() % 2, "split: pairs of consecutive ranks, ranked as in the world");
    const int me = w.rank(), other = pair.rank() == 0 ? 1 : 0;
    const auto parts = pair.allgather(&me, sizeof me);
    int first = -1, second = -1;
    std::memcpy(&first, parts[0].data(), sizeof first);
    std::memcpy(&second, parts[1].data(), sizeof second);
    check(parts.size() == 2 && first == w.rank() / 2 * 2 && second == first + 1, "allgather: the pair's ranks in order");
    // Different sizes per rank: rank r sends r + 1 bytes.
    const std::string mine(std::size_t(me + 1), char('a' + me));
    const auto texts = pair.allgather(mine.data(), mine.size());
    check(texts[std::size_t(pair.rank())].size() == mine.size() && texts[std::size_t(other)].size() == std::size_t(w.rank() / 2 * 2 + other + 1),
          "allgather: each rank's own size");
    int got = -1;
    pair.sendrecv(&me, sizeof me, other, &got, sizeof got, other);
    check(got == w.rank() / 2 * 2 + other, "sendrecv: the partner's rank");
    got = -7;
    pair.sendrecv(&me, 0, -1, &got, 0, -1);  // no neighbour: nothing moves
    check(got == -7, "sendrecv with no neighbour leaves the buffer");
    // Rank 3 says no: only its pair hears it.
    check(pair.all(me != 3) == (w.rank() < 2), "all: the pair's own answer");
    check(pair.agree(me != 3, 30, "test") == (w.rank() < 2), "agree: the pair's own answer");
    long v = pair.rank() == 0 ? 42 + w.rank() : 0;
    pair.broadcast(&v, sizeof v);
    check(v == 42 + w.rank() / 2 * 2, "broadcast: from the pair's first rank");
}

// Large buffers go over MPI in pieces (int counts); RTM_MPI_CHUNK_BYTES = 1000 makes
// small ones take many pieces: parts of different sizes (one empty), a broadcast, a
// reduction of 24-byte records, each checked value by value.
void pieces() {
    const World& w = World::get();
    const auto byte = [](int r, std::size_t i) { return char((r * 31 + int(i)) % 251); };
    const auto size_of = [](int r) { return r == 1 ? std::size_t(0) : std::size_t(2500 + 777 * r); };
    std::string mine(size_of(w.rank()), '\0');
    for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = byte(w.rank(), i);
    const auto parts = w.allgather(mine.data(), mine.size());
    bool same = int(parts.size()) == w.size();
    for (int r = 0; same && r < w.size(); ++r) {
        same = parts[std::size_t(r)].size() == size_of(r);
        for (std::size_t i = 0; same && i < parts[std::size_t(r)].size(); ++i) same = parts[std::size_t(r)][i] == byte(r, i);
    }
    check(same, "allgather in pieces: every part, every byte");
    std::string b(5003, '\0');
    if (w.root())
        for (std::size_t i = 0; i < b.size(); ++i) b[i] = byte(7, i);
    w.broadcast(b.data(), b.size());
    same = true;
    for (std::size_t i = 0; i < b.size(); ++i) same = same && b[i] == byte(7, i);
    check(same, "broadcast in pieces");
    struct Record { long a, b, c; };
    std::vector<Record> v(1000);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = {long(i), long(w.rank()), 1};
    w.reduce_to_root(v.data(), v.size(), sizeof(Record), [](const void* in, void* inout, std::size_t n) {
        const Record* x = static_cast<const Record*>(in);
        Record* y = static_cast<Record*>(inout);
        for (std::size_t k = 0; k < n; ++k) y[k] = {x[k].a + y[k].a, x[k].b + y[k].b, x[k].c + y[k].c};
    });
    if (w.root()) {
        const long ranks = w.size(), rank_sum = ranks * (ranks - 1) / 2;
        same = true;
        for (std::size_t i = 0; i < v.size(); ++i) same = same && v[i].a == long(i) * ranks && v[i].b == rank_sum && v[i].c == ranks;
        check(same, "reduce_to_root in pieces: every record");
    }
}

}  // namespace

int main(int argc, char** argv) {
    rtm::parallel::Session session(argc, argv);
    const World& w = World::get();
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "collectives") collectives();
    else if (mode == "pieces") {
        setenv("RTM_MPI_CHUNK_BYTES", "1000", 1);  // before the first piece is cut
        pieces();
    }
    else if (mode == "agree-timeout") {
        // Rank 1 waits elsewhere (a barrier rank 0 never joins), as a member left in an
        // exchange by another's error: rank 0 gives up after 1 s and ends the job.
        if (w.rank() == 0) w.agree(false, 1, "shot 7 failed: a test's reason");
        else w.barrier();
        std::printf("rank %d: not ended\n", w.rank());
        return 1;
    } else if (mode == "sharers") {
        // How many of the node's ranks share this rank's CPUs (the test chooses mpirun's binding).
        const int n = w.cpu_sharers();
        std::printf("rank %d: sharers %d\n", w.rank(), n);
    } else {
        std::printf("usage: world_ranks collectives|pieces|agree-timeout|sharers\n");
        return 2;
    }
    std::printf("rank %d: %s\n", w.rank(), failures ? "failed" : "ok");
    return failures ? 1 : 0;
}
