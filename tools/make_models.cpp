// Generates rtm's bundled velocity models (velocity_models/*.segy):
//   layers2d_vp.segy   2D: water, curved layers, a normal fault and a high-velocity body
//   layers2d_vp_smooth.segy  the same smoothed (slowness, Gaussian sigma 60 m): a
//                      migration velocity
//   dome3d_vp.segy     3D: dipping layers over a dome
//   aniso3d_{vp,epsilon,delta,theta,phi}.segy  3D anisotropic set (angles in degrees)
// usage: make_models OUTPUT_DIR
//        make_models --dome NX NY NZ H OUT.segy   the dome model on another grid (benchmarks:
//                      surveys larger than the bundled data, made where they run)
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "io/model_io.h"
#include "physics/smoothing.h"

using namespace rtm;

namespace {

Grid grid(int nx, int ny, int nz, double h, double azimuth_deg, double X0, double Y0) {
    Grid g;
    g.nx = nx;
    g.ny = ny;
    g.nz = nz;
    g.dx = g.dy = g.dz = h;
    const double a = azimuth_deg * M_PI / 180;  // x axis azimuth from north (Y), clockwise
    g.frame.ox = X0;
    g.frame.oy = Y0;
    g.frame.exx = std::sin(a);
    g.frame.exy = std::cos(a);
    g.frame.eyx = -std::cos(a);
    g.frame.eyy = std::sin(a);
    return g;
}

// Smooth step from a to b across z = z0 over a few metres (keeps interfaces sharp on the grid).
double layer(double z, double z0, double a, double b) { return z < z0 ? a : b; }

Volume layers2d() {
    Volume v(grid(401, 1, 151, 10.0, 90, 1000, 0));
    for (int iz = 0; iz < v.grid.nz; ++iz)
        for (int ix = 0; ix < v.grid.nx; ++ix) {
            const double x = ix * 10.0, z = iz * 10.0;
            // Interfaces: sea floor, then gently curved layers; below 450 m the layers
            // are dropped by 80 m east of a fault dipping from x = 2300 at the top.
            const double sea = 150 + 20 * std::sin(x / 700);
            const bool east = x > 2300 + 0.4 * (z - 300);
            const double throw_ = east ? 80 : 0;
            double vel = 1500;
            if (z >= sea) vel = 1800 + 0.4 * (z - sea);
            const double l1 = 450 + 60 * std::sin(x / 900) + throw_;
            const double l2 = 800 + 0.05 * x + throw_;
            const double l3 = 1150 - 0.04 * x + throw_;
            vel = layer(z, l1, vel, 2400 + 0.3 * (z - l1));
            vel = layer(z, l2, vel, 2900 + 0.2 * (z - l2));
            vel = layer(z, l3, vel, 3500);
            // High-velocity body (salt-like lens).
            const double ex = (x - 1200) / 450, ez = (z - 750) / 170;
            if (ex * ex + ez * ez < 1) vel = 4400;
            v.at(ix, 0, iz) = float(vel);
        }
    return v;
}

// The bundled one is 81 x 61 x 61 at 25 m; the dome sits at the middle of the x-y extent.
Volume dome3d(int nx = 81, int ny = 61, int nz = 61, double h = 25.0) {
    Volume v(grid(nx, ny, nz, h, 60, 500000, 6000000));
    const double xc = 0.5 * (nx - 1) * h, yc = 0.5 * (ny - 1) * h;
    for (int iz = 0; iz < v.grid.nz; ++iz)
        for (int iy = 0; iy < v.grid.ny; ++iy)
            for (int ix = 0; ix < v.grid.nx; ++ix) {
                const double x = ix * h, y = iy * h, z = iz * h;
                const double r2 = (x - xc) * (x - xc) + (y - yc) * (y - yc);
                const double dome = 250 * std::exp(-r2 / (2 * 400.0 * 400.0));
                double vel = 1600 + 0.3 * z;
                const double base[3] = {500, 900, 1250};
                const double vlay[3] = {2300, 2800, 3400};
                for (int k = 0; k < 3; ++k) {
                    const double zk = base[k] - 0.08 * x + 0.03 * y - dome * (1.0 - 0.2 * k);
                    if (z >= zk) vel = vlay[k] + 0.2 * (z - zk);
                }
                v.at(ix, iy, iz) = float(vel);
            }
    return v;
}

void aniso3d(const std::string& dir) {
    // 1 x 1 km, 700 m deep, 20 m cells (4.5 points per wavelength at 20 Hz, the
    // example's 8 Hz Ricker's highest frequency, at the slowest 1800 m/s). Under an
    // isotropic top layer (where the sources and receivers are: no qSV artefact is
    // excited there), a thick layer of strongly tilted TTI (axis 45 degrees from
    // vertical, azimuth 30 degrees; eps 0.3, delta 0.1), as a steeply dipping shale
    // overburden: vertical waves there run 10% faster than vp, along the axis, so an
    // isotropic migration with vp puts everything below too shallow and smears it. Below,
    // a milder TTI layer, then an isotropic one over a dome.
    const Grid g = grid(51, 51, 36, 20.0, 60, 500000, 6000000);
    Volume vp(g), eps(g), del(g), theta(g), phi(g);
    for (int iz = 0; iz < g.nz; ++iz)
        for (int iy = 0; iy < g.ny; ++iy)
            for (int ix = 0; ix < g.nx; ++ix) {
                const double x = ix * 20.0, y = iy * 20.0, z = iz * 20.0;
                const double dome = 560 - 80 * std::exp(-((x - 500) * (x - 500) + (y - 500) * (y - 500)) / (2 * 200.0 * 200.0));
                const int k = (z >= 100) + (z >= 400) + (z >= dome);
                const float vk[4] = {1800, 2200, 2600, 3000}, ek[4] = {0, 0.3f, 0.15f, 0},
                            dk[4] = {0, 0.1f, 0.05f, 0}, tk[4] = {0, 45, 45, 0};
                vp.at(ix, iy, iz) = vk[k];
                eps.at(ix, iy, iz) = ek[k];
                del.at(ix, iy, iz) = dk[k];
                theta.at(ix, iy, iz) = tk[k];
                phi.at(ix, iy, iz) = tk[k] > 0 ? 30.f : 0.f;
            }
    io::write_volume(dir + "/aniso3d_vp.segy", vp, "bundled anisotropic model: P velocity along the axis, m/s");
    io::write_volume(dir + "/aniso3d_epsilon.segy", eps, "bundled anisotropic model: Thomsen epsilon");
    io::write_volume(dir + "/aniso3d_delta.segy", del, "bundled anisotropic model: Thomsen delta");
    io::write_volume(dir + "/aniso3d_theta.segy", theta, "bundled anisotropic model: tilt, degrees from vertical");
    io::write_volume(dir + "/aniso3d_phi.segy", phi, "bundled anisotropic model: azimuth, degrees from the x axis");
}

}  // namespace

