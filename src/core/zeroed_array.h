#pragma once
// A fixed-size array of a type whose all-zero bytes are its empty value (an exact sum,
// a count), taken from calloc: for a large array the C library maps fresh pages, which
// the kernel zeroes on first touch, so a new array costs nothing until it is written,
// and the parts never written (a shot window's outside) never cost anything. A job's
// stack of exact sums is 3 GB in 3D (400 x 400 x 300, 2 x 32 bytes a node); filled
// with zeros by std::vector it took 15 s of page faults on a 2-core host before the
// first shot started (2026-11-23).
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>

namespace rtm {

template <class T>
class ZeroedArray {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                  "only types that live in zeroed memory without a constructor");

public:
    ZeroedArray() = default;
    explicit ZeroedArray(std::size_t n) : data_(static_cast<T*>(n ? std::calloc(n, sizeof(T)) : nullptr)), size_(n) {
        if (n && !data_) throw std::bad_alloc();
    }
    std::size_t size() const { return size_; }
    T* data() { return data_.get(); }
    const T* data() const { return data_.get(); }
    T& operator[](std::size_t i) { return data_.get()[i]; }
    const T& operator[](std::size_t i) const { return data_.get()[i]; }

private:
    struct Free {
        void operator()(T* p) const { std::free(p); }
    };
    std::unique_ptr<T, Free> data_;
    std::size_t size_ = 0;
};

}  // namespace rtm
