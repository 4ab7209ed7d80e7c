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

void smooth_axis(Volume& theta, Volume* phi, double sigma) {
    const std::size_t n = theta.data.size();
    // The tensor's six components: xx, yy, zz, xy, xz, yz.
    std::vector<double> t[6];
    for (auto& c : t) c.resize(n);
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) {
        const double th = theta.data[i], ph = phi ? phi->data[i] : 0.0;
        const double a[3] = {std::sin(th) * std::cos(ph), std::sin(th) * std::sin(ph), std::cos(th)};
        t[0][i] = a[0] * a[0], t[1][i] = a[1] * a[1], t[2][i] = a[2] * a[2];
        t[3][i] = a[0] * a[1], t[4][i] = a[0] * a[2], t[5][i] = a[1] * a[2];
    }
    for (auto& c : t) gaussian(c, theta.grid, sigma);
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) {
        const double T[3][3] = {{t[0][i], t[3][i], t[4][i]}, {t[3][i], t[1][i], t[5][i]}, {t[4][i], t[5][i], t[2][i]}};
        // The principal direction by power iteration from the node's own axis before
        // smoothing. The tensor is an average of unit dyads (its trace is 1, its
        // eigenvalues in [0, 1]); where the axes varied little within sigma its largest
        // eigenvalue is near 1 and the others near 0, so a few iterations converge; where
        // they spread over every direction the axis is ill-defined anyway.
        const double th = theta.data[i], ph = phi ? phi->data[i] : 0.0;
        double v[3] = {std::sin(th) * std::cos(ph), std::sin(th) * std::sin(ph), std::cos(th)};
        for (int it = 0; it < 100; ++it) {
            double w[3];
            for (int r = 0; r < 3; ++r) w[r] = T[r][0] * v[0] + T[r][1] * v[1] + T[r][2] * v[2];
            const double norm = std::sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
            if (!(norm > 0)) break;  // (the start orthogonal to a rank-one tensor: keep it)
            double change = 0;
            for (int r = 0; r < 3; ++r) {
                change = std::max(change, std::abs(w[r] / norm - v[r]));
                v[r] = w[r] / norm;
            }
            if (change < 1e-13) break;
        }
        if (v[2] < 0 || (v[2] == 0 && v[0] < 0))
            for (double& c : v) c = -c;
        if (phi) {
            theta.data[i] = float(std::atan2(std::hypot(v[0], v[1]), v[2]));
            phi->data[i] = float(std::atan2(v[1], v[0]));
        } else {
            theta.data[i] = float(std::atan2(v[0], v[2]));
        }
    }
}

Volume smooth_values(const Volume& v, double sigma) {
    std::vector<double> f(v.data.begin(), v.data.end());
    gaussian(f, v.grid, sigma);
    Volume out(v.grid);
    for (std::size_t i = 0; i < f.size(); ++i) out.data[i] = float(f[i]);
    return out;
}

}  // namespace rtm
