#pragma once
// Where tests find things: the shared real-data folder (../shared/data beside the
// checkout, or $RTM_SHARED_DATA) and a scratch folder for files they write.
#include <cstdlib>
#include <filesystem>
#include <string>

#include "support/catch.hpp"

namespace rtm::test {

inline std::filesystem::path shared_data() {
    if (const char* env = std::getenv("RTM_SHARED_DATA")) return env;
    return std::filesystem::path(RTM_SOURCE_DIR) / ".." / "shared" / "data";
}

// Path to a file in the shared data folder, or an empty path after a visible SKIP
// message when it is absent. Use: auto p = shared_file("field/f3.sgy"); if (p.empty()) return;
inline std::filesystem::path shared_file(const std::string& rel) {
    auto p = shared_data() / rel;
    if (!std::filesystem::exists(p)) {
        WARN("SKIPPED: " << p.string() << " is absent (set RTM_SHARED_DATA to the shared/data folder)");
        return {};
    }
    return p;
}

// A fresh scratch directory for one test.
inline std::filesystem::path scratch(const std::string& name) {
    auto p = std::filesystem::temp_directory_path() / ("rtm-test-" + name);
    std::filesystem::remove_all(p);
    std::filesystem::create_directories(p);
    return p;
}

inline std::filesystem::path source_dir() { return RTM_SOURCE_DIR; }

}  // namespace rtm::test
