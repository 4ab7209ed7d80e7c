#include "kernels/cuda/staged_copy.h"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "kernels/cuda/cuda_check.h"

namespace rtm::kernels::cuda {

namespace {
constexpr std::size_t kChunk = std::size_t(32) << 20;  // 32 MiB: the bus's rate, few waits
constexpr std::size_t kSmall = std::size_t(1) << 20;   // below: one plain copy
constexpr std::size_t kPiece = std::size_t(1) << 20;   // a thread's share of a chunk's copy-out

struct Staging {
    std::mutex mutex;
    void* chunk[2] = {nullptr, nullptr};
};
// Allocated once and never freed: freeing pinned memory during the process's exit can
// run after the CUDA runtime has gone. Portable: pinned for every device of the process.
Staging& staging() {
    static Staging* s = new Staging;
    return *s;
}

// n bytes from `from` to `to` on this thread's OpenMP threads.
void copy_parallel(const char* from, char* to, std::size_t n) {
    const long pieces = long((n + kPiece - 1) / kPiece);
#pragma omp parallel for schedule(static) if (pieces > 1)
    for (long p = 0; p < pieces; ++p) {
        const std::size_t a = std::size_t(p) * kPiece;
        std::memcpy(to + a, from + a, std::min(kPiece, n - a));
    }
}

// The staging, allocated on first use and held by the caller's lock.
Staging& taken(std::unique_lock<std::mutex>& lock) {
    Staging& st = staging();
    lock = std::unique_lock<std::mutex>(st.mutex);
    for (void*& c : st.chunk)
        if (!c) RTM_CUDA_CHECK(cudaHostAlloc(&c, kChunk, cudaHostAllocPortable));
    return st;
}

// `bytes` from `from` to `to` (kind: which way), done on stream s when this returns: one
// plain copy below kSmall, else pipeline(buffer, size_of, chunks) with the staging held,
// buffer(i) the pinned chunk that carries piece i (kChunk bytes at i kChunk; the last is
// size_of(i)).
template <class Pipeline>
void staged(const void* from, std::size_t bytes, void* to, cudaMemcpyKind kind, cudaStream_t s, Pipeline pipeline) {
    if (bytes == 0) return;
    if (bytes < kSmall) {
        RTM_CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, kind, s));
        RTM_CUDA_CHECK(cudaStreamSynchronize(s));
        return;
    }
    std::unique_lock<std::mutex> lock;
    Staging& st = taken(lock);
    const auto buffer = [&](std::size_t i) { return static_cast<char*>(st.chunk[i % 2]); };
    const auto size_of = [&](std::size_t i) { return std::min(kChunk, bytes - i * kChunk); };
    pipeline(buffer, size_of, (bytes + kChunk - 1) / kChunk);
}

}  // namespace

void download_staged(const void* dev, std::size_t bytes, void* host, cudaStream_t s) {
    const char* d = static_cast<const char*>(dev);
    char* h = static_cast<char*>(host);
    staged(dev, bytes, host, cudaMemcpyDeviceToHost, s, [&](auto buffer, auto size_of, std::size_t chunks) {
        auto start = [&](std::size_t i) {
            RTM_CUDA_CHECK(cudaMemcpyAsync(buffer(i), d + i * kChunk, size_of(i), cudaMemcpyDeviceToHost, s));
        };
        // Chunk i + 1 crosses the bus while chunk i is copied out; the wait after the copy-out
        // is for chunk i + 1, whose buffer held chunk i - 1, already copied out.
        start(0);
        RTM_CUDA_CHECK(cudaStreamSynchronize(s));
        for (std::size_t i = 0; i < chunks; ++i) {
            if (i + 1 < chunks) start(i + 1);
            copy_parallel(buffer(i), h + i * kChunk, size_of(i));
            RTM_CUDA_CHECK(cudaStreamSynchronize(s));
        }
    });
}

void upload_staged(const void* host, std::size_t bytes, void* dev, cudaStream_t s) {
    const char* h = static_cast<const char*>(host);
    char* d = static_cast<char*>(dev);
    staged(host, bytes, dev, cudaMemcpyHostToDevice, s, [&](auto buffer, auto size_of, std::size_t chunks) {
        auto copy_in = [&](std::size_t i) { copy_parallel(h + i * kChunk, buffer(i), size_of(i)); };
        // Chunk i crosses the bus while chunk i + 1 is copied in; that buffer held chunk i - 1,
        // whose crossing the wait at the end of the step before saw finish.
        copy_in(0);
        for (std::size_t i = 0; i < chunks; ++i) {
            RTM_CUDA_CHECK(cudaMemcpyAsync(d + i * kChunk, buffer(i), size_of(i), cudaMemcpyHostToDevice, s));
            if (i + 1 < chunks) copy_in(i + 1);
            RTM_CUDA_CHECK(cudaStreamSynchronize(s));
        }
    });
}

}  // namespace rtm::kernels::cuda
