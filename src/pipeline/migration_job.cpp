#include "pipeline/migration_job.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <atomic>
#include <future>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "core/error.h"
#include "core/log.h"
#include "core/phases.h"
#include "core/progress.h"
#include "core/stop_signal.h"
#include "core/threads.h"
#include "parallel/shot_groups.h"
#include "parallel/work_queue.h"
#include "io/file_hash.h"
#include "io/model_io.h"
#include "pipeline/job_previews.h"
#include "pipeline/job_state.h"
#include "physics/anisotropy.h"

namespace rtm {

namespace fs = std::filesystem;

const char* condition_name(ImagingCondition c) {
    switch (c) {
        case ImagingCondition::CrossCorrelation: return "cross-correlation";
        case ImagingCondition::InverseScattering: return "inverse scattering";
        case ImagingCondition::BornAdjoint: return "born-adjoint";
    }
    return "";
}

std::string post_words(const imaging::PostProcessing& post) {
    std::string w = "stack";
    if (post.normalise) w += " / source illumination";
    if (post.laplacian) w += ", -Laplacian";
    if (post.top_mute > 0) w += fmt::format(", top mute {:g} m", post.top_mute);
    return w;
}

using json = nlohmann::json;

namespace {

// A fingerprint's settings ("key=value;" each) as a map.
std::map<std::string, std::string> settings_map(const std::string& text) {
    std::map<std::string, std::string> kv;
    std::size_t at = 0;
    for (std::size_t end; (end = text.find(';', at)) != std::string::npos; at = end + 1) {
        const std::string item = text.substr(at, end - at);
        const std::size_t eq = item.find('=');
        kv[item.substr(0, eq)] = eq == std::string::npos ? "" : item.substr(eq + 1);
    }
    return kv;
}

// One setting's two values are the same: the same text, or the same number however it
// is written (an option given as text, such as a constant model.theta: "30" and "30.0").
// The folder keeps the text it was begun with, which its checkpoints' key binds.
bool same_value(const std::string& a, const std::string& b) {
    if (a == b) return true;
    char *ea = nullptr, *eb = nullptr;
    const double x = std::strtod(a.c_str(), &ea), y = std::strtod(b.c_str(), &eb);
    return !a.empty() && !b.empty() && *ea == 0 && *eb == 0 && x == y;
}

// What differs between two fingerprints' settings: the keys, with both values, so that a
// refused folder says which option (or the backend) changed; empty when none does. An
// option absent from one side's settings may be among its input files (`was_files`,
// `now_files`: their options), as a model parameter given as a file on one side and a
// number on the other is.
std::string settings_changed(const std::string& was, const std::string& now, const std::set<std::string>& was_files,
                             const std::set<std::string>& now_files) {
    const auto a = settings_map(was), b = settings_map(now);
    std::string out;
    auto note = [&](const std::string& key, const std::string& x, const std::string& y) {
        const auto said = [&](const std::string& v, const std::set<std::string>& files) {
            return !v.empty() ? v : files.count(key) ? std::string("a file") : std::string("unset");
        };
        out += (out.empty() ? "" : "; ") + key + " was " + said(x, was_files) + ", now " + said(y, now_files);
    };
    for (const auto& [key, value] : a) {
        const auto it = b.find(key);
        if (it == b.end()) note(key, value, "");
        else if (!same_value(it->second, value)) note(key, value, it->second);
    }
    for (const auto& [key, value] : b)
        if (!a.count(key)) note(key, "", value);
    return out;
}

// A part's first bytes. Its layout is that of state version 5 (the hash at its end): a
// part is read only in a folder whose state.json is of this version.
constexpr char kPartMagic[8] = {'R', 'T', 'M', 'P', 'A', 'R', 'T', '3'};
constexpr std::size_t kHashDigits = 16;  // of io::bytes_hash, at a part's end

[[noreturn]] void io_failed(const fs::path& path, const char* what) {
    fail(path.string(), std::string("cannot ") + what + " (" + std::strerror(errno) + ")",
         "Free space or choose another job folder (output.job)");
}

// fsync of a folder makes the renames in it durable.
void sync_folder(const fs::path& dir) {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) io_failed(dir, "open the folder to sync it");
    const int rc = ::fsync(fd);
    ::close(fd);
    if (rc != 0) io_failed(dir, "sync the folder");
}

// fsync of a file written through a library (segyio, the PNG writer): its data on disk.
void sync_file(const fs::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) io_failed(path, "open the file to sync it");
    const int rc = ::fsync(fd);
    ::close(fd);
    if (rc != 0) io_failed(path, "sync to disk");
}

using Bytes = io::ByteRange;

// Writes the pieces to PATH.tmp, fsyncs it and renames it to PATH: a reader, or a job
// resumed after a crash or power loss, sees the old file or the whole new one. (The
// caller syncs the folder.)
void write_durably(const fs::path& path, std::initializer_list<Bytes> pieces) {
    const fs::path tmp = path.string() + ".tmp";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) io_failed(tmp, "create");
    for (const Bytes& piece : pieces) {
        const char* p = static_cast<const char*>(piece.data);
        for (std::size_t left = piece.size; left > 0;) {
            const ssize_t n = ::write(fd, p, left);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                ::close(fd);
                io_failed(tmp, "write");
            }
            p += n, left -= std::size_t(n);
        }
    }
    if (::fsync(fd) != 0) {
        ::close(fd);
        io_failed(tmp, "sync to disk");
    }
    if (::close(fd) != 0) io_failed(tmp, "close");
    fs::rename(tmp, path);
}

void read_exactly(std::istream& in, const fs::path& path, void* data, std::size_t size) {
    in.read(static_cast<char*>(data), std::streamsize(size));
    if (in.gcount() != std::streamsize(size))
        fail(path.string(), "the job's file is shorter than the model's stack", kStartJobAgain);
}

void read_stack(std::istream& in, const fs::path& path, imaging::Stack& stack) {
    for (auto* sums : {&stack.image, &stack.illumination})
        read_exactly(in, path, sums->data(), sums->size() * sizeof(imaging::ExactSum));
}

