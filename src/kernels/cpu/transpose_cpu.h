#pragma once
// Receiver traces come off a GPU step-major (row n: every receiver at step n, as the
// step kernels record them) and leave receiver-major in double (row r: receiver r's
// trace). On every core, in tiles: a 3D shot's 20 000 receivers x 4 000 steps took
// 1.5 s through one core's strided writes (H100 host, 2026-11-23).
namespace rtm::kernels {

// out[r * rows + n] = double(in[n * cols + r]) for n < rows, r < cols.
template <class T>
void transpose_widen(const T* in, int rows, int cols, double* out);

}  // namespace rtm::kernels
