// The content hash of a job's inputs (its fingerprint): the same for the same bytes,
// another for one changed byte of a file of the same size, an error naming a missing
// file, and "" at once when asked to stop (a job that failed before it needed it).
#include <atomic>
#include <fstream>
#include <string>

#include "io/file_hash.h"
#include "support/test_data.h"

using namespace rtm;
using namespace rtm::test;

TEST_CASE("a file's content hash follows its bytes, names a missing file, and stops when asked") {
    const auto dir = scratch("file-hash");
    const auto write = [&](const char* name, char last) {
        std::ofstream out(dir / name, std::ios::binary);
        const std::string body(3 << 20, 'x');  // three 1 MB reads
        out << body << last;
        return (dir / name).string();
    };
    const std::string a = write("a.bin", 'a'), b = write("b.bin", 'b'), a2 = write("a2.bin", 'a');
    CHECK(io::content_hash(a).size() == 16);
    CHECK(io::content_hash(a) == io::content_hash(a2));
    CHECK(io::content_hash(a) != io::content_hash(b));
    CHECK_THAT(error_of([&] { io::content_hash((dir / "absent.bin").string()); }), Catch::Matchers::Contains("absent.bin"));
    const std::atomic<bool> stop{true};
    CHECK(io::content_hash(a, &stop).empty());
}

// A job's stack is hashed in memory as it is committed, and again as it is read back
// (pipeline/migration_job.cpp): the same digits as the file that holds the bytes.
TEST_CASE("the hash of bytes in memory, in pieces, is the content hash of a file holding them") {
    const auto dir = scratch("bytes-hash");
    const std::string first(3 << 20, 'x'), second = "tail";  // a piece longer than one 1 MB read
    std::ofstream(dir / "both.bin", std::ios::binary) << first << second;
    const std::string in_memory = io::bytes_hash({{first.data(), first.size()}, {second.data(), second.size()}});
    CHECK(in_memory == io::content_hash((dir / "both.bin").string()));
    CHECK(in_memory != io::bytes_hash({{first.data(), first.size()}}));
}
