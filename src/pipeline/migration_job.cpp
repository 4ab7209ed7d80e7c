#include "pipeline/migration_job.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "core/error.h"
#include "core/progress.h"
#include "io/model_io.h"
#include "pipeline/job_previews.h"

namespace rtm {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// What differs between two fingerprints' settings ("key=value;" each): the keys, with
// both values, so that a refused folder says which option (or the backend) changed.
std::string settings_changed(const std::string& was, const std::string& now) {
    auto parse = [](const std::string& text) {
        std::map<std::string, std::string> kv;
        std::size_t at = 0;
        for (std::size_t end; (end = text.find(';', at)) != std::string::npos; at = end + 1) {
            const std::string item = text.substr(at, end - at);
            const std::size_t eq = item.find('=');
            kv[item.substr(0, eq)] = eq == std::string::npos ? "" : item.substr(eq + 1);
        }
        return kv;
    };
    const auto a = parse(was), b = parse(now);
    std::string out;
    auto note = [&](const std::string& key, const std::string& x, const std::string& y) {
        out += (out.empty() ? "" : "; ") + key + " was " + (x.empty() ? "unset" : x) + ", now " + (y.empty() ? "unset" : y);
    };
    for (const auto& [key, value] : a) {
        const auto it = b.find(key);
        if (it == b.end()) note(key, value, "");
        else if (it->second != value) note(key, value, it->second);
    }
    for (const auto& [key, value] : b)
        if (!a.count(key)) note(key, "", value);
    return out.empty() ? "the options differ" : out;
}

const char* kStorage[] = {"auto", "snapshots", "boundary"};
constexpr int kVersion = 2;  // 2: double stack, per-input hashes, failed shots

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

// Writes PATH.tmp, fsyncs it and renames it to PATH: a reader, or a job resumed after a
// crash or power loss, sees the old file or the whole new one. (The caller syncs the folder.)
void write_durably(const fs::path& path, const void* data, std::size_t bytes) {
    const fs::path tmp = path.string() + ".tmp";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) io_failed(tmp, "create");
    const char* p = static_cast<const char*>(data);
    for (std::size_t left = bytes; left > 0;) {
        const ssize_t n = ::write(fd, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            ::close(fd);
            io_failed(tmp, "write");
        }
        p += n, left -= std::size_t(n);
    }
    if (::fsync(fd) != 0) {
        ::close(fd);
        io_failed(tmp, "sync to disk");
    }
    if (::close(fd) != 0) io_failed(tmp, "close");
    fs::rename(tmp, path);
}

void read_exactly(const fs::path& path, std::vector<double>& data) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path.string(), "the job's stack file is missing", "Delete the job folder to start again");
    const auto bytes = std::streamsize(data.size() * sizeof(double));
    in.read(reinterpret_cast<char*>(data.data()), bytes);
    if (in.gcount() != bytes)
        fail(path.string(), "the job's stack file is shorter than the model", "Delete the job folder to start again");
}

// SIGINT or SIGTERM (Ctrl-C, a scheduler's stop) ends the run after the shot under way,
// with a checkpoint and the products; a second one kills at once (SA_RESETHAND), which
// loses only the work since the last checkpoint.
volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop_signal(int sig) { g_stop_signal = sig; }

struct StopOnSignal {
    struct sigaction old_int {}, old_term {};
    StopOnSignal() {
        g_stop_signal = 0;
        struct sigaction sa {};
        sa.sa_handler = on_stop_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESETHAND | SA_RESTART;  // reads under way (segyio's fread) go on
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term);
    }
    ~StopOnSignal() {
        sigaction(SIGINT, &old_int, nullptr);
        sigaction(SIGTERM, &old_term, nullptr);
    }
    StopOnSignal(const StopOnSignal&) = delete;
    StopOnSignal& operator=(const StopOnSignal&) = delete;
};

struct State {
    json j;
    fs::path folder;

