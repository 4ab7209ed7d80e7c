// The GPU backend's receiver traces leave step-major float and arrive receiver-major
// double (kernels/cpu/transpose_cpu.h): every value at its place, exactly (a float
// widens to double without rounding), for sizes that are not multiples of the tile.
#include <vector>

#include "kernels/cpu/transpose_cpu.h"
#include "support/catch.hpp"

TEST_CASE("traces transposed from step-major float to receiver-major double keep every value at its place", "[transpose]") {
    for (const auto [rows, cols] : {std::pair{1, 1}, {63, 65}, {130, 7}, {200, 129}}) {
        std::vector<float> in(std::size_t(rows) * cols);
        for (std::size_t i = 0; i < in.size(); ++i) in[i] = float(i) * 0.25f + 1e-3f;
        std::vector<double> out(in.size(), -1);
        rtm::kernels::transpose_widen(in.data(), rows, cols, out.data());
        int wrong = 0;
        for (int r = 0; r < rows; ++r)
            for (int c = 0; c < cols; ++c) wrong += out[std::size_t(c) * rows + r] != double(in[std::size_t(r) * cols + c]);
        INFO(rows << " x " << cols);
        CHECK(wrong == 0);
    }
}
