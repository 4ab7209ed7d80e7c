#include "pipeline/job_state.h"

#include <fstream>
#include <limits>
#include <vector>

#include "core/error.h"
#include "core/log.h"
#include "io/file_hash.h"

namespace rtm {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// The checks of one state file: each refusal names the file and the field.
struct Checker {
    const fs::path& file;

    [[noreturn]] void bad(const std::string& field, const std::string& what) const {
        fail(file.string(), "field " + field + " " + what + " (the job's state is damaged or was edited)", kStartJobAgain);
    }
    // obj[key], which must be there and be `kind` (is: json's test for it).
    const json& need(const json& obj, const std::string& key, const std::string& field, bool (json::*is)() const noexcept,
                     const char* kind) const {
        const auto it = obj.find(key);
        if (it == obj.end()) bad(field, "is missing");
        if (!((*it).*is)()) bad(field, std::string("is not ") + kind);
        return *it;
    }
    // A whole number from 0 to `most`.
    long count(const json& obj, const std::string& key, const std::string& field, long most) const {
        const json& v = need(obj, key, field, &json::is_number_integer, "a whole number");
        if (v.get<long long>() < 0 || v.get<long long>() > most)
            bad(field, "is " + v.dump() + ", not from 0 to " + std::to_string(most));
        return long(v.get<long long>());
    }
};

}  // namespace

json read_state(const fs::path& file) {
    std::error_code ec;
    if (fs::is_directory(file, ec))
        fail(file.string(), "is a folder, where the job's state file goes", "Remove it, or give another output.job");
    std::ifstream in(file);
    if (!in) fail(file.string(), "cannot be opened", "Check the job folder's permissions");
    json j;
    try {
        j = json::parse(in);
    } catch (const json::parse_error& e) {
        fail(file.string(), "is not the JSON text rtm wrote (it breaks off or is malformed at byte " +
                                std::to_string(e.byte) + "): the job's state is damaged",
             kStartJobAgain);
    }
    const Checker c{file};
    if (!j.is_object()) c.bad("(the whole file)", "is not a JSON object");
    const long version = c.count(j, "version", "version", 1000);
    if (version != kStateVersion)
        fail(file.parent_path().string(), "holds a job written by another version of rtm (state version " +
                                              std::to_string(version) + ", this one writes " +
                                              std::to_string(kStateVersion) + ")",
             "Use a new output.job folder, or delete this one to start again");
    c.need(j, "settings", "settings", &json::is_string, "text");
    for (const auto& [name, hash] : c.need(j, "inputs", "inputs", &json::is_object, "an object").items())
        if (!hash.is_string()) c.bad("inputs." + name, "is not text");
    // (Below int's top: the next commit adds one.)
    const long generation = c.count(j, "generation", "generation", std::numeric_limits<int>::max() - 1);
    const json& shots = c.need(j, "shots", "shots", &json::is_array, "a list");
    long done = 0;
    std::vector<bool> is_done(shots.size());
    for (std::size_t i = 0; i < shots.size(); ++i) {
        const std::string at = "shots[" + std::to_string(i) + "]";
        if (!shots[i].is_object()) c.bad(at, "is not an object");
        c.need(shots[i], "file", at + ".file", &json::is_string, "text");
        c.need(shots[i], "id", at + ".id", &json::is_number_integer, "a whole number");
        const auto status = c.need(shots[i], "status", at + ".status", &json::is_string, "text").get<std::string>();
        if (status != "pending" && status != "done" && status != "failed")
            c.bad(at + ".status", "is '" + status + "', not pending, done or failed");
        done += status == "done";
        is_done[i] = status == "done";
    }
    const bool complete =
        j.contains("complete") && c.need(j, "complete", "complete", &json::is_boolean, "true or false").get<bool>();
    if (complete) {
        if (done != long(shots.size()))
            c.bad("complete", "is true, but " + std::to_string(done) + " of " + std::to_string(shots.size()) +
                                  " shots are done");
        for (const auto& [name, record] : c.need(j, "products", "products", &json::is_object, "an object").items()) {
            if (name.empty() || fs::path(name).filename() != name || name == "." || name == "..")
                c.bad("products", "names '" + name + "', not a file of the job folder");
            c.need(record, "hash", "products." + name + ".hash", &json::is_string, "text");
            c.count(record, "size", "products." + name + ".size", std::numeric_limits<long>::max());
        }
    } else {
        // The shots done are exactly those of the committed stack (the ranks' parts record
        // theirs apart, until a commit adds them): none before the first. A status turned
        // from done to pending would stack a shot twice; the other way, leave one out.
        const json none = {{"done", json::array()}};
        const json& stack = generation > 0 ? c.need(j, "stack", "stack", &json::is_object, "an object") : none;
        if (generation > 0) c.need(stack, "hash", "stack.hash", &json::is_string, "text");
        std::vector<bool> in_stack(shots.size());
        for (const json& k : c.need(stack, "done", "stack.done", &json::is_array, "a list")) {
            if (!k.is_number_integer() || k.get<long long>() < 0 || k.get<long long>() >= (long long)shots.size())
                c.bad("stack.done", "holds " + k.dump() + ", not a shot's index");
            in_stack[std::size_t(k.get<long long>())] = true;
        }
        for (std::size_t i = 0; i < shots.size(); ++i)
            if (is_done[i] != in_stack[i])
                c.bad("shots[" + std::to_string(i) + "].status",
                      is_done[i] ? "is done, but the committed stack does not hold the shot"
                                 : "is not done, but the committed stack holds the shot");
    }
    return j;
}

json product_record(const fs::path& file) {
    std::error_code ec;
    const auto size = fs::file_size(file, ec);
    if (ec) fail(file.string(), "the product just written cannot be read back (" + ec.message() + ")",
                 "Check the job folder's disk and permissions, then run the same command again");
    return {{"size", size}, {"hash", io::content_hash(file.string())}};
}

void check_products(const json& state, const fs::path& folder) {
    const std::string fix = "Put the job's own file back; else, as a complete job keeps no stack to write it again "
                            "from, delete the job folder (or use a new output.job) and run again to migrate the shots anew";
    // The image and the illumination are every complete job's: a record without them
    // (state.json edited) would call a job without its image complete.
    for (const char* name : {"image.sgy", "illumination.sgy"})
        if (!state.at("products").contains(name))
            fail((folder / "state.json").string(), std::string("records the job complete without its product ") + name,
                 kStartJobAgain);
    for (const auto& [name, record] : state.at("products").items()) {
        const fs::path path = folder / name;
        // A preview is a picture of the image, not the result: its loss is said, not refused.
        const bool preview = path.extension() == ".png";
        const auto refuse = [&](const std::string& what) {
            if (!preview) fail(path.string(), what, fix);
            spdlog::warn("{}: {} (a preview, a picture of a product: not refused)", path.string(), what);
        };
        std::error_code ec;
        const auto size = fs::file_size(path, ec);
        if (ec) {
            refuse("is missing: the job completed with it as a product (" + ec.message() + ")");
            continue;
        }
        const std::string hash = io::content_hash(path.string());
        if (size != record.at("size").get<std::uintmax_t>() || hash != record.at("hash").get<std::string>())
            refuse("is not the product the job completed with (" + std::to_string(size) + " bytes, content hash " + hash +
                   "; it wrote " + record.at("size").dump() + " bytes, content hash " +
                   record.at("hash").get<std::string>() + ")");
    }
}

}  // namespace rtm
