#pragma once
// Every CUDA runtime call is checked, in every build type: a failure throws rtm::Error
// naming the call's file:line, the call, and cudaGetErrorString of the code.
#include <cuda_runtime_api.h>

#include <string>

#include "core/error.h"

namespace rtm::kernels::cuda {

[[noreturn]] inline void throw_cuda(cudaError_t e, const char* what, const char* file, int line) {
    throw Error(std::string(file) + ":" + std::to_string(line) + ": CUDA call " + what + " failed: " +
                cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

}  // namespace rtm::kernels::cuda

#define RTM_CUDA_CHECK(call)                                                              \
    do {                                                                                  \
        const cudaError_t rtm_cuda_err_ = (call);                                         \
        if (rtm_cuda_err_ != cudaSuccess)                                                 \
            ::rtm::kernels::cuda::throw_cuda(rtm_cuda_err_, #call, __FILE__, __LINE__);   \
    } while (0)

// After a kernel launch: launch-configuration errors and earlier asynchronous faults,
// named by the kernel launched.
#define RTM_CUDA_CHECK_LAUNCH(what)                                                            \
    do {                                                                                       \
        const cudaError_t rtm_cuda_err_ = cudaGetLastError();                                 \
        if (rtm_cuda_err_ != cudaSuccess)                                                      \
            ::rtm::kernels::cuda::throw_cuda(rtm_cuda_err_, "launch of " what, __FILE__, __LINE__); \
    } while (0)
