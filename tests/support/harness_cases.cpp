// Cases for the runner's own test (check_harness.cmake runs each alone and checks the
// exit code). Hidden ([.]) so that no other run picks them up.
#include "support/catch.hpp"
#include "support/skip.h"

TEST_CASE("skips and checks nothing", "[.harness]") { rtm::test::skip("nothing to check here"); }

TEST_CASE("skips one part and fails a check in another", "[.harness]") {
    rtm::test::skip("the first part cannot run here");
    CHECK(1 + 1 == 3);
}

TEST_CASE("skips one part and passes a check in another", "[.harness]") {
    rtm::test::skip("the first part cannot run here");
    CHECK(1 + 1 == 2);
}
