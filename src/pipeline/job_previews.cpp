#include "pipeline/job_previews.h"

#include <algorithm>
#include <filesystem>

#include "core/log.h"
#include "io/previews.h"

namespace rtm {

std::vector<std::string> write_image_previews(const std::string& folder, const Volume& image,
                                              const MigrationJobOptions& opt, int done, int total) {
    const std::filesystem::path dir(folder);
    const std::string title = (dir / "image.sgy").string() + ": " +
                              (done == total ? "all " + counted(total, "shot")
                                             : "partial, " + std::to_string(done) + " of " + counted(total, "shot")) +
                              ", " + condition_name(opt.migration.condition);
    return io::write_volume_png((dir / "image.png").string(), image, io::PngStyle{}, title,
                                post_words(opt.post) + "; no display gain");
}

std::map<std::string, std::string> shot_preview_labels(const std::vector<JobShot>& names) {
    std::vector<std::string> files;  // in the job's order
    std::map<std::string, int> per_stem;
    for (const auto& n : names)
        if (std::find(files.begin(), files.end(), n.file) == files.end()) {
            files.push_back(n.file);
            ++per_stem[std::filesystem::path(n.file).stem().string()];
        }
    std::map<std::string, std::string> label;
    for (std::size_t k = 0; k < files.size(); ++k) {
        const std::string stem = std::filesystem::path(files[k]).stem().string();
        label[files[k]] = per_stem[stem] > 1 ? stem + "-" + std::to_string(k + 1) : stem;
    }
    return label;
}

std::vector<std::string> write_shot_preview(const std::string& folder, const Grid& model, const ShotMigration& shot,
                                            const JobShot& name, const std::string& label, const MigrationOptions& opt) {
    const std::filesystem::path dir = std::filesystem::path(folder) / "shots";
    std::filesystem::create_directories(dir);
    Volume v(model);
    const Grid& w = shot.window.grid;
    for (int iz = 0; iz < w.nz; ++iz)
        for (int iy = 0; iy < w.ny; ++iy)
            for (int ix = 0; ix < w.nx; ++ix)
                v.at(ix + shot.window.ix0, iy + shot.window.iy0, iz) = float(shot.image[w.index(ix, iy, iz)]);
    const std::string path = (dir / ("shot-" + std::to_string(name.id) + "-" + label + ".png")).string();
    return io::write_volume_png(path, v, io::PngStyle{},
                                "shot " + std::to_string(name.id) + " from " + name.file + ", " +
                                    condition_name(opt.condition),
                                "raw shot image (before illumination and Laplacian); no display gain");
}

}  // namespace rtm
