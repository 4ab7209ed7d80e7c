#include "imaging/stack.h"

#include <algorithm>

#include "imaging/field_ops.h"

namespace rtm::imaging {

void Stack::add(const Grid& w, int ix0, int iy0, const std::vector<double>& img,
                const std::vector<double>& ill) {
    const Grid& g = image.grid;
    for (int iz = 0; iz < w.nz; ++iz)
        for (int iy = 0; iy < w.ny; ++iy)
            for (int ix = 0; ix < w.nx; ++ix) {
                const std::size_t q = w.index(ix, iy, iz), p = g.index(ix + ix0, iy + iy0, iz);
                image.data[p] += float(img[q]);
                illumination.data[p] += float(ill[q]);
            }
}

Volume final_image(const Stack& s, const PostProcessing& pp) {
    const Grid& g = s.image.grid;
    std::vector<double> f(s.image.data.begin(), s.image.data.end());
    if (pp.normalise) {
        const double smax = *std::max_element(s.illumination.data.begin(), s.illumination.data.end());
        const double eps = pp.epsilon * (smax > 0 ? smax : 1.0);
        for (std::size_t i = 0; i < f.size(); ++i) f[i] /= double(s.illumination.data[i]) + eps;
    }
    if (pp.laplacian) {
        f = laplacian(f, g);
        for (double& x : f) x = -x;
    }
    Volume out(g);
    for (std::size_t i = 0; i < f.size(); ++i) out.data[i] = float(f[i]);
    return out;
}

}  // namespace rtm::imaging
