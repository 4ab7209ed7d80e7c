#include "physics/smoothing.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace rtm {

namespace {

// f smoothed by a Gaussian of `sigma` metres along each axis in turn (cut at 3 sigma,
// the edges extended), in place.
void gaussian(std::vector<double>& f, const Grid& g, double sigma) {
    std::vector<double> t(f.size());
    const int n[3] = {g.nx, g.ny, g.nz};
    const double h[3] = {g.dx, g.dy, g.dz};
    const long stride[3] = {1, long(g.nx), long(g.nx) * g.ny};
    for (int ax = 0; ax < 3; ++ax) {
        if (n[ax] == 1) continue;
        const double sc = sigma / h[ax];
        const int r = int(std::ceil(3 * sc));
        std::vector<double> w(2 * r + 1);
        double sum = 0;
        for (int k = -r; k <= r; ++k) sum += w[k + r] = std::exp(-0.5 * k * k / (sc * sc));
        for (double& x : w) x /= sum;
#pragma omp parallel for schedule(static)
        for (std::size_t p = 0; p < f.size(); ++p) {
            const int c = int((p / stride[ax]) % n[ax]);
            double acc = 0;
            for (int k = -r; k <= r; ++k) {
                const int q = std::clamp(c + k, 0, n[ax] - 1);
                acc += w[k + r] * f[p + (q - c) * stride[ax]];
            }
            t[p] = acc;
        }
        f.swap(t);
    }
}

}  // namespace

Volume smooth_slowness(const Volume& v, double sigma) {
    std::vector<double> s(v.data.size());
    for (std::size_t i = 0; i < s.size(); ++i) s[i] = 1.0 / v.data[i];
    gaussian(s, v.grid, sigma);
    Volume out(v.grid);
    for (std::size_t i = 0; i < s.size(); ++i) out.data[i] = float(1.0 / s[i]);
    return out;
}

Volume smooth_values(const Volume& v, double sigma) {
    std::vector<double> f(v.data.begin(), v.data.end());
    gaussian(f, v.grid, sigma);
    Volume out(v.grid);
    for (std::size_t i = 0; i < f.size(); ++i) out.data[i] = float(f[i]);
    return out;
}

}  // namespace rtm
