#include "imaging/field_ops.h"

#include "physics/stencil.h"

namespace rtm::imaging {

using stencil::R;

namespace {

// Calls fn(p, stride, h, count) for each axis the grid has, with the number of nodes
// along it; used to visit neighbours p +- k * stride that stay inside the grid.
template <class Fn>
void for_axes(const Grid& g, Fn fn) {
    fn(0, 1L, g.dx, g.nx);
    if (g.ny > 1) fn(1, long(g.nx), g.dy, g.ny);
    fn(2, long(g.nx) * g.ny, g.dz, g.nz);
}

inline int coord(const Grid& g, int axis, std::size_t p) {
    if (axis == 0) return int(p % g.nx);
    if (axis == 1) return int((p / g.nx) % g.ny);
    return int(p / (std::size_t(g.nx) * g.ny));
}

double d2(const std::vector<double>& f, const Grid& g, std::size_t p, int axis, long s, double h, int n) {
    const int c = coord(g, axis, p);
    double sum = stencil::c2(0) * f[p];
    for (int k = 1; k <= R; ++k) {
        if (c + k < n) sum += stencil::c2(k) * f[p + k * s];
        if (c - k >= 0) sum += stencil::c2(k) * f[p - k * s];
    }
    return sum / (h * h);
}

double d1(const std::vector<double>& f, const Grid& g, std::size_t p, int axis, long s, double h, int n) {
    const int c = coord(g, axis, p);
    double sum = 0;
    for (int k = 1; k <= R; ++k) {
        if (c + k < n) sum += stencil::d1(k) * f[p + k * s];
        if (c - k >= 0) sum -= stencil::d1(k) * f[p - k * s];
    }
    return sum / h;
}

}  // namespace

std::vector<double> laplacian(const std::vector<double>& f, const Grid& g) {
    std::vector<double> out(f.size(), 0.0);
#pragma omp parallel for schedule(static)
    for (std::size_t p = 0; p < f.size(); ++p)
        for_axes(g, [&](int axis, long s, double h, int n) { out[p] += d2(f, g, p, axis, s, h, n); });
    return out;
}

std::vector<double> grad_dot(const std::vector<double>& a, const std::vector<double>& b, const Grid& g) {
    std::vector<double> out(a.size(), 0.0);
#pragma omp parallel for schedule(static)
    for (std::size_t p = 0; p < a.size(); ++p)
        for_axes(g, [&](int axis, long s, double h, int n) {
            out[p] += d1(a, g, p, axis, s, h, n) * d1(b, g, p, axis, s, h, n);
        });
    return out;
}

std::pair<std::vector<double>, std::vector<double>> anisotropic_operator(
    const std::vector<double>& p, const std::vector<double>& q, const Grid& g,
    const std::array<std::vector<double>, 3>& axis) {
    std::vector<double> hp(p.size(), 0.0), vq(q.size(), 0.0);
    if (axis[0].empty()) {  // VTI: the compact second derivatives, across (x, y) and along (z) the axis
#pragma omp parallel for schedule(static)
        for (std::size_t i = 0; i < p.size(); ++i)
            for_axes(g, [&](int a, long s, double h, int n) {
                if (a == 2) vq[i] += d2(q, g, i, a, s, h, n);
                else hp[i] += d2(p, g, i, a, s, h, n);
            });
        return {hp, vq};
    }
    // TTI, in two passes as the step kernels: the fluxes n (n . grad p) and
    // (I - n n^T) grad q, then the compact Laplacians minus their divergences.
    std::array<std::vector<double>, 3> fp, fq;
    for (int a = 0; a < 3; ++a) {
        fp[a].assign(p.size(), 0.0);
        fq[a].assign(q.size(), 0.0);
    }
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < p.size(); ++i) {
        double gp[3] = {0, 0, 0}, gq[3] = {0, 0, 0};
        for_axes(g, [&](int a, long s, double h, int n) {
            gp[a] = d1(p, g, i, a, s, h, n);
            gq[a] = d1(q, g, i, a, s, h, n);
        });
        const double n[3] = {axis[0][i], axis[1][i], axis[2][i]};
        const double np = n[0] * gp[0] + n[1] * gp[1] + n[2] * gp[2];
        const double nq = n[0] * gq[0] + n[1] * gq[1] + n[2] * gq[2];
        for (int a = 0; a < 3; ++a) {
            fp[a][i] = n[a] * np;
            fq[a][i] = gq[a] - n[a] * nq;
        }
    }
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < p.size(); ++i)
        for_axes(g, [&](int a, long s, double h, int n) {
            hp[i] += d2(p, g, i, a, s, h, n) - d1(fp[a], g, i, a, s, h, n);
            vq[i] += d2(q, g, i, a, s, h, n) - d1(fq[a], g, i, a, s, h, n);
        });
    return {hp, vq};
}

}  // namespace rtm::imaging
