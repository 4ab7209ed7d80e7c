#pragma once
// A vector whose resize leaves trivial values uninitialised (for trivial types only: a
// class without a constructor would keep indeterminate members): a large array is then first
// touched by whoever fills it, e.g. the threads that fill it in parallel, instead of being
// zeroed by one thread first (a batch of 45 2D shots' source traces, 880 MB, took about
// 0.3 s of one thread's page faults and copying on the H200 host, 2026-11-23).
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace rtm {

template <class T>
struct DefaultInitAllocator : std::allocator<T> {
    DefaultInitAllocator() = default;
    template <class U>
    DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}
    template <class U>
    struct rebind {
        using other = DefaultInitAllocator<U>;
    };
    template <class U>
    void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
        ::new (static_cast<void*>(p)) U;  // default-, not value-initialised
    }
    template <class U, class... Args>
    void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
};

template <class T>
using UninitVector = std::vector<T, DefaultInitAllocator<T>>;

// from[0 .. n) in type T, converted on this thread's OpenMP threads, each writing (and so
// first touching) its own part: a propagator's copies of its domain's (v dt)^2 and
// damping in its precision, 66 M points each for a 3D shot, took most of the 0.47 s
// before a 3D migration's first step on one thread (H200 host, 2026-11-23).
// T: float or double (default_init.cpp).
template <class T>
UninitVector<T> converted(const double* from, std::size_t n);
template <class T, class A>
UninitVector<T> converted(const std::vector<double, A>& from) {
    return converted<T>(from.data(), from.size());
}
// n copies of value, written the same way. T: double (default_init.cpp).
template <class T>
UninitVector<T> filled(std::size_t n, T value);

}  // namespace rtm
