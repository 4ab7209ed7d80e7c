#include "core/default_init.h"

namespace rtm {

template <class T>
UninitVector<T> converted(const double* from, std::size_t n) {
    UninitVector<T> to(n);
    const long count = long(n);
#pragma omp parallel for schedule(static)
    for (long i = 0; i < count; ++i) to[std::size_t(i)] = T(from[i]);
    return to;
}

template <class T>
UninitVector<T> filled(std::size_t n, T value) {
    UninitVector<T> to(n);
    const long count = long(n);
#pragma omp parallel for schedule(static)
    for (long i = 0; i < count; ++i) to[std::size_t(i)] = value;
    return to;
}

template UninitVector<float> converted<float>(const double*, std::size_t);
template UninitVector<double> converted<double>(const double*, std::size_t);
template UninitVector<double> filled<double>(std::size_t, double);

}  // namespace rtm