int main(int argc, char** argv) {
    if (argc == 7 && std::string(argv[1]) == "--dome") try {
            io::write_volume(argv[6], dome3d(std::stoi(argv[2]), std::stoi(argv[3]), std::stoi(argv[4]), std::stod(argv[5])),
                             "rtm 3D benchmark model: dipping layers over a dome; m/s");
            return 0;
        } catch (const std::exception& e) {
            std::fprintf(stderr, "make_models: %s\n", e.what());
            return 1;
        }
    if (argc != 2) {
        std::fprintf(stderr, "usage: make_models OUTPUT_DIR\n       make_models --dome NX NY NZ H OUT.segy\n");
        return 2;
    }
    const std::string dir = argv[1];
    std::filesystem::create_directories(dir);
    try {
        const Volume layers = layers2d();
        io::write_volume(dir + "/layers2d_vp.segy", layers,
                         "bundled 2D model: water, layers, a normal fault, a high-velocity body; m/s");
        io::write_volume(dir + "/layers2d_vp_smooth.segy", smooth_slowness(layers, 60.0),
                         "bundled 2D model, smoothed (slowness, sigma 60 m): migration velocity; m/s");
        io::write_volume(dir + "/dome3d_vp.segy", dome3d(), "bundled 3D model: dipping layers over a dome; m/s");
        aniso3d(dir);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "make_models: %s\n", e.what());
        return 1;
    }
    return 0;
}
