#include "pipeline/migration_job.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "core/error.h"
#include "core/progress.h"
#include "io/model_io.h"
#include "io/previews.h"

namespace rtm {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

const char* kStorage[] = {"auto", "snapshots", "boundary"};

void write_atomically(const fs::path& path, const void* data, std::size_t bytes) {
    const fs::path tmp = path.string() + ".tmp";
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out.write(static_cast<const char*>(data), std::streamsize(bytes));
        out.flush();
        if (!out) fail(tmp.string(), "cannot write (disk full or no permission?)", "Free space or choose another job folder");
    }
    fs::rename(tmp, path);
}

void read_exactly(const fs::path& path, float* data, std::size_t n) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path.string(), "the job's stack file is missing", "Delete the job folder to start again");
    in.read(reinterpret_cast<char*>(data), std::streamsize(n * sizeof(float)));
    if (in.gcount() != std::streamsize(n * sizeof(float)))
        fail(path.string(), "the job's stack file is shorter than the model", "Delete the job folder to start again");
}

struct State {
    json j;
    fs::path folder;

    fs::path file() const { return folder / "state.json"; }
    fs::path stack(int gen, const char* what) const {
        return folder / ("stack-" + std::to_string(gen) + "-" + what + ".bin");
    }
    void save() const {
        const std::string text = j.dump(1);
        write_atomically(file(), text.data(), text.size());
    }
};

std::vector<std::string> write_outputs(const fs::path& folder, const imaging::Stack& stack,
                                       const imaging::PostProcessing& post) {
    const Volume image = imaging::final_image(stack, post);
    std::vector<std::string> out = {(folder / "image.sgy").string(), (folder / "illumination.sgy").string()};
    io::write_volume(out[0], image, "rtm migrate: stacked RTM image");
    io::write_volume(out[1], stack.illumination, "rtm migrate: source illumination (sum of u^2)");
    for (auto& p : io::write_volume_png((folder / "image.png").string(), image, io::PngStyle{}))
        out.push_back(p);
    return out;
}

}  // namespace

JobReport run_migration_job(const Model& model, const std::vector<JobShot>& names,
                            const std::function<ShotGather(std::size_t)>& load_shot, const Wavelet& wavelet,
                            const MigrationJobOptions& opt, const std::string& settings) {
    const Grid& g = model.grid();
    State st;
    st.folder = opt.folder;
    try {
        fs::create_directories(st.folder);
    } catch (const fs::filesystem_error& e) {
        fail("option output.job", "'" + opt.folder + "' cannot be made a folder (" + e.code().message() + ")",
             "Choose another job folder");
    }
    imaging::Stack stack(g);
    JobReport rep;
    rep.total = int(names.size());

    if (fs::exists(st.file())) {
        std::ifstream in(st.file());
        try {
            st.j = json::parse(in);
        } catch (const std::exception& e) {
            fail(st.file().string(), std::string("cannot be read: ") + e.what(), "Delete the job folder to start again");
        }
        if (st.j.value("settings", "") != settings)
            fail(opt.folder, "holds a job with other settings (model, shots or options differ)",
                 "Use a new output.job folder, or delete this one to start again");
        const int gen = st.j.at("generation").get<int>();
        if (gen > 0) {
            read_exactly(st.stack(gen, "image"), stack.image.data.data(), g.size());
            read_exactly(st.stack(gen, "illumination"), stack.illumination.data.data(), g.size());
        }
    } else {
        st.j = {{"version", 1}, {"settings", settings}, {"generation", 0}, {"shots", json::array()}};
        for (const auto& n : names) st.j["shots"].push_back({{"file", n.file}, {"id", n.id}, {"done", false}});
        st.save();
    }
    for (const auto& s : st.j["shots"]) rep.done_before += s["done"].get<bool>() ? 1 : 0;
    if (rep.done_before)
        spdlog::info("resuming job {}: {} of {} shots already done", opt.folder, rep.done_before, rep.total);

    auto checkpoint = [&]() {
        const int gen = st.j["generation"].get<int>() + 1;
        write_atomically(st.stack(gen, "image"), stack.image.data.data(), g.size() * sizeof(float));
        write_atomically(st.stack(gen, "illumination"), stack.illumination.data.data(), g.size() * sizeof(float));
        st.j["generation"] = gen;
        st.save();  // the commit point
        fs::remove(st.stack(gen - 1, "image"));
        fs::remove(st.stack(gen - 1, "illumination"));
        rep.outputs = write_outputs(st.folder, stack, opt.post);
    };

    Progress progress("migration: shot", rep.total - rep.done_before);
    int since_checkpoint = 0;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (st.j["shots"][i]["done"].get<bool>()) continue;
        if (opt.max_shots >= 0 && rep.done_now >= opt.max_shots) break;
        const ShotGather shot = load_shot(i);
        const ShotMigration s = migrate_shot(model, shot, wavelet, opt.migration);
        stack.add(s.window.grid, s.window.ix0, s.window.iy0, s.image, s.illumination);
        st.j["shots"][i]["done"] = true;
        st.j["shots"][i]["seconds"] = s.seconds;
        st.j["shots"][i]["storage"] = kStorage[int(s.storage)];
        ++rep.done_now;
        spdlog::info("shot {} ({} of {}): window {} x {} x {}, {} steps, imaging every {}, source wavefield by {} "
                     "({:.1f} MB), {:.1f} s",
                     shot.id, rep.done_before + rep.done_now, rep.total, s.window.grid.nx, s.window.grid.ny,
                     s.window.grid.nz, s.steps, s.image_every, kStorage[int(s.storage)], s.bytes_kept / 1e6,
                     s.seconds);
        progress.update(rep.done_now);
        if (++since_checkpoint >= opt.checkpoint_every) {
            checkpoint();
            since_checkpoint = 0;
        }
    }
    if (since_checkpoint > 0 || rep.outputs.empty()) checkpoint();
    rep.complete = rep.done_before + rep.done_now == rep.total;
    return rep;
}

}  // namespace rtm
