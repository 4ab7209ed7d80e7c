#pragma once
// A visible skip: a test that cannot run here (no GPU, no shared data, a missing tool)
// calls skip(why) and returns. The runner (catch_main.cpp) reports the run as skipped
// to CTest only when nothing at all was checked in it, so a case that skips one part
// and checks another still passes or fails on what it checked.
#include <iostream>
#include <string>

namespace rtm::test {

// CTest's SKIP_RETURN_CODE for our test runners (tests/CMakeLists.txt).
constexpr int kSkipExitCode = 77;

inline bool& skip_flag() {
    static bool flag = false;
    return flag;
}
inline bool skipped() { return skip_flag(); }

inline void skip(const std::string& why) {
    skip_flag() = true;
    std::cout << "SKIPPED: " << why << std::endl;
}

}  // namespace rtm::test
