// The image filter's Laplacian (imaging::laplacian): its rows without edge tests give
// each node the sum the tested form gives, term for term, so the final image does not
// depend on which form a node took.
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "imaging/field_ops.h"
#include "physics/stencil.h"
#include "support/catch.hpp"

using namespace rtm;

namespace {

// The definition, one tested tap at a time: zero outside the grid, the axes x, y, z in
// that order, each axis's sum from its centre out, +k before -k, divided by h^2.
double reference(const std::vector<double>& f, const Grid& g, int ix, int iy, int iz) {
    const int at[3] = {ix, iy, iz}, n[3] = {g.nx, g.ny, g.nz};
    const long stride[3] = {1, long(g.nx), long(g.nx) * g.ny};
    const double h[3] = {g.dx, g.dy, g.dz};
    const std::size_t p = g.index(ix, iy, iz);
    double sum = 0;
    for (int a = 0; a < 3; ++a) {
        if (a == 1 && g.ny == 1) continue;
        double s = stencil::c2(0) * f[p];
        for (int k = 1; k <= stencil::R; ++k) {
            if (at[a] + k < n[a]) s += stencil::c2(k) * f[p + k * stride[a]];
            if (at[a] - k >= 0) s += stencil::c2(k) * f[p - k * stride[a]];
        }
        sum += s / (h[a] * h[a]);
    }
    return sum;
}

}  // namespace

TEST_CASE("the image Laplacian gives every node the tested form's sum bit for bit in 2D and 3D") {
    std::mt19937_64 rng(7);
    std::normal_distribution<double> normal;
    for (const Grid g : {Grid{23, 1, 19, 7.5, 1, 5}, Grid{21, 17, 13, 10, 12.5, 5}, Grid{6, 5, 30, 10, 10, 10}}) {
        std::vector<double> f(g.size()), out(g.size());
        for (double& v : f) v = normal(rng);
        imaging::laplacian(f.data(), g, out.data());
        long differ = 0;
        for (int iz = 0; iz < g.nz; ++iz)
            for (int iy = 0; iy < g.ny; ++iy)
                for (int ix = 0; ix < g.nx; ++ix) {
                    const double want = reference(f, g, ix, iy, iz), got = out[g.index(ix, iy, iz)];
                    differ += std::memcmp(&want, &got, sizeof want) != 0;
                }
        INFO(g.nx << " x " << g.ny << " x " << g.nz);
        CHECK(differ == 0);
    }
}
