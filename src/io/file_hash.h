#pragma once
// A fingerprint of a file's content, so a job can tell that an input it started
// with was replaced (even by a file of the same size).
#include <atomic>
#include <cstddef>
#include <initializer_list>
#include <string>

namespace rtm::io {

// XXH3 64-bit hash of the whole file, streamed (any size, constant memory), as 16
// hex digits. Errors name the file. When *stop turns true (another thread's), it
// returns "" within a megabyte's read.
std::string content_hash(const std::string& path, const std::atomic<bool>* stop = nullptr);

struct ByteRange {
    const void* data;
    std::size_t size;
};

// The same hash of bytes in memory, the pieces one after another: content_hash of a file
// that holds them gives the same digits.
std::string bytes_hash(std::initializer_list<ByteRange> pieces);

}  // namespace rtm::io
