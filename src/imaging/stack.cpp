#include "imaging/stack.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "imaging/field_ops.h"

namespace rtm::imaging {

void Stack::add(const Grid& w, int ix0, int iy0, const std::vector<double>& img,
                const std::vector<double>& ill) {
    // The first value that is not finite, searched on every core (a 3D shot's image and
    // illumination are 768 MB, which one thread read before the adding began).
    for (const auto* f : {&img, &ill}) {
        const long n = long(f->size());
        long first_bad = n;
#pragma omp parallel for reduction(min : first_bad)
        for (long i = 0; i < n; ++i)
            if (!std::isfinite((*f)[std::size_t(i)])) first_bad = std::min(first_bad, i);
        if (first_bad < n) {
            const std::size_t k = std::size_t(first_bad);
            const double bad = (*f)[k];
            fail(f == &img ? "shot image" : "shot illumination",
                 "window node (ix " + std::to_string(k % w.nx) + ", iy " + std::to_string((k / w.nx) % w.ny) + ", iz " +
                     std::to_string(k / (std::size_t(w.nx) * w.ny)) + ") is " + std::to_string(bad) +
                     ": not stacked",
                 "Check the shot's data and the velocity model for huge or non-finite values");
        }
    }
#pragma omp parallel for
    for (int iz = 0; iz < w.nz; ++iz)
        for (int iy = 0; iy < w.ny; ++iy)
            for (int ix = 0; ix < w.nx; ++ix) {
                const std::size_t q = w.index(ix, iy, iz), p = grid.index(ix + ix0, iy + iy0, iz);
                image[p].add(img[q]);
                illumination[p].add(ill[q]);
            }
}

void Stack::add(const Stack& o) {
    if (o.image.size() != image.size()) fail("stack", "partial stacks of different grids", "Internal error");
#pragma omp parallel for
    for (std::size_t i = 0; i < image.size(); ++i) {
        image[i].add(o.image[i]);
        illumination[i].add(o.illumination[i]);
    }
}

namespace {
std::vector<double> values(const ZeroedArray<ExactSum>& sums) {
    std::vector<double> out(sums.size());
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < sums.size(); ++i) out[i] = sums[i].value();
    return out;
}
}  // namespace

std::vector<double> Stack::image_values() const { return values(image); }
std::vector<double> Stack::illumination_values() const { return values(illumination); }

Volume final_image(const Stack& s, const PostProcessing& pp) {
    std::vector<double> f = s.image_values();
    if (pp.normalise) {
        const std::vector<double> ill = s.illumination_values();
        const double smax = *std::max_element(ill.begin(), ill.end());
        const double eps = pp.epsilon * (smax > 0 ? smax : 1.0);
#pragma omp parallel for schedule(static)
        for (std::size_t i = 0; i < f.size(); ++i) f[i] /= ill[i] + eps;
    }
    if (pp.laplacian) {
        f = laplacian(f, s.grid);
    }
    // The final image is -Lap of the normalised stack (the sign makes reflectors of
    // positive impedance contrast positive).
    const double sign = pp.laplacian ? -1 : 1;
    Volume out(s.grid);
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < f.size(); ++i) out.data[i] = float(sign * f[i]);
    if (pp.top_mute > 0) {
        const std::size_t layer = std::size_t(s.grid.nx) * s.grid.ny;
        for (int iz = 0; iz < s.grid.nz; ++iz) {
            const double z = s.grid.z0 + iz * s.grid.dz - pp.top_mute;
            const double w = z < 0 ? 0 : z >= pp.top_taper ? 1 : 0.5 - 0.5 * std::cos(M_PI * z / pp.top_taper);
            for (std::size_t i = iz * layer; i < (iz + 1) * layer; ++i) out.data[i] = float(out.data[i] * w);
        }
    }
    return out;
}

Volume illumination_volume(const Stack& s) {
    Volume out(s.grid);
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < out.data.size(); ++i) out.data[i] = float(s.illumination[i].value());
    return out;
}

}  // namespace rtm::imaging
