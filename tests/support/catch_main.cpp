// The test runner's main, for Catch2 v2 and v3 alike, with the one rule CTest's skip
// follows: a run that called rtm::test::skip() and checked nothing exits with
// kSkipExitCode (CTest: skipped); any failed check fails the run whatever it printed;
// a run that skipped one thing and checked another passes or fails on its checks. A run
// in which no test case ran fails: CTest names a case by its sentence, and a name that
// no longer matches (CTest cuts names at ';') would otherwise pass having run nothing.
#define RTM_CATCH_MAIN_TU
#include "support/catch.hpp"

#include <cstdint>
#include <iostream>

#ifdef RTM_CATCH3
#include <catch2/reporters/catch_reporter_event_listener.hpp>
#include <catch2/reporters/catch_reporter_registrars.hpp>
using ListenerBase = Catch::EventListenerBase;
#else
using ListenerBase = Catch::TestEventListenerBase;
#endif

#include "support/skip.h"

namespace {

std::uint64_t g_assertions = 0;  // passed + failed over the whole run
std::uint64_t g_cases = 0;       // test cases run

struct CountAssertions : ListenerBase {
    using ListenerBase::ListenerBase;
    void testRunEnded(Catch::TestRunStats const& stats) override {
        g_assertions = stats.totals.assertions.passed + stats.totals.assertions.failed +
                       stats.totals.assertions.failedButOk;
        g_cases = stats.totals.testCases.passed + stats.totals.testCases.failed +
                  stats.totals.testCases.failedButOk;
        ListenerBase::testRunEnded(stats);
    }
};

}  // namespace

CATCH_REGISTER_LISTENER(CountAssertions)

int main(int argc, char* argv[]) {
    const int failed = Catch::Session().run(argc, argv);
    if (failed != 0) return failed;
    if (g_cases == 0) {
        std::cerr << "no test case matched: check the test's name (CTest cuts names at ';')\n";
        return 1;
    }
    if (rtm::test::skipped() && g_assertions == 0) return rtm::test::kSkipExitCode;
    return 0;
}
