#pragma once
// bfloat16: the top half of an IEEE float, rounded to nearest even. Float's range with
// 8 significant bits, 7 of them stored (relative rounding error <= 2^-8): wavefields of
// any amplitude keep their shape at half the memory. RTM_HD so CUDA kernels use the same conversion.
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define RTM_BF16_HD __host__ __device__ inline
#else
#define RTM_BF16_HD inline
#endif

namespace rtm {

// Denormals become signed zeros, so the CPU (which flushes them, see cpu_propagator)
// and the GPU (which keeps them) store the same bits.
RTM_BF16_HD std::uint16_t to_bf16(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7F800000u) == 0) u &= 0x80000000u;
    u += 0x7FFFu + ((u >> 16) & 1u);
    return std::uint16_t(u >> 16);
}

RTM_BF16_HD float from_bf16(std::uint16_t h) {
    const std::uint32_t u = std::uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

}  // namespace rtm
