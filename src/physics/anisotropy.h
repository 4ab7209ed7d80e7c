#pragma once
// Pseudo-acoustic VTI/TTI media: the per-point coefficients the TTI kernels read,
// the rule that keeps every model stable, and the CFL limit (docs/anisotropy.md
// derives all three).
//
// The system, with u = (p, q) and W = (vp dt)^2 C per point:
//   u[n+1] = 2 u[n] - u[n-1] + W (L u[n] + B s[n]),  C = [[1 + 2 eps, b], [b, 1]],
//   b = sqrt(1 + 2 min(delta, eps)),  L = diag(H, V),  B = (1/2, 1/2),
// in VTI H = Dxx + Dyy and V = Dzz (compact 8th-order second derivatives); in TTI
// H = Lap_c + G^T n n^T G and V = Lap_c + G^T (I - n n^T) G, Lap_c the compact
// Laplacian, G the 8th-order (first-derivative) gradient and n the unit symmetry axis
// (-G^T n n^T G ~ d2/dn2). H and V are symmetric and negative semi-definite (the compact
// symbol dominates the squared first-derivative one at every wavenumber) and C is
// positive semi-definite, which makes the scheme stable under the CFL limit below and
// its adjoint the same step run backwards. Receivers record B^T u = (p + q) / 2.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "core/survey.h"

namespace rtm {

// Ranges accepted on input (epsilon, delta dimensionless; angles in degrees): 1 + 2 eps
// and 1 + 2 delta must be positive (squared velocity ratios); beyond 1 no rock is known.
constexpr double kAnisotropyMin = -0.5, kAnisotropyMax = 1.0;
constexpr double kThetaMaxDegrees = 180, kPhiMaxDegrees = 360;

// The coefficients of one point (angles in radians; tilt from vertical towards
// azimuth phi, phi from x towards y).
struct TtiPoint {
    double a = 1;                  // 1 + 2 eps: C_pp
    double b = 1;                  // sqrt(1 + 2 min(delta, eps)): C_pq
    double n[3] = {0, 0, 1};       // unit symmetry axis (x, y, z), z down
    bool clamped = false;          // delta was above epsilon and was lowered to it
};
TtiPoint tti_point(double eps, double delta, double theta, double phi);

// Whether a model (or window) carries anisotropy, and whether it is tilted (TTI: the
// rotated operator; else VTI with the compact one). `extra` maps "epsilon", "delta",
// "theta", "phi" to values on the nodes (angles in radians).
using AnisotropyFields = std::map<std::string, std::vector<float>>;
bool tilted(const AnisotropyFields& extra);
bool tilted(const Model& model);
// "isotropic", "VTI" or "TTI": the operator a model runs (for logs and file headers).
const char* physics_name(const Model& model);

// Nodes where delta > epsilon (the stability rule lowers delta to epsilon there).
std::size_t clamped_delta_nodes(const Model& model);

// Makes the medium elliptical (delta = epsilon) at the nodes shallower than `depth`
// metres (option model.elliptic-above): a source or receiver there excites no
// pseudo-acoustic qSV artefact, whose speed is 0 where eps = delta
// (docs/anisotropy.md). Adds a delta volume (0 below the depth) to an anisotropic model
// without one when epsilon is not 0 somewhere above the depth; leaves an isotropic model
// as it is. Returns the nodes whose delta changed.
std::size_t make_elliptic_above(Model& model, double depth);

// Largest stable time step of the anisotropic scheme on this model's grid:
// dt^2 (A |H| + B |V|) <= 4 with A = max vp^2 (1 + 2 eps), B = max vp^2 and the
// operator norms |H|, |V| (VTI: S2 (1/dx^2 + 1/dy^2) and S2 / dz^2; TTI: both at most
// |Lap_c| = S2 sum 1/h^2; S2 = 6.50 the compact stencil's largest symbol). For an
// isotropic model (no anisotropy volumes) the isotropic limit.
double anisotropic_max_stable_dt(const Model& model);
// The velocity whose isotropic limit (max_stable_dt) on this grid equals the model's
// limit above: max vp for an isotropic model. What the CFL checks and messages use.
double cfl_velocity(const Model& model);
// The slowest qP phase velocity of the model, what the dispersion check's shortest
// wavelength follows: min vp for an isotropic model; for an anisotropic one, per node
// vp times the pseudo-acoustic qP phase velocity's least value over directions (across
// the axis where eps < 0; between axis and plane, below both, where delta is well below
// eps), the rule's delta (at most eps) taken.
double slowest_velocity(const Model& model);

}  // namespace rtm