Bytes bytes_of(const ZeroedArray<imaging::ExactSum>& v) { return {v.data(), v.size() * sizeof(imaging::ExactSum)}; }

// The bytes of a stack file (image, then illumination) or of a part's stack.
std::uintmax_t stack_bytes(const imaging::Stack& stack) {
    return 2 * std::uintmax_t(stack.image.size()) * sizeof(imaging::ExactSum);
}

// The content hash of a stack's file (io/file_hash.h), from the sums in memory.
// The hash of a committed stack and the shots it holds (state.json's stack.done): a shot
// marked pending again, and taken out of stack.done, would otherwise be stacked twice.
std::string stack_hash(const imaging::Stack& stack, const json& done) {
    const std::string shots = done.dump();
    return io::bytes_hash({{shots.data(), shots.size()}, bytes_of(stack.image), bytes_of(stack.illumination)});
}

// What binds a rank's checkpoint to its job: the job's settings and inputs (state.json),
// so that another job's part copied into the folder is refused, not added.
std::string job_key(const json& state) {
    const std::string text = state.at("settings").dump() + state.at("inputs").dump();
    return io::bytes_hash({{text.data(), text.size()}});
}

// On every core: the reduction to rank 0 calls it for each piece of the 3 GB of a 3D stack.
void combine_sums(const void* in, void* inout, std::size_t n) {
    const auto* a = static_cast<const imaging::ExactSum*>(in);
    auto* b = static_cast<imaging::ExactSum*>(inout);
#pragma omp parallel for if (n > 65536)
    for (std::size_t i = 0; i < n; ++i) b[i].add(a[i]);
}

// A job folder is run by one command at a time: a second rtm migrate on it (another
// terminal, a requeued job while the first still runs) would commit its stack over the
// first's. Rank 0 holds an flock on the folder's job.lock while it holds the state; a
// regular file, so that on NFS Linux takes the lock on the server, where other hosts see
// it. The lock goes with the process. Where the file system takes no locks, the run goes
// on, saying so.
std::shared_ptr<int> lock_folder(const fs::path& folder) {
    const fs::path file = folder / "job.lock";
    const int fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    const auto unlocked = [&](int err) {
        spdlog::warn("{}: no lock could be taken ({}): nothing stops a second rtm migrate on this job folder, so "
                     "run one at a time", file.string(), std::strerror(err));
        return nullptr;
    };
    if (fd < 0) return unlocked(errno);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        ::close(fd);
        if (err == EWOULDBLOCK)
            fail(folder.string(), "is in use by another rtm migrate (it holds " + file.string() + ")",
                 "Wait for that run to end, or stop it, then run this command again");
        return unlocked(err);
    }
    return std::shared_ptr<int>(new int(fd), [](int* f) {
        ::close(*f);
        delete f;
    });
}

struct State {
    json j;
    fs::path folder;
    std::shared_ptr<int> lock;  // lock_folder's

    fs::path file() const { return folder / "state.json"; }
    fs::path stack(int gen) const { return folder / ("stack-" + std::to_string(gen) + ".bin"); }
    int generation() const { return j.at("generation").get<int>(); }
    // Every shot done and the products written: the job keeps no stack (its result is
    // its products), and running it again changes nothing.
    bool complete() const { return j.value("complete", false); }
    void save() const {
        const std::string text = j.dump(1);
        write_durably(file(), {{text.data(), text.size()}});
        sync_folder(folder);
    }
    // Removes every stack generation but `gen` (-1: all), and unfinished tmp files: what
    // a checkpoint leaves behind, or a run killed in the middle of one.
    void remove_stale(int gen) const {
        static const std::regex ours(R"(stack-(\d+)\.bin(\.tmp)?|part-\d+\.bin\.tmp|state\.json\.tmp)");
        std::smatch m;
        for (const auto& e : fs::directory_iterator(folder)) {
            const std::string name = e.path().filename().string();
            if (!std::regex_match(name, m, ours)) continue;
            if (m[1].matched && !m[2].matched && m[1].str() == std::to_string(gen)) continue;
            std::error_code ec;
            fs::remove(e.path(), ec);
            if (ec)
                fail(e.path().string(), "could not be removed (" + ec.message() + "): the job's checkpoints use its name",
                     "Remove it yourself (or move it out of the job folder) and run the job again");
        }
    }
};

// The products' names in a job folder (3D previews are three slices), and those of their
// unfinished copies (the SEG-Y and PNG writers go through PATH.tmp).
const char* const kProducts = R"(image\.sgy|illumination\.sgy|image(_inline|_crossline|_depth)?\.png)";

// Removes the products (and unfinished copies) in `folder`: a job's products are all of
// one run's stack or none, never an image of one run beside the previews of another.
void remove_products(const fs::path& folder) {
    static const std::regex product("(" + std::string(kProducts) + R"()(\.tmp)?)");
    std::error_code ec;
    for (fs::directory_iterator e(folder, ec), end; !ec && e != end; e.increment(ec))
        if (std::regex_match(e->path().filename().string(), product)) fs::remove(e->path(), ec);
}

