#pragma once
// The stacked image of a migration: shot images added at their window's place, the
// source illumination beside it, and the post-processing that makes the final image.
#include <string>
#include <vector>

#include "core/grid.h"

namespace rtm::imaging {

struct Stack {
    Volume image;         // sum of shot images
    Volume illumination;  // sum of source illuminations (integral of u_s^2)

    explicit Stack(const Grid& model) : image(model), illumination(model) {}
    // Adds a shot's window (nodes ix0.., iy0.. of the model; full depth).
    void add(const Grid& window, int ix0, int iy0, const std::vector<double>& shot_image,
             const std::vector<double>& shot_illumination);
};

struct PostProcessing {
    bool normalise = true;      // divide by illumination + eps * max(illumination)
    double epsilon = 1e-3;
    bool laplacian = true;      // -Lap of the image: removes low-wavenumber backscatter
};

// The image users look at, from a raw stack.
Volume final_image(const Stack& s, const PostProcessing& pp);

}  // namespace rtm::imaging
