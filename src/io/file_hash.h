#pragma once
// A fingerprint of a file's content, so a job can tell that an input it started
// with was replaced (even by a file of the same size).
#include <atomic>
#include <string>

namespace rtm::io {

// XXH3 64-bit hash of the whole file, streamed (any size, constant memory), as 16
// hex digits. Errors name the file. When *stop turns true (another thread's), it
// returns "" within a megabyte's read.
std::string content_hash(const std::string& path, const std::atomic<bool>* stop = nullptr);

}  // namespace rtm::io