// The image, the illumination and the previews from `stack`, each file synced by the
// thread that wrote it, or none of them (remove_products) and the failure rethrown.
std::vector<std::string> write_products(const fs::path& folder, const imaging::Stack& stack, const Model& model,
                                        const MigrationJobOptions& opt, int done, int total) {
    const imaging::PostProcessing& post = opt.post;
    const std::string image_path = (folder / "image.sgy").string(), illumination_path = (folder / "illumination.sgy").string();
    // The illumination's values, formed once: the image is normalised by them and they are
    // written beside it (two files, each its own segyio handle).
    const UninitVector<double> illumination_values = [&] {
        const PhaseTimer t("final image (normalise, filter)");
        return imaging::illumination_values(stack);
    }();
    // The previews drawn beside the image's writing: one after another they held the end
    // of a 3D job 0.18 s longer (H200 host, 2026-11-25).
    auto illumination = run_beside(true, 1.0, [&stack, &illumination_values, &illumination_path] {
        const PhaseTimer t("write the illumination");
        io::write_volume(illumination_path, imaging::illumination_volume(stack.grid, illumination_values),
                         "source illumination (sum of u^2)");
        sync_file(illumination_path);
    });
    Volume image;  // (outlives the previews' drawing, should the writing fail)
    std::future<std::vector<std::string>> previews;
    std::vector<std::string> drawn;
    try {
        PhaseTimer filtering("final image (normalise, filter)");
        image = imaging::final_image(stack, post, illumination_values);
        filtering.stop();
        previews = run_beside(true, 0.25, [&] {
            const PhaseTimer drawing("image previews");
            return write_image_previews(folder.string(), image, opt, done, total);
        });
        const PhaseTimer writing("write the image");
        io::write_volume(image_path, image, std::string("stacked image, ") + condition_name(opt.migration.condition) +
                                                ", " + physics_name(model));
        sync_file(image_path);
        drawn = previews.get();
        illumination.get();
    } catch (...) {
        if (previews.valid()) previews.wait();
        if (illumination.valid()) illumination.wait();
        remove_products(folder);
        throw;
    }
    std::vector<std::string> out = {image_path, illumination_path};
    out.insert(out.end(), drawn.begin(), drawn.end());
    return out;
}

// The job's state in `folder`: a new one, or the existing one after checking that it
// was started with this fingerprint and these shots.
State open_state(const std::string& folder, const std::vector<JobShot>& names, const JobFingerprint& fp) {
    State st;
    st.folder = folder;
    try {
        fs::create_directories(st.folder);
    } catch (const fs::filesystem_error& e) {
        fail("option output.job", "'" + folder + "' cannot be made a folder (" + e.code().message() + ")",
             "Choose another job folder");
    }
    st.lock = lock_folder(st.folder);
    json inputs = json::object();
    for (const auto& in : fp.inputs) inputs[in.key] = in.hash;
    if (!fs::exists(st.file())) {
        st.j = {{"version", kStateVersion}, {"settings", fp.settings}, {"inputs", inputs}, {"generation", 0},
                {"shots", json::array()}};
        for (const auto& n : names) st.j["shots"].push_back({{"file", n.file}, {"id", n.id}, {"status", "pending"}});
        st.save();
        return st;
    }
    st.j = read_state(st.file());
    const std::string again = "Use a new output.job folder, or delete this one to start again";
    std::set<std::string> was_files, now_files;  // the options of each side's input files
    for (const auto& [key, hash] : st.j["inputs"].items()) was_files.insert(JobFingerprint::option_of(key));
    for (const auto& in : fp.inputs) now_files.insert(JobFingerprint::option_of(in.key));
    if (const std::string changed = settings_changed(st.j["settings"].get<std::string>(), fp.settings, was_files, now_files);
        !changed.empty())
        fail(folder, "holds a job with other settings: " + changed, again);
    if (st.j["inputs"].size() != fp.inputs.size()) {
        // Named: the job's inputs (its options) and this run's.
        std::string was, now;
        for (const auto& [key, hash] : st.j["inputs"].items()) was += (was.empty() ? "" : ", ") + key;
        for (const auto& in : fp.inputs) now += (now.empty() ? "" : ", ") + in.key + " " + in.path;
        fail(folder,
             "holds a job over " + std::to_string(st.j["inputs"].size()) + " input files (" + was + "), and this run gives " +
                 std::to_string(fp.inputs.size()) + " (" + now + ")",
             "Give the job's input files to resume it (its state.json lists its shots' files); " + again);
    }
    for (const auto& in : fp.inputs) {
        const std::string was = st.j["inputs"].value(in.key, "");
        if (was == in.hash) continue;
        // The job's file, given in another place (shot files in another order, two files
        // swapped between options).
        for (const auto& [key, hash] : st.j["inputs"].items())
            if (hash == in.hash)
                fail(in.path, "is the file the job in " + folder + " was started with as " + key + ", not as " +
                                  in.key + ": the files are given in another order",
                     in.key.rfind("data.shots", 0) == 0 && key.rfind("data.shots", 0) == 0
                         ? "Give the shot files in the job's order (its state.json lists them under \"shots\")"
                         : "Give each file to the option it was given to when the job began");
        fail(in.path, "is not the file the job in " + folder + " was started with as " + in.key + " (content hash " +
                              in.hash + ", was " + (was.empty() ? "absent" : was) + ")",
                 "Put the original file back to resume, or use a new output.job folder (or delete this one) to "
                 "migrate with the new one");
    }
    // The shot files' content is the job's (above), so their shots are too; the paths
    // they are read from now are the ones the state names from here on.
    bool same = st.j["shots"].size() == names.size();
    for (std::size_t i = 0; same && i < names.size(); ++i) {
        same = st.j["shots"][i]["id"] == names[i].id;
        st.j["shots"][i]["file"] = names[i].file;
    }
    if (!same) fail(folder, "holds a job over other shots", again);
    return st;
}

// Reads the committed stack into `stack`, checked against the size and content hash
// that state.json recorded with it (commit).
void load_stack(const State& st, imaging::Stack& stack) {
    const fs::path path = st.stack(st.generation());
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(path, ec);
    if (ec) fail(path.string(), "the job's stack file is missing (" + ec.message() + ")", kStartJobAgain);
    if (size != stack_bytes(stack))
        fail(path.string(), "is damaged: " + std::to_string(size) + " bytes, not the " +
                                std::to_string(stack_bytes(stack)) + " of the model's stack",
             kStartJobAgain);
    std::ifstream in(path, std::ios::binary);
    read_stack(in, path, stack);
    const std::string hash = stack_hash(stack, st.j["stack"]["done"]), was = st.j["stack"]["hash"];
    if (hash != was)
        fail(path.string(),
             "is damaged, or state.json was changed: the content hash of the stack and the shots it holds (stack.done) "
             "is " + hash + ", not the " + was + " it was committed with",
             kStartJobAgain);
}

// The ranks' checkpoints (write_part) in the job folder.
std::vector<fs::path> part_files(const fs::path& folder) {
    static const std::regex part_name(R"(part-\d+\.bin)");
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(folder))
        if (std::regex_match(e.path().filename().string(), part_name)) out.push_back(e.path());
    return out;
}

