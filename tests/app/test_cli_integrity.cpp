// What a migration job folder holds is checked before it is used, so that neither an
// input nor a damaged folder gives a wrong image (or loses data) with exit 0: inputs
// that are files the job writes, a damaged stack or rank checkpoint, a state.json with
// fields rtm did not write, a complete job's products missing or changed.
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_jobs.h"
#include "run_rtm.h"
#include "support/catch.hpp"
#include "support/test_data.h"

using namespace rtm::test;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

const std::string kSmooth = layers_vp_smooth();

const fs::path& shots_file() {
    static const fs::path p = modelled_layers_shots("cli-integrity-shots", 3, 1000, 1000, 101, 40, 0.6);
    return p;
}

std::string migrate_cmd(const fs::path& job, const std::string& extra = "") {
    return migrate_layers_cmd(shots_file(), job, extra);
}

void write_file(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

// `bytes` with the byte at `at` inverted: a file of the same size, damaged.
std::string flipped(std::string bytes, std::size_t at) {
    bytes.at(at) = char(~bytes[at]);
    return bytes;
}

}  // namespace

TEST_CASE("an input that is a file the job folder holds is refused before any work, naming both options, and kept") {
    const auto dir = scratch("cli-integrity-inputs");
    const auto job = dir / "job";
    fs::create_directories(job);
    fs::copy_file(kSmooth, job / "image.sgy");
    fs::copy_file(shots_file(), job / "illumination.sgy");
    const std::string image = bytes_of(job / "image.sgy"), illumination = bytes_of(job / "illumination.sgy");
    const auto r = run_rtm("migrate --model.vp " + (job / "image.sgy").string() + " --data.shots " +
                           (job / "illumination.sgy").string() + " --propagation.device cpu --output.job " + job.string());
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains("option output.job: '" + (job / "image.sgy").string() + "' is the file given as model.vp"));
    CHECK(!fs::exists(job / "state.json"));  // refused before the job began
    // The same file under another name (a hard link): not told by the paths.
    fs::create_hard_link(job / "image.sgy", dir / "vp.sgy");
    const auto linked = run_rtm("migrate --model.vp " + (dir / "vp.sgy").string() + " --data.shots " +
                                shots_file().string() + " --propagation.device cpu --output.job " + job.string());
    INFO(linked.output);
    CHECK(linked.status == 1);
    CHECK_THAT(linked.output, Contains("is the file given as model.vp ('" + (dir / "vp.sgy").string() + "')"));
    CHECK(bytes_of(job / "image.sgy") == image);
    CHECK(bytes_of(job / "illumination.sgy") == illumination);
}

TEST_CASE("a committed stack that is damaged or cut short is refused, naming the file and what to do") {
    const auto job = scratch("cli-integrity-stack") / "job";
    REQUIRE(run_rtm(migrate_cmd(job, "--migration.max-shots 1")).status == 0);
    const fs::path stack = job / "stack-1.bin";
    const std::string good = bytes_of(stack);
    REQUIRE(!good.empty());
    for (const std::string& bad : {flipped(good, good.size() / 2), good.substr(0, good.size() - 32)}) {
        write_file(stack, bad);
        const auto r = run_rtm(migrate_cmd(job));
        INFO(r.output);
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains(stack.string() + ": is damaged") && Contains("Delete the job folder"));
    }
    write_file(stack, good);
    const auto r = run_rtm(migrate_cmd(job));
    INFO(r.output);
    CHECK(r.status == 0);
}

TEST_CASE("a damaged rank checkpoint is refused, and deleting it as the message says gives the uninterrupted image") {
    const auto dir = scratch("cli-integrity-part");
    REQUIRE(run_rtm(migrate_cmd(dir / "whole")).status == 0);
    const auto job = dir / "killed";
    const fs::path part = job / "part-0.bin";
    // Killed once the first shot is in the rank's checkpoint (test_cli_migrate.cpp does so too).
    interrupt_rtm(migrate_cmd(job, "--migration.checkpoint-minutes 0"), part, "RTMPART3", SIGKILL);
    const std::string good = bytes_of(part);
    REQUIRE(!good.empty());
    write_file(part, flipped(good, good.size() / 2));  // in its stack
    const auto r = run_rtm(migrate_cmd(job));
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains(part.string() + ": is not a checkpoint of this job") && Contains("or damaged") &&
                             Contains("Delete it to migrate its shots again"));
    // Another job's checkpoint (other settings) copied in: it was added, exit 0, to an
    // image that was neither job's.
    const auto other = dir / "other";
    interrupt_rtm(migrate_cmd(other, "--migration.checkpoint-minutes 0 --migration.mute-direct 0.3"), other / "part-0.bin",
                  "RTMPART3", SIGKILL);
    fs::copy_file(other / "part-0.bin", part, fs::copy_options::overwrite_existing);
    const auto foreign = run_rtm(migrate_cmd(job));
    INFO(foreign.output);
    CHECK(foreign.status == 1);
    CHECK_THAT(foreign.output, Contains(part.string() + ": is not a checkpoint of this job"));
    fs::remove(part);
    const auto again = run_rtm(migrate_cmd(job));
    INFO(again.output);
    CHECK(again.status == 0);
    CHECK(bytes_of(job / "image.sgy") == bytes_of(dir / "whole" / "image.sgy"));
}

