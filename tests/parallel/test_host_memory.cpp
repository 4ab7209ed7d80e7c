// The host memory a rank may plan for (core/host_memory.h): a cgroup's limit, the
// tightest along its path, read from cgroup v2 and v1 trees built here.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/host_memory.h"
#include "support/catch.hpp"
#include "support/test_data.h"

namespace fs = std::filesystem;
using rtm::detail::cgroup_memory;

namespace {

void put(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << text << "\n";
}

}  // namespace

TEST_CASE("a cgroup's memory limit is the tightest along the process's path, its room the limit less what is used") {
    const fs::path v2 = rtm::test::scratch("cgroup-v2"), v1 = rtm::test::scratch("cgroup-v1");
    const std::string none = (rtm::test::scratch("cgroup-none") / "absent").string();
    // v2, as Slurm's --mem sets it: the job's level limits, the step's below it does not.
    put(v2 / "memory.max", "max");  // (the root of a cgroup namespace)
    put(v2 / "slurm/job_7/memory.max", "8000000000");
    put(v2 / "slurm/job_7/memory.current", "3000000000");
    put(v2 / "slurm/job_7/memory.stat", "anon 2000000000\ninactive_file 600000000\nactive_file 400000000");
    put(v2 / "slurm/job_7/step_0/memory.max", "max");
    put(v2 / "slurm/job_7/step_0/memory.current", "2900000000");
    auto c = cgroup_memory("0::/slurm/job_7/step_0\n", v2.string(), none);
    CHECK(c.limit == 8e9);
    CHECK(c.room == 8e9 - (3e9 - 1e9));  // the files' page cache is dropped before anything is refused
    CHECK(c.file == (v2 / "slurm/job_7/memory.max").string());
    // A tighter level below wins.
    put(v2 / "slurm/job_7/step_0/memory.max", "2000000000");
    c = cgroup_memory("0::/slurm/job_7/step_0\n", v2.string(), none);
    CHECK(c.limit == 2e9);
    CHECK(c.room == 0);  // used beyond its limit: no room (not negative)
    // A container sees its own cgroup at the mount point, its path absent under it.
    put(v2 / "memory.max", "4000000000");
    put(v2 / "memory.current", "1000000000");
    c = cgroup_memory("0::/docker/abc\n", v2.string(), none);
    CHECK(c.limit == 4e9);
    CHECK(c.room == 3e9);

    // v1: the memory controller's line among the others; "no limit" is 2^63 rounded to a page.
    put(v1 / "memory.limit_in_bytes", "9223372036854771712");
    put(v1 / "process_api/abc/memory.limit_in_bytes", "9223372036854771712");
    const std::string lines = "9:name=systemd:/\n4:memory:/process_api/abc\n3:cpuset:/\n0::/\n";
    c = cgroup_memory(lines, none, v1.string());
    CHECK(c.limit == 0);  // none
    put(v1 / "process_api/memory.limit_in_bytes", "6000000000");
    put(v1 / "process_api/memory.usage_in_bytes", "2500000000");
    put(v1 / "process_api/memory.stat", "cache 10\ntotal_inactive_file 300000000\ntotal_active_file 200000000\n");
    c = cgroup_memory(lines, none, v1.string());
    CHECK(c.limit == 6e9);
    CHECK(c.room == 4e9);
    // Controllers named together ("memory,cpu") are found too.
    c = cgroup_memory("4:cpu,memory:/process_api/abc\n", none, v1.string());
    CHECK(c.limit == 6e9);
    // No cgroup file at all: no limit.
    CHECK(cgroup_memory("", v2.string(), v1.string()).limit == 0);
}

TEST_CASE("this process's host memory is at most the machine's and what is available is at most the total") {
    const rtm::HostMemory m = rtm::host_memory();
    REQUIRE(m.total > 0);
    CHECK(m.available >= 0);  // (0 where a cgroup is full or the address space used)
    CHECK(m.available <= m.total);
    CHECK(!m.limited_by.empty());
    // Shared by 4: a quarter each, of the machine's or the cgroup's (an address-space
    // limit, each process's own, can be the tighter one and is not divided).
    const rtm::HostMemory q = rtm::host_memory(4);
    CHECK(q.total <= m.total);
    CHECK((q.shared_by == 4 ? q.total == m.total / 4 : q.limited_by == "the address-space limit (ulimit -v) of"));
}

TEST_CASE("threads reserve a stack each and a 64 MB heap each but the main one, at most MALLOC_ARENA_MAX heaps") {
    // Under `ulimit -v` these are what a plan must leave: glibc maps each allocating
    // thread's heap as 64 MB of address space (HEAP_MAX_SIZE on 64-bit), and pthreads
    // map each stack at RLIMIT_STACK's size.
    const char* had = std::getenv("MALLOC_ARENA_MAX");
    const std::string saved = had ? had : "";
    unsetenv("MALLOC_ARENA_MAX");
    const double stack = rtm::thread_reserve(1), heap = 64.0 * (1 << 20);  // (the main thread: its stack alone)
    CHECK(stack > 0);
    CHECK(rtm::thread_reserve(16) == Approx(16 * stack + 15 * heap));
    setenv("MALLOC_ARENA_MAX", "2", 1);
    CHECK(rtm::thread_reserve(16) == Approx(16 * stack + heap));
    if (had) setenv("MALLOC_ARENA_MAX", saved.c_str(), 1);
    else unsetenv("MALLOC_ARENA_MAX");
}
