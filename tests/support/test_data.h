#pragma once
// Where tests find things: the shared real-data folder (../shared/data beside the
// checkout, or $RTM_SHARED_DATA), a scratch folder for files they write, and the
// message of an expected error.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include "core/error.h"
#include "support/catch.hpp"
#include "support/skip.h"

namespace rtm::test {

inline std::filesystem::path shared_data() {
    if (const char* env = std::getenv("RTM_SHARED_DATA")) return env;
    return std::filesystem::path(RTM_SOURCE_DIR) / ".." / "shared" / "data";
}

// Path to a file in the shared data folder, or an empty path after a visible skip
// (support/skip.h) when it is absent. Use: auto p = shared_file("field/f3.sgy"); if (p.empty()) return;
inline std::filesystem::path shared_file(const std::string& rel) {
    auto p = shared_data() / rel;
    if (!std::filesystem::exists(p)) {
        skip(p.string() + " is absent (set RTM_SHARED_DATA to the shared/data folder)");
        return {};
    }
    return p;
}

// A fresh scratch directory for one test, under this process's own folder
// ($TMPDIR/rtm-test-XXXXXX, made by mkdtemp), so test processes run in parallel (ctest
// -j) never share one: a fixture one process writes (e.g. a shots file several test
// cases migrate) is not rebuilt under another that reads it. The folder is removed when
// the process ends, unless RTM_KEEP_SCRATCH is set (to look at a failed test's files:
// the path is printed then).
inline std::filesystem::path scratch(const std::string& name) {
    struct Root {
        std::filesystem::path path = [] {
            std::string t = (std::filesystem::temp_directory_path() / "rtm-test-XXXXXX").string();
            if (!::mkdtemp(t.data())) throw std::runtime_error("cannot make a scratch folder from " + t);
            return std::filesystem::path(t);
        }();
        ~Root() {
            std::error_code ec;
            if (std::getenv("RTM_KEEP_SCRATCH")) std::fprintf(stderr, "scratch files kept in %s\n", path.c_str());
            else std::filesystem::remove_all(path, ec);
        }
    };
    static const Root root;
    auto p = root.path / name;
    std::filesystem::remove_all(p);
    std::filesystem::create_directories(p);
    return p;
}

inline std::filesystem::path source_dir() { return RTM_SOURCE_DIR; }

// The message of the rtm::Error that `f` throws; fails the test when it throws none.
inline std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const rtm::Error& e) {
        return e.what();
    } catch (const std::exception& e) {
        FAIL("expected rtm::Error, got another exception: " << e.what());
    }
    FAIL("expected rtm::Error, nothing was thrown");
    return {};
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// ||a - ref|| / ||ref||: the relative L2 difference of two fields or trace sets of one size
// (either allocator: a migration's image is an UninitVector).
template <class A, class B>
double rel_l2(const std::vector<double, A>& a, const std::vector<double, B>& ref) {
    double d = 0, n = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        d += (a[i] - ref[i]) * (a[i] - ref[i]);
        n += ref[i] * ref[i];
    }
    return std::sqrt(d / n);
}

// The largest |value| of a field or trace set (either allocator).
template <class A>
double max_abs(const std::vector<double, A>& v) {
    double m = 0;
    for (double x : v) m = std::max(m, std::abs(x));
    return m;
}

}  // namespace rtm::test