    fs::path file() const { return folder / "state.json"; }
    fs::path stack(int gen, const char* what) const {
        return folder / ("stack-" + std::to_string(gen) + "-" + what + ".bin");
    }
    void save() const {
        const std::string text = j.dump(1);
        write_durably(file(), text.data(), text.size());
        sync_folder(folder);
    }
    // Removes every stack generation but `gen`, and unfinished tmp files: what a
    // checkpoint leaves behind, or a run killed in the middle of one.
    void remove_stale(int gen) const {
        static const std::regex ours(R"(stack-(\d+)-(image|illumination)\.bin(\.tmp)?|state\.json\.tmp)");
        std::smatch m;
        for (const auto& e : fs::directory_iterator(folder)) {
            const std::string name = e.path().filename().string();
            if (!std::regex_match(name, m, ours)) continue;
            if (m[1].matched && !m[3].matched && std::stoi(m[1].str()) == gen) continue;
            fs::remove(e.path());
        }
    }
};

std::vector<std::string> write_products(const fs::path& folder, const imaging::Stack& stack,
                                        const MigrationJobOptions& opt, int done, int total) {
    const imaging::PostProcessing& post = opt.post;
    const Volume image = imaging::final_image(stack, post);
    std::vector<std::string> out = {(folder / "image.sgy").string(), (folder / "illumination.sgy").string()};
    io::write_volume(out[0], image, "rtm migrate: stacked RTM image");
    io::write_volume(out[1], imaging::illumination_volume(stack), "rtm migrate: source illumination (sum of u^2)");
    for (auto& p : write_image_previews(folder.string(), image, opt, done, total)) out.push_back(p);
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
    json inputs = json::object();
    for (const auto& [file, hash] : fp.inputs) inputs[file] = hash;
    if (!fs::exists(st.file())) {
        st.j = {{"version", kVersion}, {"settings", fp.settings}, {"inputs", inputs}, {"generation", 0},
                {"shots", json::array()}};
        for (const auto& n : names) st.j["shots"].push_back({{"file", n.file}, {"id", n.id}, {"status", "pending"}});
        st.save();
        return st;
    }
    std::ifstream in(st.file());
    try {
        st.j = json::parse(in);
    } catch (const std::exception& e) {
        fail(st.file().string(), std::string("cannot be read: ") + e.what(), "Delete the job folder to start again");
    }
    const std::string again = "Use a new output.job folder, or delete this one to start again";
    if (st.j.value("version", 1) != kVersion)
        fail(folder, "holds a job written by another version of rtm (state version " +
                         std::to_string(st.j.value("version", 1)) + ", this one writes " + std::to_string(kVersion) + ")",
             again);
    if (st.j.value("settings", "") != fp.settings)
        fail(folder, "holds a job with other settings: " + settings_changed(st.j.value("settings", ""), fp.settings),
             again);
    for (const auto& [file, hash] : fp.inputs) {
        const std::string was = st.j["inputs"].value(file, "");
        if (was != hash)
            fail(file, "is not the file the job in " + folder + " was started with (content hash " + hash + ", was " +
                           (was.empty() ? "absent" : was) + ")",
                 "Put the original file back to resume, or use a new output.job folder (or delete this one) to "
                 "migrate with the new one");
    }
    bool same = st.j["shots"].size() == names.size();
    for (std::size_t i = 0; same && i < names.size(); ++i)
        same = st.j["shots"][i]["file"] == names[i].file && st.j["shots"][i]["id"] == names[i].id;
    if (!same) fail(folder, "holds a job over other shots", again);
    return st;
}

}  // namespace

