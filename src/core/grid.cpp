#include "core/grid.h"

#include <algorithm>

namespace rtm {

ValueRange value_range(const std::vector<float>& v) {
    float lo = v.front(), hi = v.front();
    const long n = long(v.size());
#pragma omp parallel for schedule(static) reduction(min : lo) reduction(max : hi)
    for (long i = 0; i < n; ++i) {
        lo = std::min(lo, v[std::size_t(i)]);
        hi = std::max(hi, v[std::size_t(i)]);
    }
    return {lo, hi};
}

}  // namespace rtm
