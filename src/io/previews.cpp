#include "io/previews.h"

#include <filesystem>

namespace rtm::io {

void write_gather_png(const std::string& path, const ShotGather& shot) {
    // A t^2 gain (spherical divergence, for display only) so late reflections show
    // beside the direct wave.
    const int w = int(shot.ntraces()), h = shot.nt;
    std::vector<float> img(std::size_t(w) * h);
    for (int t = 0; t < h; ++t) {
        const float gain = float((t * shot.dt) * (t * shot.dt));
        for (int r = 0; r < w; ++r) img[std::size_t(t) * w + r] = shot.trace(r)[t] * gain;
    }
    write_png(path, img, w, h, PngStyle{});
}

std::vector<std::string> write_volume_png(const std::string& path, const Volume& v, const PngStyle& style,
                                          int ix, int iy, int iz) {
    const Grid& g = v.grid;
    if (g.ny == 1) {
        write_png(path, v.data, g.nx, g.nz, style);
        return {path};
    }
    if (ix < 0) ix = g.nx / 2;
    if (iy < 0) iy = g.ny / 2;
    if (iz < 0) iz = g.nz / 2;
    const std::filesystem::path p(path);
    auto named = [&](const std::string& tag) {
        return (p.parent_path() / (p.stem().string() + "_" + tag + p.extension().string())).string();
    };
    std::vector<std::string> out;
    std::vector<float> img;
    // Inline section (constant y): x across, depth down.
    img.resize(std::size_t(g.nx) * g.nz);
    for (int z = 0; z < g.nz; ++z)
        for (int x = 0; x < g.nx; ++x) img[std::size_t(z) * g.nx + x] = v.at(x, iy, z);
    out.push_back(named("inline"));
    write_png(out.back(), img, g.nx, g.nz, style);
    // Crossline section (constant x): y across, depth down.
    img.resize(std::size_t(g.ny) * g.nz);
    for (int z = 0; z < g.nz; ++z)
        for (int y = 0; y < g.ny; ++y) img[std::size_t(z) * g.ny + y] = v.at(ix, y, z);
    out.push_back(named("crossline"));
    write_png(out.back(), img, g.ny, g.nz, style);
    // Depth slice: x across, y down.
    img.resize(std::size_t(g.nx) * g.ny);
    for (int y = 0; y < g.ny; ++y)
        for (int x = 0; x < g.nx; ++x) img[std::size_t(y) * g.nx + x] = v.at(x, y, iz);
    out.push_back(named("depth"));
    write_png(out.back(), img, g.nx, g.ny, style);
    return out;
}

}  // namespace rtm::io