// Commits `stack` (every shot marked done in st.j) as a new generation: the stack file,
// then state.json naming it, with its content hash and the shots it holds (what reading
// it back checks), then the other generations and the parts go.
void commit(State& st, const imaging::Stack& stack) {
    const int gen = st.generation() + 1;
    write_durably(st.stack(gen), {bytes_of(stack.image), bytes_of(stack.illumination)});
    sync_folder(st.folder);
    json done = json::array();
    for (std::size_t i = 0; i < st.j["shots"].size(); ++i)
        if (st.j["shots"][i]["status"] == "done") done.push_back(i);
    st.j["generation"] = gen;
    st.j["stack"] = {{"hash", stack_hash(stack, done)}, {"done", done}};
    st.save();  // the commit point
    st.remove_stale(gen);
    for (const fs::path& part : part_files(st.folder)) fs::remove(part);
}

// A complete job's products could not be written (a full disk, say; write_products has
// removed them, which frees their space): its stack is committed instead, so that
// running the job again writes them without migrating its shots again. Only when that
// fails too are this run's shots lost.
[[noreturn]] void fail_keeping_stack(State& st, const imaging::Stack& stack, const std::exception& why) {
    const std::string what = "the image and its companions could not be written (" + failure_text(why) + ")";
    try {
        commit(st, stack);
    } catch (const std::exception& also) {
        fail(st.folder.string(), what + ", nor the stack kept (" + failure_text(also) + "; it takes about 16 times the image's "
                                                                             "size)",
             "Free space (or fix the cause above) and run the same command again: it migrates the shots done since "
             "the last checkpoint again");
    }
    fail(st.folder.string(), what + "; the stack of every shot is kept in the job folder",
         "Free space (or fix the cause above) and run the same command again: it writes the image without migrating "
         "the shots again");
}

// A rank's checkpoint: the generation its run started from, the shots it has done in
// this run and their stack, then the content hash (kHashDigits hex digits) of the job's
// key (job_key) and all that after the magic, which reading it back checks.
void write_part(const fs::path& folder, int rank, const std::string& key, int base_gen,
                const std::vector<std::int64_t>& done, const imaging::Stack& mine) {
    const std::int64_t head[3] = {base_gen, std::int64_t(done.size()), std::int64_t(mine.image.size())};
    const Bytes list = {done.data(), done.size() * sizeof(std::int64_t)};
    const std::string hash = io::bytes_hash(
        {{key.data(), key.size()}, {head, sizeof head}, list, bytes_of(mine.image), bytes_of(mine.illumination)});
    write_durably(folder / ("part-" + std::to_string(rank) + ".bin"),
                  {{kPartMagic, sizeof kPartMagic}, {head, sizeof head}, list, bytes_of(mine.image),
                   bytes_of(mine.illumination), {hash.data(), hash.size()}});
    sync_folder(folder);
}

// Adds the parts of an interrupted run (killed before its end) to `stack` and marks
// their shots done, then commits; parts from before the last commit are removed. A
// damaged part is refused: its shots are not in the job's stack, so removing it costs
// only their migration again.
void absorb_parts(State& st, imaging::Stack& stack) {
    int parts = 0, shots = 0;
    for (const fs::path& path : part_files(st.folder)) {
        const std::string damaged = "Delete it to migrate its shots again (they are not in the job's stack yet)";
        std::ifstream in(path, std::ios::binary);
        char magic[8];
        std::int64_t head[3];
        in.read(magic, sizeof magic);
        in.read(reinterpret_cast<char*>(head), sizeof head);
        if (!in || !std::equal(magic, magic + 8, kPartMagic) || head[2] != std::int64_t(stack.image.size()))
            fail(path.string(), "is not a checkpoint of this job's ranks", damaged);
        if (head[0] != st.generation()) continue;  // its shots are in the committed stack already
        const std::uintmax_t size = sizeof kPartMagic + sizeof head + std::uintmax_t(head[1]) * sizeof(std::int64_t) +
                                    stack_bytes(stack) + kHashDigits;
        std::error_code ec;
        if (head[1] < 0 || head[1] > std::int64_t(st.j["shots"].size()) || fs::file_size(path, ec) != size || ec)
            fail(path.string(), "is damaged: its size disagrees with its header", damaged);
        std::vector<std::int64_t> done(static_cast<std::size_t>(head[1]));
        read_exactly(in, path, done.data(), done.size() * sizeof(std::int64_t));
        imaging::Stack part(stack.grid);
        read_stack(in, path, part);
        std::string hash(kHashDigits, ' ');
        read_exactly(in, path, hash.data(), hash.size());
        const std::string key = job_key(st.j);
        if (hash != io::bytes_hash({{key.data(), key.size()},
                                    {head, sizeof head},
                                    {done.data(), done.size() * sizeof(std::int64_t)},
                                    bytes_of(part.image),
                                    bytes_of(part.illumination)}))
            fail(path.string(),
                 "is not a checkpoint of this job: its checksum, which binds the job's settings and inputs, differs "
                 "(another job's, or damaged)",
                 damaged);
        for (const std::int64_t i : done) {
            if (i < 0 || std::size_t(i) >= st.j["shots"].size() || st.j["shots"][std::size_t(i)]["status"] == "done")
                fail(path.string(), "holds a shot that is done already (or none of this job)", kStartJobAgain);
            st.j["shots"][std::size_t(i)]["status"] = "done";
        }
        stack.add(part);
        ++parts, shots += int(done.size());
    }
    if (parts) {
        spdlog::info("recovered {} from the checkpoints of {} of an interrupted run", counted(shots, "shot"), counted(parts, "rank"));
        commit(st, stack);
    }
}

}  // namespace

