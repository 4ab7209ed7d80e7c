#include "imaging/stack.h"

#include <algorithm>
#include <cmath>

#include "core/default_init.h"
#include "core/error.h"
#include "imaging/field_ops.h"

namespace rtm::imaging {

void Stack::add(const Grid& w, int ix0, int iy0, const double* img, const double* ill) {
    // The first value that is not finite, searched on every core (a 3D shot's image and
    // illumination are 768 MB, which one thread read before the adding began).
    for (const double* f : {img, ill}) {
        const long n = long(w.size());
        long first_bad = n;
#pragma omp parallel for reduction(min : first_bad)
        for (long i = 0; i < n; ++i)
            if (!std::isfinite(f[i])) first_bad = std::min(first_bad, i);
        if (first_bad < n) {
            const std::size_t k = std::size_t(first_bad);
            const double bad = f[k];
            fail(f == img ? "shot image" : "shot illumination",
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

// In passes over the nodes on every core, each array written once (no zeroing first):
// the normalised stack, its Laplacian, then the image with its sign and top mute (the
// end of a 3D job waits for it: 48 M nodes).
Volume final_image(const Stack& s, const PostProcessing& pp, const UninitVector<double>& illumination) {
    const long n = long(s.image.size());
    if (pp.normalise && illumination.size() != s.image.size())
        fail("final_image", "the illumination has " + std::to_string(illumination.size()) + " values for " +
                                std::to_string(n) + " nodes", "Internal error: pass illumination_values(stack)");
    double eps = 0;
    if (pp.normalise) {
        double smax = 0;
#pragma omp parallel for schedule(static) reduction(max : smax)
        for (long i = 0; i < n; ++i) smax = std::max(smax, illumination[std::size_t(i)]);
        eps = pp.epsilon * (smax > 0 ? smax : 1.0);
    }
    UninitVector<double> f(s.image.size()), lap(pp.laplacian ? s.image.size() : 0);
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) {
        const std::size_t k = std::size_t(i);
        f[k] = pp.normalise ? s.image[k].value() / (illumination[k] + eps) : s.image[k].value();
    }
    if (pp.laplacian) laplacian(f.data(), s.grid, lap.data());
    // The final image is -Lap of the normalised stack (the sign makes reflectors of
    // positive impedance contrast positive); the top mute zeroes it above depth
    // top_mute and tapers it in over top_taper (a weight per plane).
    const double sign = pp.laplacian ? -1 : 1;
    const double* from = pp.laplacian ? lap.data() : f.data();
    const Grid& g = s.grid;
    const std::size_t layer = std::size_t(g.nx) * g.ny;
    Volume out(g);
#pragma omp parallel for schedule(static)
    for (int iz = 0; iz < g.nz; ++iz) {
        double w = 1;
        if (pp.top_mute > 0) {
            const double z = g.z0 + iz * g.dz - pp.top_mute;
            w = z < 0 ? 0 : z >= pp.top_taper ? 1 : 0.5 - 0.5 * std::cos(M_PI * z / pp.top_taper);
        }
        for (std::size_t i = std::size_t(iz) * layer; i < std::size_t(iz + 1) * layer; ++i) {
            const float v = float(sign * from[i]);
            out.data[i] = pp.top_mute > 0 ? float(v * w) : v;
        }
    }
    return out;
}

Volume final_image(const Stack& s, const PostProcessing& pp) {
    return final_image(s, pp, pp.normalise ? illumination_values(s) : UninitVector<double>());
}

UninitVector<double> illumination_values(const Stack& s) {
    UninitVector<double> out(s.illumination.size());
    const long n = long(out.size());
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; ++i) out[std::size_t(i)] = s.illumination[std::size_t(i)].value();
    return out;
}

Volume illumination_volume(const Grid& g, const UninitVector<double>& illumination) {
    Volume out(g);
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < out.data.size(); ++i) out.data[i] = float(illumination[i]);
    return out;
}

}  // namespace rtm::imaging
