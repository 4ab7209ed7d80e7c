#include "kernels/cuda/ceiling_cuda.h"

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/sm_count.h"

namespace rtm::kernels::cuda {

namespace {

__global__ void copy_kernel(const float4* __restrict__ src, float4* __restrict__ dst, std::size_t n4) {
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n4; i += 4 * stride) {
        const float4 a = __ldcs(src + i), b = __ldcs(src + i + stride), c = __ldcs(src + i + 2 * stride),
                     d = __ldcs(src + i + 3 * stride);
        __stcs(dst + i, a);
        __stcs(dst + i + stride, b);
        __stcs(dst + i + 2 * stride, c);
        __stcs(dst + i + 3 * stride, d);
    }
    for (; i < n4; i += stride) __stcs(dst + i, __ldcs(src + i));
}

__global__ void update_stream_kernel(const float4* __restrict__ a, const float4* __restrict__ b,
                                     float4* __restrict__ d, std::size_t n4) {
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n4; i += stride) {
        const float4 x = __ldcs(a + i), y = __ldcs(b + i), o = d[i];
        __stcs(d + i, make_float4(2 * x.x - o.x + y.x * x.x, 2 * x.y - o.y + y.y * x.y,
                                  2 * x.z - o.z + y.z * x.z, 2 * x.w - o.w + y.w * x.w));
    }
}

}  // namespace

void copy_cuda(const float* src, float* dst, std::size_t n, cudaStream_t stream) {
    const std::size_t n4 = n / 4;
    copy_kernel<<<sm_count() * 8, 256, 0, stream>>>(reinterpret_cast<const float4*>(src),
                                                    reinterpret_cast<float4*>(dst), n4);
    RTM_CUDA_CHECK_LAUNCH("copy_kernel");
}

void update_stream_cuda(const float* a, const float* b, float* d, std::size_t n, cudaStream_t stream) {
    update_stream_kernel<<<sm_count() * 8, 256, 0, stream>>>(
        reinterpret_cast<const float4*>(a), reinterpret_cast<const float4*>(b), reinterpret_cast<float4*>(d), n / 4);
    RTM_CUDA_CHECK_LAUNCH("update_stream_kernel");
}

}  // namespace rtm::kernels::cuda