JobReport run_migration_job(const Model& model, const std::vector<JobShot>& names,
                            const std::function<ShotGather(std::size_t)>& load_shot, const Wavelet& wavelet,
                            const MigrationJobOptions& opt, const JobFingerprint& fingerprint) {
    State st = open_state(opt.folder, names, fingerprint);
    imaging::Stack stack(model.grid());
    JobReport rep;
    rep.total = int(names.size());
    const int gen0 = st.j.at("generation").get<int>();
    if (gen0 > 0) {
        read_exactly(st.stack(gen0, "image"), stack.image);
        read_exactly(st.stack(gen0, "illumination"), stack.illumination);
    }
    st.remove_stale(gen0);
    int failed_before = 0;
    for (const auto& s : st.j["shots"]) {
        rep.done_before += s["status"] == "done";
        failed_before += s["status"] == "failed";
    }
    if (rep.done_before || failed_before)
        spdlog::info("resuming job {}: {} of {} shots already done{}", opt.folder, rep.done_before, rep.total,
                     failed_before ? ", " + std::to_string(failed_before) + " failed before (tried again)" : "");

    auto checkpoint = [&]() {
        const int gen = st.j["generation"].get<int>() + 1;
        write_durably(st.stack(gen, "image"), stack.image.data(), stack.image.size() * sizeof(double));
        write_durably(st.stack(gen, "illumination"), stack.illumination.data(),
                      stack.illumination.size() * sizeof(double));
        sync_folder(st.folder);
        st.j["generation"] = gen;
        st.save();  // the commit point
        st.remove_stale(gen);
    };

    using clock = std::chrono::steady_clock;
    auto last_checkpoint = clock::now();
    const StopOnSignal stop;
    Progress progress("migration: shot", rep.total - rep.done_before);
    int tried = 0, unsaved = 0;  // shots tried in this run; since the last checkpoint
    for (std::size_t i = 0; i < names.size(); ++i) {
        json& s = st.j["shots"][i];
        if (s["status"] == "done") continue;
        if (opt.max_shots >= 0 && tried >= opt.max_shots) break;
        if (g_stop_signal) break;
        ++tried;
        const std::string which = "shot " + std::to_string(names[i].id) + " from " + names[i].file;
        try {
            const ShotGather shot = load_shot(i);
            const ShotMigration m = migrate_shot(model, shot, wavelet, opt.migration);
            stack.add(m.window.grid, m.window.ix0, m.window.iy0, m.image, m.illumination);
            if (opt.keep_shot_images) write_shot_preview(opt.folder, model.grid(), m, names[i], opt.migration);
            s = {{"file", names[i].file}, {"id", names[i].id}, {"status", "done"}, {"seconds", m.seconds},
                 {"storage", kStorage[int(m.storage)]}};
            ++rep.done_now;
            spdlog::info("{} ({} of {}): window {} x {} x {}, {} steps, imaging every {}, source wavefield by {} "
                         "({:.1f} MB), {:.1f} s",
                         which, rep.done_before + rep.done_now, rep.total, m.window.grid.nx, m.window.grid.ny,
                         m.window.grid.nz, m.steps, m.image_every, kStorage[int(m.storage)], m.bytes_kept / 1e6,
                         m.seconds);
        } catch (const std::exception& e) {
            // Whatever stops one shot (its data, its geometry, a blow-up, its memory) stops
            // only that shot; the job's own I/O is outside this block and stops the job.
            s = {{"file", names[i].file}, {"id", names[i].id}, {"status", "failed"}, {"reason", e.what()}};
            rep.failed_now.push_back({names[i], e.what()});
            spdlog::error("{} failed, not stacked (the other shots go on): {}", which, e.what());
        }
        progress.update(tried);
        ++unsaved;
        if (clock::now() - last_checkpoint >= std::chrono::duration<double>(opt.checkpoint_minutes * 60)) {
            checkpoint();
            last_checkpoint = clock::now();
            unsaved = 0;
        }
    }
    rep.signal = g_stop_signal;
    if (rep.signal) spdlog::warn("stopping on signal {} after {} shots in this run", rep.signal, tried);
    if (unsaved > 0) checkpoint();  // always at the end of a run (unless one just came)
    int done = 0;
    for (const auto& s : st.j["shots"]) {
        done += s["status"] == "done";
        rep.failed += s["status"] == "failed";
    }
    rep.complete = done == rep.total;
    spdlog::info("writing the image of {} of {} shots", done, rep.total);
    rep.outputs = write_products(st.folder, stack, opt, done, rep.total);
    return rep;
}

}  // namespace rtm
