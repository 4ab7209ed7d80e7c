#pragma once
// The device's streaming multiprocessors, which grid-stride launches size their grids
// from: of the device this process first asked about (one device per rank).
#include <cuda_runtime_api.h>

#include "kernels/cuda/cuda_check.h"

namespace rtm::kernels::cuda {

inline int sm_count() {
    static const int n = [] {
        int dev = 0, v = 0;
        RTM_CUDA_CHECK(cudaGetDevice(&dev));
        RTM_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev));
        return v;
    }();
    return n;
}

}  // namespace rtm::kernels::cuda