TEST_CASE("state.json fields that rtm did not write are refused naming the file and the field") {
    const auto job = scratch("cli-integrity-state") / "job";
    REQUIRE(run_rtm(migrate_cmd(job, "--migration.max-shots 1")).status == 0);
    const fs::path file = job / "state.json";
    const std::string good = bytes_of(file);
    const auto state = nlohmann::json::parse(good);
    std::size_t done = 0, pending = 0;  // a shot of each
    for (std::size_t i = 0; i < state["shots"].size(); ++i) (state["shots"][i]["status"] == "done" ? done : pending) = i;
    REQUIRE(state["shots"][done]["status"] == "done");
    REQUIRE(state["shots"][pending]["status"] == "pending");
    struct Edit {
        std::string path, value, named;
    };
    // (A shot marked pending that the stack holds would be stacked twice, one marked done
    // that it does not hold left out.)
    for (const Edit& e : {Edit{"/shots/" + std::to_string(pending) + "/status", "\"bogus\"",
                               "field shots[" + std::to_string(pending) + "].status is 'bogus'"},
                          Edit{"/shots/" + std::to_string(done) + "/status", "\"pending\"",
                               "field shots[" + std::to_string(done) + "].status is not done, but the committed stack holds"},
                          Edit{"/shots/" + std::to_string(pending) + "/status", "\"done\"",
                               "field shots[" + std::to_string(pending) + "].status is done, but the committed stack does not"},
                          Edit{"/stack/done", "[99]", "field stack.done holds 99, not a shot's index"},
                          Edit{"/generation", "\"1\"", "field generation is not a whole number"},
                          Edit{"/generation", "-1", "field generation is -1"},
                          Edit{"/stack/hash", "7", "field stack.hash is not text"}}) {
        auto edited = state;
        edited[nlohmann::json::json_pointer(e.path)] = nlohmann::json::parse(e.value);
        write_file(file, edited.dump(1));
        const auto r = run_rtm(migrate_cmd(job));
        INFO(e.path << " = " << e.value << "\n" << r.output);
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains(file.string() + ": ") && Contains(e.named) && Contains("Delete the job folder"));
    }
    {
        // The two statuses swapped: as many shots done as the stack holds, but not the same.
        auto swapped = state;
        swapped["shots"][done]["status"] = "pending";
        swapped["shots"][pending]["status"] = "done";
        write_file(file, swapped.dump(1));
        const auto r = run_rtm(migrate_cmd(job));
        INFO(r.output);
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains(file.string() + ": ") && Contains("the committed stack"));
    }
    {
        // A shot marked pending again and taken out of stack.done, consistently: it was
        // stacked a second time, exit 0. The stack's hash binds the shots it holds.
        auto retried = state;
        retried["shots"][done]["status"] = "pending";
        retried["stack"]["done"] = nlohmann::json::array();
        write_file(file, retried.dump(1));
        const auto r = run_rtm(migrate_cmd(job));
        INFO(r.output);
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains((job / "stack-1.bin").string() + ": is damaged, or state.json was changed") &&
                                 Contains("stack.done"));
    }
    // Cut short: named with rtm's words, not the JSON library's.
    write_file(file, good.substr(0, good.size() / 2));
    const auto r = run_rtm(migrate_cmd(job));
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains(file.string() + ": is not the JSON text rtm wrote") && !Contains("json.exception"));
}

TEST_CASE("a complete job whose image is missing or changed says so and exits 1, not that it is complete") {
    const auto job = scratch("cli-integrity-products") / "job";
    REQUIRE(run_rtm(migrate_cmd(job)).status == 0);
    const fs::path image = job / "image.sgy";
    const std::string good = bytes_of(image);
    fs::rename(image, job / "moved.sgy");
    auto r = run_rtm(migrate_cmd(job));
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains(image.string() + ": is missing") && Contains("delete the job folder") &&
                             !Contains("is complete"));
    for (const std::string& bad : {good.substr(0, good.size() - 4), flipped(good, good.size() - 4)}) {
        write_file(image, bad);
        r = run_rtm(migrate_cmd(job));
        INFO(r.output);
        CHECK(r.status == 1);
        CHECK_THAT(r.output, Contains(image.string() + ": is not the product the job completed with"));
    }
    write_file(image, good);  // put back, as the message says first
    r = run_rtm(migrate_cmd(job));
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Contains("is complete"));
    // A preview is a picture of the image: its loss is said, and the job stays complete.
    REQUIRE(fs::remove(job / "image.png"));
    r = run_rtm(migrate_cmd(job));
    INFO(r.output);
    CHECK(r.status == 0);
    CHECK_THAT(r.output, Contains("image.png: is missing") && Contains("is complete"));
    // state.json's products emptied and the image removed: it said complete, naming an
    // image that did not exist.
    const fs::path state = job / "state.json";
    auto j = nlohmann::json::parse(bytes_of(state));
    j["products"] = nlohmann::json::object();
    write_file(state, j.dump(1));
    fs::remove(image);
    r = run_rtm(migrate_cmd(job));
    INFO(r.output);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Contains(state.string() + ": records the job complete without its product image.sgy"));
}
