#pragma once
// The stacked image of a migration: shot images added at their window's place, the
// source illumination beside it, and the post-processing that makes the final image.
#include <string>
#include <vector>

#include "core/default_init.h"
#include "core/grid.h"
#include "core/zeroed_array.h"
#include "imaging/exact_sum.h"

namespace rtm::imaging {

// Exact sums on the model's grid (x fastest, then y, then z; imaging/exact_sum.h): the
// stack of a set of shots is the same bit for bit whatever the order in which they are
// added and however they were split into partial stacks (one per rank).
struct Stack {
    Grid grid;
    // On zeroed pages: a new stack costs nothing until shots are added to it.
    ZeroedArray<ExactSum> image;         // sum of shot images
    ZeroedArray<ExactSum> illumination;  // sum of source illuminations (integral of u_s^2)

    explicit Stack(const Grid& model) : grid(model), image(model.size()), illumination(model.size()) {}
    // Adds a shot's window (nodes ix0.., iy0.. of the model; full depth): window.size()
    // values of each. A shot whose image or illumination holds a value that is not finite
    // is refused (rtm::Error naming the window node) and nothing of it is added.
    void add(const Grid& window, int ix0, int iy0, const double* shot_image, const double* shot_illumination);
    // Adds another partial stack of the same grid.
    void add(const Stack& other);
};

struct PostProcessing {
    bool normalise = true;      // divide by illumination + eps * max(illumination)
    double epsilon = 1e-3;
    bool laplacian = true;      // -Lap of the image: removes low-wavenumber backscatter
    // Top mute, last: the image is zeroed above depth top_mute (m) and rises as a
    // half cosine over the next top_taper m, where the source's and the receivers'
    // own wavefields correlate with each other (the source imprint) rather than with
    // reflections. top_mute 0: no mute and no taper.
    double top_mute = 0, top_taper = 0;
};

// The illumination's sums rounded to double, on every core: what final_image normalises
// by and what is written beside the image, formed once for both (each pass over the
// exact sums reads 1.5 GB for a 3D model of 48 M nodes).
UninitVector<double> illumination_values(const Stack& s);
// The image users look at, from a raw stack and its illumination_values (read only
// to normalise); the second form forms them itself.
Volume final_image(const Stack& s, const PostProcessing& pp, const UninitVector<double>& illumination);
Volume final_image(const Stack& s, const PostProcessing& pp);
// The illumination as a float volume on grid g (for writing).
Volume illumination_volume(const Grid& g, const UninitVector<double>& illumination);

}  // namespace rtm::imaging
