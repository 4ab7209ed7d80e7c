#include "kernels/cpu/transpose_cpu.h"

#include <algorithm>
#include <cstddef>

namespace rtm::kernels {

template <class T>
void transpose_widen(const T* in, int rows, int cols, double* out) {
    constexpr int kTile = 64;  // 64 x 64 values of each side: 48 kB, within L2
#pragma omp parallel for collapse(2) schedule(static)
    for (int c0 = 0; c0 < cols; c0 += kTile)
        for (int r0 = 0; r0 < rows; r0 += kTile)
            for (int c = c0; c < std::min(c0 + kTile, cols); ++c)
                for (int r = r0; r < std::min(r0 + kTile, rows); ++r)
                    out[std::size_t(c) * rows + r] = double(in[std::size_t(r) * cols + c]);
}

template void transpose_widen<float>(const float*, int, int, double*);
template void transpose_widen<double>(const double*, int, int, double*);

}  // namespace rtm::kernels
