#pragma once
// Between device and pageable host memory at the bus's pinned speed. A cudaMemcpy into pageable
// memory ran at about 2 GB/s on the H200 machine's host (a batch of 45 2D shot images and
// illuminations, 462 MB: 0.24 s, 2026-11-23); through pinned staging the bus moves
// 20+ GB/s and the host's copy out of the staging runs on every core beside it.
#include <cuda_runtime_api.h>

#include <cstddef>

namespace rtm::kernels::cuda {

// bytes from dev (device memory) to host (any host memory), after the queued work of
// stream s (nullptr: the legacy stream, as cudaMemcpy): through two pinned chunks, one
// on the bus while the other is copied out on this thread's OpenMP threads. Returns when
// host holds the bytes. The staging is the process's, taken by one call at a time.
void download_staged(const void* dev, std::size_t bytes, void* host, cudaStream_t s = nullptr);

// bytes from host (any host memory) to dev, after the queued work of stream s, the same
// way up: one chunk on the bus while the next is copied in. Returns when dev holds them.
void upload_staged(const void* host, std::size_t bytes, void* dev, cudaStream_t s = nullptr);

}  // namespace rtm::kernels::cuda
