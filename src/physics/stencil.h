#pragma once
// The 8th-order finite-difference operators, written once for the CPU loops and the
// CUDA kernels (RTM_HD marks functions both compile).
//
// Second derivative (times 1/h^2): c0 = -205/72, c1..c4 = 8/5, -1/5, 8/315, -1/560.
// First derivative  (times 1/h):   d1..d4 = 4/5, -1/5, 4/105, -1/280 (antisymmetric).
// Both are the central Taylor stencils of radius R = 4: 8th-order accurate.
#if defined(__CUDACC__)
#define RTM_HD __host__ __device__ __forceinline__
#else
#define RTM_HD inline
#endif

namespace rtm::stencil {

constexpr int R = 4;

RTM_HD constexpr double c2(int k) {
    return k == 0 ? -205.0 / 72.0
         : k == 1 ? 8.0 / 5.0
         : k == 2 ? -1.0 / 5.0
         : k == 3 ? 8.0 / 315.0
                  : -1.0 / 560.0;
}
RTM_HD constexpr double d1(int k) {
    return k == 1 ? 4.0 / 5.0 : k == 2 ? -1.0 / 5.0 : k == 3 ? 4.0 / 105.0 : -1.0 / 280.0;
}

// Second derivative along a stride s, without the centre term and 1/h^2:
// sum_k c_k (f[i+k s] + f[i-k s]).
template <class T>
RTM_HD T d2_wings(const T* f, long s) {
    return T(c2(1)) * (f[s] + f[-s]) + T(c2(2)) * (f[2 * s] + f[-2 * s]) +
           T(c2(3)) * (f[3 * s] + f[-3 * s]) + T(c2(4)) * (f[4 * s] + f[-4 * s]);
}

// First derivative along stride s, without 1/h: sum_k d_k (f[i+k s] - f[i-k s]).
template <class T>
RTM_HD T d1_diff(const T* f, long s) {
    return T(d1(1)) * (f[s] - f[-s]) + T(d1(2)) * (f[2 * s] - f[-2 * s]) +
           T(d1(3)) * (f[3 * s] - f[-3 * s]) + T(d1(4)) * (f[4 * s] - f[-4 * s]);
}

// Largest |symbol| of the second-derivative stencil over wavenumbers:
// max over theta of |c0 + 2 sum_k c_k cos(k theta)|, reached at theta = pi:
// 205/72 + 2 (8/5 + 1/5 + 8/315 + 1/560) = 6.5016.
double second_derivative_symbol_max();

}  // namespace rtm::stencil
