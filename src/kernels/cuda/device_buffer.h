#pragma once
// A typed device allocation (cudaMalloc; never managed memory), freed on destruction.
#include <cstddef>
#include <utility>
#include <vector>

#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/staged_copy.h"

namespace rtm::kernels::cuda {

template <class T>
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t n) { resize(n); }
    template <class A>
    explicit DeviceBuffer(const std::vector<T, A>& host) {
        upload(host);
    }
    ~DeviceBuffer() { release(); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceBuffer(DeviceBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
        if (this != &o) {
            release();
            p_ = std::exchange(o.p_, nullptr);
            n_ = std::exchange(o.n_, 0);
        }
        return *this;
    }

    void resize(std::size_t n) {
        if (n == n_) return;
        release();
        if (n) RTM_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&p_), n * sizeof(T)));
        n_ = n;
    }
    // Replaces the contents once `user` (the stream whose kernels read this buffer) has
    // done its queued work, and returns when the copy has landed (a plain cudaMemcpy from
    // pageable memory may return before, and a non-blocking stream does not wait for it);
    // at pinned speed (upload_staged).
    template <class A>
    void upload(const std::vector<T, A>& host, cudaStream_t user = nullptr) {
        RTM_CUDA_CHECK(cudaStreamSynchronize(user));
        resize(host.size());
        upload_staged(host.data(), n_ * sizeof(T), p_, user);
    }
    // The contents, after the legacy stream's queued work (as cudaMemcpy), at pinned speed.
    // V = UninitVector<T>: first touched by the copy's threads, not zeroed by one first.
    template <class V = std::vector<T>>
    V download() const {
        V h(n_);
        download_staged(p_, n_ * sizeof(T), h.data());
        return h;
    }
    void zero(cudaStream_t s = nullptr) {
        if (n_) RTM_CUDA_CHECK(cudaMemsetAsync(p_, 0, n_ * sizeof(T), s));
    }
    T* data() { return p_; }
    const T* data() const { return p_; }
    std::size_t size() const { return n_; }
    bool empty() const { return n_ == 0; }

private:
    void release() {
        if (p_) cudaFree(p_);  // no throw from a destructor
        p_ = nullptr;
        n_ = 0;
    }
    T* p_ = nullptr;
    std::size_t n_ = 0;
};

// Page-locked host memory (cudaHostAlloc), so copies to and from it can be
// asynchronous; freed on destruction.
class PinnedBuffer {
public:
    PinnedBuffer() = default;
    explicit PinnedBuffer(std::size_t bytes) {
        if (bytes) RTM_CUDA_CHECK(cudaHostAlloc(&p_, bytes, cudaHostAllocDefault));
        n_ = bytes;
    }
    ~PinnedBuffer() {
        if (p_) cudaFreeHost(p_);
    }
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;
    PinnedBuffer(PinnedBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
    PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
        if (this != &o) {
            if (p_) cudaFreeHost(p_);
            p_ = std::exchange(o.p_, nullptr);
            n_ = std::exchange(o.n_, 0);
        }
        return *this;
    }
    void* data() { return p_; }
    const void* data() const { return p_; }
    std::size_t bytes() const { return n_; }

private:
    void* p_ = nullptr;
    std::size_t n_ = 0;
};

}  // namespace rtm::kernels::cuda
