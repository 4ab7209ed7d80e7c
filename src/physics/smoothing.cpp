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

namespace {

// The unit eigenvector of the largest eigenvalue of a symmetric 3x3 matrix, by cyclic
// Jacobi rotations (each zeroes one off-diagonal entry; a handful of sweeps bring them to
// rounding). Exact for any spread of eigenvalues, where power iteration from a start
// nearly orthogonal to the answer stops short of it.
void principal_axis(double a[3][3], double out[3]) {
    double v[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    for (int sweep = 0; sweep < 32; ++sweep) {
        const double off = std::abs(a[0][1]) + std::abs(a[0][2]) + std::abs(a[1][2]);
        if (off < 1e-300) break;
        for (int p = 0; p < 2; ++p)
            for (int q = p + 1; q < 3; ++q) {
                if (a[p][q] == 0) continue;
                const double th = 0.5 * std::atan2(2 * a[p][q], a[q][q] - a[p][p]);
                const double c = std::cos(th), s = std::sin(th);
                for (int k = 0; k < 3; ++k) {  // a <- a J (columns p, q)
                    const double akp = a[k][p], akq = a[k][q];
                    a[k][p] = c * akp - s * akq;
                    a[k][q] = s * akp + c * akq;
                }
                for (int k = 0; k < 3; ++k) {  // a <- J^T a (rows p, q)
                    const double apk = a[p][k], aqk = a[q][k];
                    a[p][k] = c * apk - s * aqk;
                    a[q][k] = s * apk + c * aqk;
                }
                for (int k = 0; k < 3; ++k) {  // v <- v J
                    const double vkp = v[k][p], vkq = v[k][q];
                    v[k][p] = c * vkp - s * vkq;
                    v[k][q] = s * vkp + c * vkq;
                }
            }
    }
    int best = 0;
    for (int i = 1; i < 3; ++i)
        if (a[i][i] > a[best][best]) best = i;
    for (int k = 0; k < 3; ++k) out[k] = v[k][best];
}

}  // namespace

void smooth_axis(Volume& theta, Volume* phi, double sigma) {
    const std::size_t n = theta.data.size();
    const auto axis = [&](std::size_t i, double a[3]) {
        const double th = theta.data[i], ph = phi ? phi->data[i] : 0.0;
        a[0] = std::sin(th) * std::cos(ph), a[1] = std::sin(th) * std::sin(ph), a[2] = std::cos(th);
    };
    // The tensor's components xx, yy, zz, xy, xz, yz (without an azimuth, n_y = 0: xx, zz
    // and xz), each smoothed in double and kept in float: 12-24 B a node beside the
    // smoothing's 16, where six double volumes took 56.
    static constexpr int kPair[6][2] = {{0, 0}, {1, 1}, {2, 2}, {0, 1}, {0, 2}, {1, 2}};
    std::vector<float> t[6];
    std::vector<double> f(n);
    for (int c = 0; c < 6; ++c) {
        if (!phi && (kPair[c][0] == 1 || kPair[c][1] == 1)) continue;
#pragma omp parallel for schedule(static)
        for (std::size_t i = 0; i < n; ++i) {
            double a[3];
            axis(i, a);
            f[i] = a[kPair[c][0]] * a[kPair[c][1]];
        }
        gaussian(f, theta.grid, sigma);
        t[c].assign(f.begin(), f.end());
    }
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < n; ++i) {
        if (!phi) {  // in the x-z plane: the principal direction in closed form
            const double th = 0.5 * std::atan2(2.0 * t[4][i], double(t[2][i]) - t[0][i]);
            theta.data[i] = float(th);
            continue;
        }
        double T[3][3] = {{t[0][i], t[3][i], t[4][i]}, {t[3][i], t[1][i], t[5][i]}, {t[4][i], t[5][i], t[2][i]}};
        double v[3];
        principal_axis(T, v);
        if (v[2] < 0 || (v[2] == 0 && v[0] < 0))
            for (double& c : v) c = -c;
        theta.data[i] = float(std::atan2(std::hypot(v[0], v[1]), v[2]));
        phi->data[i] = float(std::atan2(v[1], v[0]));
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
