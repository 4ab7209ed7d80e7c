#pragma once
// Regular grids and where they sit in the survey.
//
// Memory order everywhere in rtm: x fastest, then y, then z (depth) slowest.
// A 2D grid has ny == 1. Local coordinates are metres from node (0,0) along the
// grid axes; z is depth in metres, positive down, z = z0 + iz*dz.
// The Frame maps local (x, y) to world (X, Y) as found in SEG-Y headers.
#include <cmath>
#include <cstddef>
#include <vector>

namespace rtm {

struct Frame {
    double ox = 0, oy = 0;    // world X, Y of node (0, 0)
    double exx = 1, exy = 0;  // world direction of the grid's x axis (unit vector)
    double eyx = 0, eyy = 1;  // world direction of the grid's y axis (unit vector)

    void to_world(double x, double y, double& X, double& Y) const {
        X = ox + x * exx + y * eyx;
        Y = oy + x * exy + y * eyy;
    }
    // Inverse of to_world (the axes need not be orthogonal, only independent).
    void to_local(double X, double Y, double& x, double& y) const {
        const double det = exx * eyy - eyx * exy;
        const double dX = X - ox, dY = Y - oy;
        x = (dX * eyy - dY * eyx) / det;
        y = (dY * exx - dX * exy) / det;
    }
};

struct Grid {
    int nx = 1, ny = 1, nz = 1;
    double dx = 1, dy = 1, dz = 1;  // metres
    double z0 = 0;                  // depth of the first sample, metres
    Frame frame;

    int ndim() const { return ny > 1 ? 3 : 2; }
    std::size_t size() const { return std::size_t(nx) * ny * nz; }
    std::size_t index(int ix, int iy, int iz) const {
        return (std::size_t(iz) * ny + iy) * nx + ix;
    }
    double x_max() const { return (nx - 1) * dx; }
    double y_max() const { return (ny - 1) * dy; }
    double z_max() const { return z0 + (nz - 1) * dz; }
};

// A float field on a grid (a velocity model, an image, an illumination map).
struct Volume {
    Grid grid;
    std::vector<float> data;

    Volume() = default;
    explicit Volume(const Grid& g, float value = 0.f) : grid(g), data(g.size(), value) {}
    float& at(int ix, int iy, int iz) { return data[grid.index(ix, iy, iz)]; }
    float at(int ix, int iy, int iz) const { return data[grid.index(ix, iy, iz)]; }
};

// The least and largest of v (not empty; no NaN), on every core: a 3D model's 48 M
// velocities are scanned by the plan, the time step and every domain, and each scan
// took one thread tens of milliseconds before a GPU's first step.
struct ValueRange {
    float min, max;
};
ValueRange value_range(const std::vector<float>& v);

}  // namespace rtm
