#pragma once
// Streams that measure the memory-bandwidth ceilings the step kernels are held to
// (rtm bench: their ratio to it).
#include <cuda_runtime_api.h>

#include <cstddef>

namespace rtm::kernels::cuda {

// Streaming copy dst = src of n floats (16-byte accesses): the bandwidth ceiling.
void copy_cuda(const float* src, float* dst, std::size_t n, cudaStream_t stream = nullptr);
// Stream with the full update's traffic: d = 2 a - d + b * a (read a, b, d; write d:
// 16 B per value, as u, vdt2, w read and w written).
void update_stream_cuda(const float* a, const float* b, float* d, std::size_t n, cudaStream_t stream = nullptr);

}  // namespace rtm::kernels::cuda
