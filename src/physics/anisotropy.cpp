#include "physics/anisotropy.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "physics/stability.h"
#include "physics/stencil.h"

namespace rtm {

TtiPoint tti_point(double eps, double delta, double theta, double phi) {
    TtiPoint t;
    t.a = 1 + 2 * eps;
    // C = [[a, b], [b, 1]] is positive semi-definite iff b^2 <= a, i.e. delta <= eps:
    // elsewhere the pseudo-acoustic system has an exponentially growing mode (Bube et
    // al. 2012), so delta is lowered to eps there (docs/anisotropy.md).
    t.clamped = delta > eps;
    t.b = std::sqrt(1 + 2 * std::min(delta, eps));
    t.n[0] = std::sin(theta) * std::cos(phi);
    t.n[1] = std::sin(theta) * std::sin(phi);
    t.n[2] = std::cos(theta);
    return t;
}

bool tilted(const AnisotropyFields& extra) { return extra.count("theta") || extra.count("phi"); }
bool tilted(const Model& model) { return model.extra.count("theta") || model.extra.count("phi"); }
const char* physics_name(const Model& model) { return model.extra.empty() ? "isotropic" : tilted(model) ? "TTI" : "VTI"; }

std::size_t clamped_delta_nodes(const Model& model) {
    const auto e = model.extra.find("epsilon"), d = model.extra.find("delta");
    if (d == model.extra.end()) return 0;
    std::size_t n = 0;
    for (std::size_t k = 0; k < d->second.data.size(); ++k)
        if (d->second.data[k] > (e == model.extra.end() ? 0.f : e->second.data[k])) ++n;
    return n;
}

std::size_t make_elliptic_above(Model& model, double depth) {
    if (model.extra.empty()) return 0;
    const Grid& g = model.grid();
    std::size_t planes = 0;  // the depth levels above `depth`
    while (planes < std::size_t(g.nz) && g.z0 + double(planes) * g.dz < depth) ++planes;
    const std::size_t n = planes * std::size_t(g.nx) * g.ny;  // their nodes: the first n (z slowest)
    const auto e = model.extra.find("epsilon");
    auto eps = [&](std::size_t k) { return e == model.extra.end() ? 0.f : e->second.data[k]; };
    if (!model.extra.count("delta")) {
        // An absent delta is 0: a volume is needed only where epsilon is not 0 in the band.
        bool needed = false;
        for (std::size_t k = 0; k < n && !needed; ++k) needed = eps(k) != 0.f;
        if (!needed) return 0;
        model.extra.emplace("delta", Volume(g));
    }
    std::vector<float>& delta = model.extra.at("delta").data;
    std::size_t changed = 0;
    for (std::size_t k = 0; k < n; ++k) {
        changed += delta[k] != eps(k);
        delta[k] = eps(k);
    }
    return changed;
}

double anisotropic_max_stable_dt(const Model& model) {
    const Grid& g = model.grid();
    const bool three = g.ndim() == 3;
    double A = 0, B = 0;  // max vp^2 (1 + 2 eps), max vp^2
    const auto e = model.extra.find("epsilon");
    for (std::size_t k = 0; k < model.vp.data.size(); ++k) {
        const double v2 = double(model.vp.data[k]) * model.vp.data[k];
        B = std::max(B, v2);
        A = std::max(A, v2 * (e == model.extra.end() ? 1.0 : 1 + 2 * double(e->second.data[k])));
    }
    if (model.extra.empty()) return max_stable_dt(std::sqrt(B), g.dx, three ? g.dy : 0, g.dz);
    const double sh = 1 / (g.dx * g.dx) + (three ? 1 / (g.dy * g.dy) : 0), sv = 1 / (g.dz * g.dz);
    double H, V;  // operator norms of H and V
    if (tilted(model)) {
        H = V = stencil::second_derivative_symbol_max() * (sh + sv);  // 0 <= -H, -V <= -Lap_c
    } else {
        const double s2 = stencil::second_derivative_symbol_max();
        H = s2 * sh;
        V = s2 * sv;
    }
    return 2 / std::sqrt(A * H + B * V);
}

namespace {

// The least qP phase velocity over directions, over vp: docs/anisotropy.md's relation at
// |k| = 1 and s = sin^2 of the angle from the axis,
//   f(s) = v^2 / vp^2 = A / 2 + sqrt(A^2 / 4 - 2 d s (1 - s)),  A = 1 + 2 eps s,  d = eps - delta >= 0,
// is the larger eigenvalue of a matrix affine in s, so convex on [0, 1]: its minimum is
// an end (1 along the axis, 1 + 2 eps across it) or where f' = 0. Squared, f' = 0 is
// (2 eps^2 + 4 d) s^2 + (2 eps - 4 d) s + (d - eps) = 0, whose roots are
//   s = (4 d - 2 eps +- 2 |eps| sqrt(1 + 2 delta)) / (4 eps^2 + 8 d);
// f at the ends and at the roots within [0, 1] (squaring may add one that is not a
// stationary point: f there is still a value f takes) gives the minimum.
double least_qp_ratio(double eps, double delta) {
    delta = std::min(delta, eps);  // the stability rule's (where delta > eps it is lowered)
    const double d = eps - delta;
    const auto f = [&](double s) {
        const double a = 1 + 2 * eps * s;
        return a / 2 + std::sqrt(std::max(0.0, a * a / 4 - 2 * d * s * (1 - s)));
    };
    double least = std::min(f(0), f(1));
    if (d > 0) {
        const double r = 2 * std::abs(eps) * std::sqrt(std::max(0.0, 1 + 2 * delta)), den = 4 * eps * eps + 8 * d;
        for (const double s : {(4 * d - 2 * eps + r) / den, (4 * d - 2 * eps - r) / den})
            if (s > 0 && s < 1) least = std::min(least, f(s));
    }
    return std::sqrt(std::max(0.0, least));
}

}  // namespace

double slowest_velocity(const Model& model) {
    const auto& vp = model.vp.data;
    if (model.extra.empty()) return value_range(vp).min;
    const auto e = model.extra.find("epsilon"), d = model.extra.find("delta");
    const float* eps = e == model.extra.end() ? nullptr : e->second.data.data();
    const float* del = d == model.extra.end() ? nullptr : d->second.data.data();
    double slowest = std::numeric_limits<double>::infinity();
#pragma omp parallel for reduction(min : slowest)
    for (std::size_t k = 0; k < vp.size(); ++k)
        slowest = std::min(slowest, double(vp[k]) * least_qp_ratio(eps ? eps[k] : 0.0, del ? del[k] : 0.0));
    return slowest;
}

double cfl_velocity(const Model& model) {
    if (model.extra.empty()) return value_range(model.vp.data).max;
    const Grid& g = model.grid();
    const double inv_h2 = 1 / (g.dx * g.dx) + 1 / (g.dz * g.dz) + (g.ndim() == 3 ? 1 / (g.dy * g.dy) : 0);
    return 2 / (anisotropic_max_stable_dt(model) * std::sqrt(stencil::second_derivative_symbol_max() * inv_h2));
}

}  // namespace rtm
