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

// Calls fn(p, c) for every node p of g, c its (x, y, z) indices, rows in parallel (the
// indices counted, not divided out of p: a division per stencil tap cost more than the tap).
template <class Fn>
void for_nodes(const Grid& g, Fn fn) {
#pragma omp parallel for collapse(2) schedule(static)
    for (int iz = 0; iz < g.nz; ++iz)
        for (int iy = 0; iy < g.ny; ++iy) {
            const std::size_t row = g.index(0, iy, iz);
            int c[3] = {0, iy, iz};
            for (c[0] = 0; c[0] < g.nx; ++c[0]) fn(row + std::size_t(c[0]), c);
        }
}

// The stencils at node p whose index along the axis is c (of n), taps outside the grid zero.
double d2(const double* f, std::size_t p, int c, long s, double h, int n) {
    double sum = stencil::c2(0) * f[p];
    for (int k = 1; k <= R; ++k) {
        if (c + k < n) sum += stencil::c2(k) * f[p + k * s];
        if (c - k >= 0) sum += stencil::c2(k) * f[p - k * s];
    }
    return sum / (h * h);
}

double d1(const double* f, std::size_t p, int c, long s, double h, int n) {
    double sum = 0;
    for (int k = 1; k <= R; ++k) {
        if (c + k < n) sum += stencil::d1(k) * f[p + k * s];
        if (c - k >= 0) sum -= stencil::d1(k) * f[p - k * s];
    }
    return sum / h;
}

// d2 at a node whose taps along the axis all lie in the grid: the same sum in the same
// order, without the tests, so that a row of them vectorises.
inline double d2_inside(const double* f, std::size_t p, long s, double h) {
    double sum = stencil::c2(0) * f[p];
    for (int k = 1; k <= R; ++k) {
        sum += stencil::c2(k) * f[p + k * s];
        sum += stencil::c2(k) * f[p - k * s];
    }
    return sum / (h * h);
}

}  // namespace

// Rows whose nodes' y and z taps all lie in the grid take the tests only at their x ends
// (the end of a 3D migration waited 0.095 s on 16 cores for the tested form, 48 M nodes,
// H200 host, 2026-11-25). Each node's sum is the same, term for term.
void laplacian(const double* f, const Grid& g, double* out) {
    const long sy = long(g.nx), sz = long(g.nx) * g.ny;
#pragma omp parallel for collapse(2) schedule(static)
    for (int iz = 0; iz < g.nz; ++iz)
        for (int iy = 0; iy < g.ny; ++iy) {
            const std::size_t row = g.index(0, iy, iz);
            const int c[3] = {0, iy, iz};
            const auto tested = [&](int ix) {
                int at[3] = {ix, c[1], c[2]};
                double sum = 0;
                for_axes(g, [&](int axis, long s, double h, int n) { sum += d2(f, row + ix, at[axis], s, h, n); });
                out[row + ix] = sum;
            };
            const bool inside = iz >= R && iz < g.nz - R && (g.ny == 1 || (iy >= R && iy < g.ny - R));
            const int x0 = inside ? std::min(R, g.nx) : g.nx, x1 = inside ? std::max(x0, g.nx - R) : g.nx;
            for (int ix = 0; ix < x0; ++ix) tested(ix);
            if (g.ny > 1)
                for (int ix = x0; ix < x1; ++ix) {
                    const std::size_t p = row + std::size_t(ix);
                    out[p] = double(0) + d2_inside(f, p, 1, g.dx) + d2_inside(f, p, sy, g.dy) + d2_inside(f, p, sz, g.dz);
                }
            else
                for (int ix = x0; ix < x1; ++ix) {
                    const std::size_t p = row + std::size_t(ix);
                    out[p] = double(0) + d2_inside(f, p, 1, g.dx) + d2_inside(f, p, sz, g.dz);
                }
            for (int ix = x1; ix < g.nx; ++ix) tested(ix);
        }
}

std::vector<double> laplacian(const std::vector<double>& f, const Grid& g) {
    std::vector<double> out(f.size());
    laplacian(f.data(), g, out.data());
    return out;
}

std::vector<double> grad_dot(const std::vector<double>& a, const std::vector<double>& b, const Grid& g) {
    std::vector<double> out(a.size(), 0.0);
    for_nodes(g, [&](std::size_t p, const int* c) {
        for_axes(g, [&](int axis, long s, double h, int n) {
            out[p] += d1(a.data(), p, c[axis], s, h, n) * d1(b.data(), p, c[axis], s, h, n);
        });
    });
    return out;
}

std::pair<std::vector<double>, std::vector<double>> anisotropic_operator(
    const std::vector<double>& p, const std::vector<double>& q, const Grid& g,
    const std::array<std::vector<double>, 3>& axis) {
    std::vector<double> hp(p.size(), 0.0), vq(q.size(), 0.0);
    if (axis[0].empty()) {  // VTI: the compact second derivatives, across (x, y) and along (z) the axis
        for_nodes(g, [&](std::size_t i, const int* c) {
            for_axes(g, [&](int a, long s, double h, int n) {
                if (a == 2) vq[i] += d2(q.data(), i, c[a], s, h, n);
                else hp[i] += d2(p.data(), i, c[a], s, h, n);
            });
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
    for_nodes(g, [&](std::size_t i, const int* c) {
        double gp[3] = {0, 0, 0}, gq[3] = {0, 0, 0};
        for_axes(g, [&](int a, long s, double h, int n) {
            gp[a] = d1(p.data(), i, c[a], s, h, n);
            gq[a] = d1(q.data(), i, c[a], s, h, n);
        });
        const double n[3] = {axis[0][i], axis[1][i], axis[2][i]};
        const double np = n[0] * gp[0] + n[1] * gp[1] + n[2] * gp[2];
        const double nq = n[0] * gq[0] + n[1] * gq[1] + n[2] * gq[2];
        for (int a = 0; a < 3; ++a) {
            fp[a][i] = n[a] * np;
            fq[a][i] = gq[a] - n[a] * nq;
        }
    });
    for_nodes(g, [&](std::size_t i, const int* c) {
        for_axes(g, [&](int a, long s, double h, int n) {
            hp[i] += d2(p.data(), i, c[a], s, h, n) - d1(fp[a].data(), i, c[a], s, h, n);
            vq[i] += d2(q.data(), i, c[a], s, h, n) - d1(fq[a].data(), i, c[a], s, h, n);
        });
    });
    return {hp, vq};
}

}  // namespace rtm::imaging
