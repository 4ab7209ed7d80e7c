#pragma once
// The part of a model one shot propagates in, and where the shot's source and
// receivers touch it.
#include <string>
#include <vector>

#include "core/survey.h"
#include "physics/anisotropy.h"
#include "propagation/domain.h"

namespace rtm {

struct ShotWindow {
    Grid grid;              // the window (its own local coordinates start at its first node)
    int ix0 = 0, iy0 = 0;   // its first node in the model
    std::vector<float> vp;  // the model's velocities on it
    AnisotropyFields extra; // and its anisotropy volumes (physics/anisotropy.h), if any
};

// The model cut to the source and receivers' x (and y) extent plus `aperture` metres
// on each side, at full depth; aperture < 0 keeps the whole model.
ShotWindow shot_window(const Model& model, const ShotGather& shot, double aperture);
// The same window's grid and place without its velocities (vp empty): what a plan needs.
ShotWindow window_extent(const Model& model, const ShotGather& shot, double aperture);

// Metres a position may lie off a 2D model's line (it is projected onto the line): a
// crooked line's feathering, not a survey elsewhere.
constexpr double kOffLineTolerance = 250;

// Whether the position lies in the model (and within kOffLineTolerance of a 2D model's
// line); require_in_model throws, naming `what`, where it does not (`or_else`: another
// way out, appended to the fix).
bool in_model(const Model& m, const Position& p);
void require_in_model(const Model& m, const Position& p, const std::string& what, const std::string& or_else = "");

// Stencils of the shot's source and receivers in a domain built on the window;
// errors name the shot and receiver that lie outside the model.
PointStencil source_stencil(const Domain& d, const ShotWindow& w, const Model& m, const ShotGather& shot);
std::vector<PointStencil> receiver_stencils(const Domain& d, const ShotWindow& w, const Model& m,
                                            const ShotGather& shot);

}  // namespace rtm