std::vector<std::string> job_files(const std::string& folder) {
    // state.json, the lock, the stacks, the ranks' parts, the products and previews, their
    // unfinished copies (PATH.tmp), and the shots' pictures (keep-shot-images).
    static const std::regex job_file(R"((state\.json|job\.lock|stack-\d+\.bin|part-\d+\.bin|)" + std::string(kProducts) +
                                     R"()(\.tmp)?)");
    static const std::regex shot_picture(R"(shot-.*\.png(\.tmp)?)");
    std::vector<std::string> out;
    for (const auto& [dir, name] : {std::pair{fs::path(folder), &job_file}, std::pair{fs::path(folder) / "shots", &shot_picture}}) {
        std::error_code ec;  // (no folder: no file)
        for (fs::directory_iterator e(dir, ec), end; !ec && e != end; e.increment(ec))
            if (std::regex_match(e->path().filename().string(), *name)) out.push_back(e->path().string());
    }
    return out;
}

JobReport run_migration_job(const Model& model, const std::vector<JobShot>& names,
                            const std::function<ShotGather(std::size_t)>& load_shot, const Wavelet& wavelet,
                            const MigrationJobOptions& opt, const JobFingerprint& fingerprint) {
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    const parallel::World& world = parallel::World::get();
    const std::size_t n = names.size();
    const auto labels = opt.keep_shot_images ? shot_preview_labels(names) : std::map<std::string, std::string>{};
    State st;                                 // rank 0's
    // The job's stack (rank 0's): the committed one and the parts of an interrupted run,
    // when resuming; for a new job, this run's ranks' stacks reduced to rank 0 are the
    // job's, and it is not made (1.5 GB of exact sums to fill in 3D).
    imaging::Stack stack{Grid()};
    bool resuming = false;  // (rank 0's) stack holds the job's earlier shots
    std::vector<std::int64_t> done_before(n, 0);
    int base_gen = 0;
    std::string key;  // job_key, for the ranks' checkpoints
    bool complete_before = false;
    world.on_root([&] {
        st = open_state(opt.folder, names, fingerprint);
        complete_before = st.complete();
        if (complete_before) {
            check_products(st.j, st.folder);
            spdlog::info("job {} is complete: its image ({}) holds its {}; nothing to do (use a new output.job "
                         "folder, or delete this one, to migrate again)",
                         opt.folder, (st.folder / "image.sgy").string(), counted(n, "shot"));
            return;
        }
        resuming = st.generation() > 0 || !part_files(st.folder).empty();
        if (resuming) stack = imaging::Stack(model.grid());
        if (st.generation() > 0) load_stack(st, stack);
        st.remove_stale(st.generation());
        absorb_parts(st, stack);
        base_gen = st.generation();
        key = job_key(st.j);
        int failed_before = 0, done = 0;
        for (std::size_t i = 0; i < n; ++i) {
            done_before[i] = st.j["shots"][i]["status"] == "done";
            done += int(done_before[i]);
            failed_before += st.j["shots"][i]["status"] == "failed";
        }
        if (done || failed_before)
            spdlog::info("resuming job {}: {} of {} already done{}", opt.folder, done, counted(n, "shot"),
                         failed_before ? ", " + std::to_string(failed_before) + " failed before (tried again)" : "");
    });
    world.broadcast(&complete_before, sizeof complete_before);
    if (complete_before) {
        JobReport rep;
        rep.total = rep.done_before = int(n);
        rep.complete = true;
        rep.seconds = std::chrono::duration<double>(clock::now() - t0).count();
        return rep;
    }
    world.broadcast(done_before);
    world.broadcast(&base_gen, sizeof base_gen);
    world.broadcast(key);

    // The shots to do, largest first (in job order among equals), at most max_shots.
    std::vector<long> order;
    for (std::size_t i = 0; i < n; ++i)
        if (!done_before[i]) order.push_back(long(i));
    std::stable_sort(order.begin(), order.end(), [&](long a, long b) { return names[a].cost > names[b].cost; });
    if (opt.max_shots >= 0 && order.size() > std::size_t(opt.max_shots)) order.resize(std::size_t(opt.max_shots));
    const long before = long(std::count(done_before.begin(), done_before.end(), 1));

    // Shots to the ranks (shot groups) as they ask; a group's leader stacks and records.
    parallel::WorkQueue queue(parallel::ShotGroups::get(), order, long(n));
    imaging::Stack mine(model.grid());  // this rank's shots of this run
    std::vector<std::int64_t> done_here;
    json done_info = json::array(), failed_here = json::array();  // [shot, seconds, storage], [shot, reason]
    RankReport me;
    me.rank = world.rank();
    me.node = world.node_name();
    auto last_checkpoint = clock::now();
    const StopOnSignal stop(world.root());
    const auto loop_start = clock::now();
    // A shot taken from the queue: its claim, name and gather (once loaded).
    struct Taken {
        parallel::WorkQueue::Claim claim;
        std::size_t i = 0;
        std::string which;
        ShotGather shot;
    };
    // Whatever stops one shot (its data, its geometry, a blow-up, its memory) stops only
    // that shot; the job's own I/O is outside these handlers and stops the job. In a shot
    // group (parallel.ranks-per-shot) every member calls the same handlers for the same
    // shots in the same order (finish is collective there); the leader records and logs.
    auto failed = [&](const Taken& t, const std::exception& e) {
        const std::string why = failure_text(e);
        if (queue.finish(t.claim, false)) {
            if (queue.leader()) every_rank().warn("{} failed (another rank tries it once more): {}", t.which, why);
        } else if (queue.leader()) {
            failed_here.push_back({t.i, why});
            every_rank().error("{} failed, not stacked (the other shots go on): {}", t.which, why);
        }
    };
    // Work every member of the group does for the same shots (reading, migrating): they
    // agree on its outcome, so that a failure on one member fails it on all, and none is
    // left waiting in an exchange for a member that gave up.
    auto together = [&](const std::string& what, const auto& work) {
        bool agreed = false;
        try {
            auto result = work();
            agreed = true;
            if (!queue.agree(true, what + " done"))
                fail(what, "another rank of its shot group failed it (see that rank's message)");
            return result;
        } catch (const std::exception& e) {
            if (!agreed) queue.agree(false, what + " failed: " + failure_text(e));
            throw;
        }
    };
    // A batch's images added to this rank's stack, then its shots finished, recorded and
    // logged. The adding (0.5 s of the host for a 3D shot, 7 ms for a 2D Marmousi one:
    // 0.3 s for a batch of 45, 2026-11-23) runs beside the next batch's propagation (on a
    // GPU the host is free then; on the CPU the same memory-bound work moves, and the CPU
    // runs the GPU's code path), the batch's shots one after another in one task, and they
    // are finished once added: when the next batch is stacked, before the queue is
    // waited on, before a checkpoint and at the end. The order of finishing (and of the
    // stack's sums) is the order of stacking either way.
    struct Stacking {
        Taken t;  // without its gather
        ShotMigration m;
        std::exception_ptr refused;  // the adding's failure: nothing of the shot added
    };
    std::vector<Stacking> ready, adding;  // migrated, not yet added; being added
    std::future<void> added;
    // Set while this thread waits for the stacking (the job's end, a checkpoint, an empty
    // queue): the stacking's next shots take all the threads instead of a quarter.
    std::atomic<bool> stacking_alone{false};
    auto finish_stacking = [&] {
        if (adding.empty()) return;
        stacking_alone = true;
        added.get();  // (each shot's failure is kept in its entry)
        for (Stacking& s : adding) {
            const Taken& t = s.t;
            const ShotMigration& m = s.m;
            if (s.refused) {
                try {
                    std::rethrow_exception(s.refused);
                } catch (const std::exception& e) {
                    failed(t, e);
                }
                continue;
            }
            if (queue.leader()) {
                done_here.push_back(std::int64_t(t.i));
                done_info.push_back({t.i, m.seconds, storage_name(m.storage)});
            }
            ++me.migrated;
            me.busy += m.seconds;
            me.propagation += m.busy_seconds;
            me.points += m.point_updates;
            queue.finish(t.claim, true);
            if (queue.leader()) {
                // A QC picture that cannot be written loses the picture, not the stacked shot.
                if (opt.keep_shot_images) try {
                        write_shot_preview(opt.folder, model.grid(), m, names[t.i], labels.at(names[t.i].file),
                                           opt.migration);
                    } catch (const std::exception& e) {
                        every_rank().warn("{}: its image for QC (migration.keep-shot-images) was not written: {}",
                                          t.which, e.what());
                    }
            }
        }
        adding.clear();
    };
    // (Not in a shot group: finishing is collective there, and its members must not
    // reach it at different points, as a checkpoint due on one of them would make them.)
    const bool beside = parallel::ShotGroups::get().per_shot() == 1;
    // The batch's migrated shots (ready) go to be added, after the previous batch's are.
    // alone: nothing will run beside this adding (no batch read ahead, none left to claim).
    auto start_stacking = [&](bool alone) {
        finish_stacking();
        if (ready.empty()) return;
        adding = std::move(ready);
        ready.clear();
        // The last step that can fail: it adds a whole shot or, refusing it, nothing.
        // Beside the next batch, a quarter of this rank's threads: the rest prepare its
        // receivers' data (with all of them, both ran 1.5-3x slower, 256 2D shots on the
        // H200, 2026-11-23); all of them once this thread waits for it, or from the start
        // when it is alone (a shot's adding keeps the threads it started with: the end of
        // a 3D job waited 0.32-0.45 s for its last shot's on a quarter of 16, which takes
        // 0.16-0.18 s on all of them, H200 host, 2026-11-25).
        stacking_alone = alone;
        added = run_beside(beside, 0.25, [&mine, &adding, &stacking_alone, all = current_threads(), beside,
                                          leader = queue.leader()] {
            for (Stacking& s : adding) try {
                    if (beside && stacking_alone) use_threads(all);
                    const PhaseTimer stacking("stack");
                    if (leader)
                        mine.add(s.m.window.grid, s.m.window.ix0, s.m.window.iy0, s.m.image.data(), s.m.illumination.data());
                } catch (...) {
                    s.refused = std::current_exception();
                }
        });
        if (!beside) finish_stacking();
    };
    auto stacked = [&](const Taken& t, ShotMigration m) {
        // The shot's line when its migration ends, before its image is added (beside the
        // next batch: a line after it would come after the next shot's progress). Job-wide:
        // shots done with this one (those migrated and not yet added counted), their rate
        // so far, and when the rest should be done; should the adding refuse it (a value
        // that is not finite), its failure follows.
        // (A shot whose adding was refused ends again on its retry: at most n.)
        const long done = std::min(before + queue.ended(), long(n));
        const double rate = double(done - before) / std::chrono::duration<double>(clock::now() - loop_start).count();
        if (queue.leader())
            every_rank().info("{} ({} of {} done, {:.0f} shots/h, ETA {}): window {} x {} x {}, {} steps, imaging "
                              "every {}, source wavefield by {} ({:.1f} MB){}, {:.1f} s",
                              t.which, done, n, rate * 3600,
                              format_duration(double(long(order.size()) + before - done) / rate), m.window.grid.nx,
                              m.window.grid.ny, m.window.grid.nz, m.steps, m.image_every, storage_name(m.storage),
                              m.bytes_kept / 1e6, m.batch > 1 ? " in a batch of " + std::to_string(m.batch) : "",
                              m.seconds);
        ready.push_back(Stacking{{t.claim, t.i, t.which, {}}, std::move(m), {}});
    };
    // Shots migrated together (migrate_shots): up to `batch` (migration_batch, chosen
    // from the first shot this rank loads, at most its share of the shots, and logged)
    // taken at once, as many as the queue
    // hands out without waiting; those of one batch_key go together, a retry alone. A
    // batch that fails is tried again shot by shot, so that its good shots are stacked
    // and only the bad ones fail. Each shot is finished, stacked and checkpointed as its
    // own, so the image is the same bit for bit for any batch and any number of ranks.
    // Reads taken[from ..]; a shot that cannot be read fails alone and leaves the list.
    // With one rank per shot the reads run in parallel (45 2D Marmousi gathers took 0.11 s
    // one after another on the H200 host, 2026-11-23); in a shot group, in turn, each read
    // agreed by the group.
    // A read that fails leaves its batch a shot short (the batch is not filled up again).
    // load() reads and keeps each read's failure (it may run beside: no queue work);
    // settle() fails those shots, on this thread.
    auto load = [&](std::vector<Taken>& ts, std::size_t from) {
        std::vector<std::exception_ptr> error(ts.size());
        const long n = long(ts.size());
        if (long(from) >= n) return error;
        const PhaseTimer reading("read shots");  // (on this thread: the reads' wall time)
#pragma omp parallel for schedule(dynamic) if (beside && n - long(from) > 1)
        for (long k = long(from); k < n; ++k) try {
                Taken& t = ts[std::size_t(k)];
                t.shot = beside ? load_shot(t.i) : together(t.which + " (reading)", [&] { return load_shot(t.i); });
            } catch (...) {
                error[std::size_t(k)] = std::current_exception();
            }
        return error;
    };
    auto settle = [&](std::vector<Taken>& ts, const std::vector<std::exception_ptr>& error) {
        std::vector<Taken> kept_ones;
        for (std::size_t k = 0; k < ts.size(); ++k) {
            if (!error[k]) {
                kept_ones.push_back(std::move(ts[k]));
                continue;
            }
            try {
                std::rethrow_exception(error[k]);
            } catch (const std::exception& e) {
                failed(ts[k], e);
            }
        }
        ts = std::move(kept_ones);
    };
    auto read_shots = [&](std::vector<Taken>& ts, std::size_t from) { settle(ts, load(ts, from)); };
    int batch = 0;
    // Claims `first` and, without waiting, more up to a batch (a retry goes alone) into ts;
    // the first shot this rank claims is read here, to choose the batch. Returns the count
    // claimed; ts[0 .. read) are read.
    std::size_t read = 0;
    auto claim_batch = [&](parallel::WorkQueue::Claim first, std::vector<Taken>& ts) {
        int claimed = 0;
        read = 0;
        for (parallel::WorkQueue::Claim c = first; c; c = queue.next(false)) {
            ++claimed;
            const std::size_t i = std::size_t(c.item);
            ts.push_back({c, i, "shot " + std::to_string(names[i].id) + " from " + names[i].file, {}});
            if (batch == 0) {  // the first shot this rank reads sets the batch
                read_shots(ts, 0);
                if (!ts.empty()) try {
                        // No more than this rank's share of the shots: a rank taking a batch
                        // must not leave the other ranks without work.
                        const long groups = parallel::ShotGroups::get().count();
                        const long share = (long(order.size()) + groups - 1) / groups;
                        batch = migration_batch(model, ts.back().shot, wavelet, opt.migration, share);
                        if (queue.leader())
                            every_rank().info("migrating up to {} of one window at a time (propagation.batch {}{})",
                                              counted(batch, "shot"), opt.migration.propagation.batch,
                                              opt.migration.propagation.batch ? "" : ": automatic");
                    } catch (const std::exception& e) {
                        failed(ts.back(), e);
                        ts.pop_back();
                    }
                read = ts.size();
            }
            if (c.retry || int(ts.size()) >= std::max(1, batch)) break;
        }
        return claimed;
    };
    // The next batch, claimed and read while this one propagates (a 3D shot's read took
    // 0.09 s between two shots' steps, H200 host, 2026-11-24); with one rank per shot
    // only (a shot group reads together, each read agreed). A rank holds at most one
    // batch ahead, and only while the order holds a batch for every rank besides: the
    // last batches still go to the ranks as they finish, largest first (a rank taking
    // two at once could leave another without work). On a stop it is left unmigrated
    // (its shots stay to do).
    std::vector<Taken> ahead;
    int ahead_claimed = 0;
    std::future<std::vector<std::exception_ptr>> ahead_read;
    WindowCache kept;  // consecutive batches of one window share its domain and propagators
    for (;;) {
        if (stop_signal()) queue.stop();
        std::vector<Taken> taken;  // claimed and loaded
        int claimed = 0;
        if (ahead_read.valid()) {
            const auto error = ahead_read.get();
            if (queue.stopped()) break;
            taken = std::move(ahead);
            ahead.clear();
            claimed = ahead_claimed;
            settle(taken, error);
        } else {
            // A shot being stacked is not finished yet, and the queue waits for unfinished
            // shots (they may come back for a retry): finish it before waiting.
            parallel::WorkQueue::Claim first = adding.empty() ? queue.next() : queue.next(false);
            if (!first && !adding.empty()) {
                finish_stacking();
                first = queue.next();
            }
            claimed = claim_batch(first, taken);
            read_shots(taken, read);
        }
        if (!claimed) break;
        me.shots += claimed;
        const long ranks = parallel::ShotGroups::get().count();
        if (beside && batch > 0 && (ranks == 1 || queue.unclaimed() >= ranks * batch)) {
            ahead_claimed = claim_batch(queue.next(false), ahead);
            if (ahead_claimed)
                ahead_read = run_beside(true, 0.25, [&ahead, &load] { return load(ahead, 0); });
        }
        std::vector<std::pair<BatchKey, std::vector<const Taken*>>> groups;
        for (const Taken& t : taken) {
            try {
                const BatchKey key = batch_key(model, t.shot, opt.migration);
                auto g = std::find_if(groups.begin(), groups.end(), [&](const auto& x) { return x.first == key; });
                if (t.claim.retry || g == groups.end()) groups.push_back({key, {&t}});
                else g->second.push_back(&t);
            } catch (const std::exception& e) {
                failed(t, e);
            }
        }
        for (const auto& [key, group] : groups) {
            std::vector<const ShotGather*> shots;
            for (const Taken* t : group) shots.push_back(&t->shot);
            std::vector<ShotMigration> results;
            try {
                results = together(group.front()->which + (group.size() > 1 ? " and the others of its batch" : ""),
                                   [&] { return migrate_shots(model, shots, wavelet, opt.migration, &kept); });
            } catch (const std::exception& e) {
                if (group.size() == 1) {
                    failed(*group.front(), e);
                    continue;
                }
                if (queue.leader())
                    every_rank().warn("{} shots migrated together failed ({}): migrating them one at a time",
                                      group.size(), e.what());
                for (const Taken* t : group) try {
                        stacked(*t, together(t->which, [&] { return migrate_shot(model, t->shot, wavelet, opt.migration); }));
                    } catch (const std::exception& e1) {
                        failed(*t, e1);
                    }
                continue;
            }
            for (std::size_t j = 0; j < group.size(); ++j) stacked(*group[j], std::move(results[j]));
        }
        start_stacking(beside && ahead.empty() && queue.unclaimed() == 0);
        if (clock::now() - last_checkpoint >= std::chrono::duration<double>(opt.checkpoint_minutes * 60)) {
            finish_stacking();
            const PhaseTimer t("checkpoint");
            // The leaders stack and record; the other members have nothing to keep.
            if (queue.leader()) write_part(opt.folder, world.rank(), key, base_gen, done_here, mine);
            last_checkpoint = clock::now();
        }
    }
    start_stacking(true);
    finish_stacking();
    {
        const PhaseTimer t("free the shots' propagators");
        kept = WindowCache();
    }
    me.wall = std::chrono::duration<double>(clock::now() - loop_start).count();
    me.waiting = queue.waiting_seconds();
    if (stop_signal()) every_rank().warn("stopping on signal {} after {} on this rank in this run", stop_signal(), counted(me.shots, "shot"));

    // The end of the run: the ranks' stacks to rank 0 in one reduction, their outcomes
    // beside, then rank 0 commits and writes the products. Only the groups' leaders
    // stack (the other members' stacks stay empty), so the reduction runs among them:
    // one group of z-slabs has nothing to reduce.
    // (The wait apart from the reduction: the phases then say which of the two the end took.)
    PhaseTimer finishing("wait for the other ranks' last shots");
    world.barrier();
    finishing.stop();
    PhaseTimer reducing("stacks to rank 0");
    const parallel::ShotGroups& groups = parallel::ShotGroups::get();
    if (groups.leader()) {
        const parallel::World& leaders = groups.leaders();
        leaders.reduce_to_root(mine.image.data(), mine.image.size(), sizeof(imaging::ExactSum), combine_sums);
        leaders.reduce_to_root(mine.illumination.data(), mine.illumination.size(), sizeof(imaging::ExactSum), combine_sums);
    }
    reducing.stop();
    const json report = {{"done", done_info}, {"failed", failed_here}, {"signal", stop_signal()},
                         {"rank", me.rank}, {"node", me.node}, {"shots", me.shots}, {"migrated", me.migrated},
                         {"busy", me.busy}, {"propagation", me.propagation}, {"points", me.points},
                         {"waiting", me.waiting}, {"wall", me.wall}};
    const std::vector<std::string> reports = world.gather(report.dump());
    JobReport rep;
    rep.total = int(n);
    rep.done_before = int(before);
    world.on_root([&] {
        for (const std::string& text : reports) {
            const json r = json::parse(text);
            rep.ranks.push_back({r["rank"], r["node"], r["shots"], r["migrated"], r["busy"], r["propagation"], r["points"],
                                 r["waiting"], r["wall"]});
            rep.busy_seconds += r["propagation"].get<double>();
            rep.point_updates += r["points"].get<double>();
            rep.signal = std::max(rep.signal, r["signal"].get<int>());
            for (const auto& d : r["done"]) {
                const std::size_t i = d[0];
                st.j["shots"][i] = {{"file", names[i].file}, {"id", names[i].id}, {"status", "done"},
                                    {"seconds", d[1]}, {"storage", d[2]}};
                ++rep.done_now;
            }
            for (const auto& f : r["failed"]) {
                const std::size_t i = f[0];
                st.j["shots"][i] = {{"file", names[i].file}, {"id", names[i].id}, {"status", "failed"}, {"reason", f[1]}};
                rep.failed_now.push_back({names[i], f[1]});
            }
        }
        imaging::Stack& job = resuming ? stack : mine;
        if (resuming) stack.add(mine);
        int done = 0;
        for (const auto& s : st.j["shots"]) done += s["status"] == "done";
        for (const auto& s : st.j["shots"]) rep.failed += s["status"] == "failed";
        rep.complete = done == rep.total;
        spdlog::info("writing the image of {} of {}", done, counted(rep.total, "shot"));
        if (rep.complete) {
            // Nothing will be added to a complete job's stack: instead of committing it
            // (3 GB written and synced in 3D), the products are synced, then state.json
            // records the job complete (the commit point), then the stacks and parts go.
            // A run killed before that point resumes from the last commit.
            try {
                rep.outputs = write_products(st.folder, job, model, opt, done, rep.total);
            } catch (const std::exception& e) {
                fail_keeping_stack(st, job, e);
            }
            const PhaseTimer t("sync the products, record the job complete");
            json products = json::object();
            for (const auto& p : rep.outputs) {
                sync_file(p);
                products[fs::path(p).filename().string()] = product_record(p);  // checked by a run of the complete job
            }
            sync_folder(st.folder);
            st.j["products"] = products;
            st.j["complete"] = true;
            st.save();
            st.remove_stale(-1);
            for (const fs::path& part : part_files(st.folder)) fs::remove(part);
            return;
        }
        // The products beside the commit: they read the stack, the commit writes its
        // copy (with fsync), and neither waits for the other.
        auto products = run_beside(true, 1.0, [&] { return write_products(st.folder, job, model, opt, done, rep.total); });
        try {
            const PhaseTimer t("commit");
            commit(st, job);
        } catch (...) {
            products.wait();
            throw;
        }
        rep.outputs = products.get();
    });
    // Every rank ends with the same outcome (and exit code).
    int shared[4] = {rep.done_now, rep.failed, rep.complete, rep.signal};
    world.broadcast(shared, sizeof shared);
    rep.done_now = shared[0], rep.failed = shared[1], rep.complete = shared[2], rep.signal = shared[3];
    rep.seconds = std::chrono::duration<double>(clock::now() - t0).count();
    return rep;
}

}  // namespace rtm
