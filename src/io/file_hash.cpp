#include "io/file_hash.h"

#include <cstdio>
#include <fstream>
#include <memory>
#include <vector>

#include <xxhash.h>

#include "core/error.h"

namespace rtm::io {

namespace {

using HashState = std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)>;

HashState start_hash(const std::string& what) {
    HashState state(XXH3_createState(), &XXH3_freeState);
    if (!state || XXH3_64bits_reset(state.get()) == XXH_ERROR) fail(what, "cannot start a content hash (out of memory?)");
    return state;
}

std::string digits(const HashState& state) {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(XXH3_64bits_digest(state.get())));
    return hex;
}

}  // namespace

std::string content_hash(const std::string& path, const std::atomic<bool>* stop) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path, "cannot be opened to fingerprint its content", "Check that the file exists and is readable");
    const HashState state = start_hash(path);
    std::vector<char> buf(std::size_t(1) << 20);
    while (in) {
        if (stop && *stop) return "";
        in.read(buf.data(), std::streamsize(buf.size()));
        if (in.gcount() > 0) XXH3_64bits_update(state.get(), buf.data(), std::size_t(in.gcount()));
    }
    if (in.bad()) fail(path, "a read failed while fingerprinting its content", "Check the file and the disk");
    return digits(state);
}

std::string bytes_hash(std::initializer_list<ByteRange> pieces) {
    const HashState state = start_hash("bytes in memory");
    for (const ByteRange& p : pieces) XXH3_64bits_update(state.get(), p.data, p.size);
    return digits(state);
}

}  // namespace rtm::io
