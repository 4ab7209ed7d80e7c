// rtm bench on the GPU says what clocks it timed at (bench/gpu_clocks.h): a board at
// its power limit lowers its SM clock after a second or so of work, so a short bench
// and a long job see different rates. Every GPU row and the ceiling carry the SM clock
// and power sampled while they were timed, and --sustain runs each of them that long
// first.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "app/run_rtm.h"
#include "gpu_test.h"
#include "support/test_data.h"

using namespace rtm::test;

TEST_CASE("rtm bench on the GPU gives the clocks and power each row was timed at after --sustain seconds", "[gpu]") {
    if (!gpu_or_skip()) return;
    const auto json = scratch("gpu-bench-clocks") / "bench.json";
    const double sustain = 1.5;
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = run_rtm("bench --device gpu --grid 256x256x128 --steps 10 --repeats 3 --variant t32x16,q32x8"
                           " --sustain 1.5 --json " + json.string());
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    INFO(r.output);
    REQUIRE(r.status == 0);
    // The copy ceiling and both kernels each ran `sustain` seconds before being timed.
    CHECK(wall >= 3 * sustain);
    std::ifstream in(json);
    const auto j = nlohmann::json::parse(in);
    REQUIRE(j["rows"].size() == 2);
    std::vector<nlohmann::json> timed = {j["ceiling"]["gpu"], j["rows"][0]["gpu"], j["rows"][1]["gpu"]};
    for (const auto& g : timed) {
        INFO(g.dump());
        // NVML is the driver's own library: a machine that runs CUDA kernels has it.
        REQUIRE(g.is_object());
        const double mhz = g["sm_MHz"], max_mhz = g["max_sm_MHz"], w = g["power_W"], limit = g["power_limit_W"];
        // A working SM clock (boards idle near 300 MHz and run kernels above 1 GHz) no
        // higher than the board's top clock; power positive and within the limit's
        // reach (the driver averages power over a window, so a sample can pass the
        // limit briefly: 20% allowed).
        CHECK(mhz > 0);
        CHECK(mhz <= max_mhz);
        CHECK(w > 0);
        CHECK(w <= 1.2 * limit);
        const double capped = g["power_capped_share"];
        CHECK((capped >= 0 && capped <= 1));
    }
    CHECK_THAT(r.output, Catch::Matchers::Contains(" MHz, ") && Catch::Matchers::Contains(" W"));
}
