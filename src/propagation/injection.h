#pragma once
// Point sources as both backends inject them: kernels::Injection (taps grouped by target
// point) from the sources' stencils and traces.
#include <string>
#include <vector>

#include "core/error.h"
#include "kernels/cpu/inject_cpu.h"
#include "propagation/domain.h"

namespace rtm {

// Tap k of source i gets coef = Domain::injection at its point (batch members' stencils
// are moved by whole padded boxes) times its weight; s[n] = trace[n] * coef / cell volume.
inline kernels::Injection injection_of(const Domain& d, const std::vector<PointStencil>& where,
                                       const std::vector<std::vector<double>>& traces) {
    if (traces.size() != where.size())
        fail("set_sources", std::to_string(where.size()) + " sources but " + std::to_string(traces.size()) + " traces");
    const long box = long(d.box().padded_size());
    std::vector<std::vector<long>> index;
    std::vector<std::vector<double>> coef;
    for (const auto& s : where) {
        index.push_back(s.index);
        coef.emplace_back();
        for (std::size_t k = 0; k < s.index.size(); ++k) coef.back().push_back(d.injection(s.index[k] % box) * s.weight[k]);
    }
    return kernels::Injection::group(index, coef, traces, 1.0 / d.cell_volume());
}

// Receivers' taps one after another (CSR), as the GPU sampling kernels read them:
// receiver r's taps are index/weight[offset[r] .. offset[r + 1]).
struct ReceiverTaps {
    std::vector<int> offset{0};
    std::vector<long> index;
    std::vector<double> weight;
};
inline ReceiverTaps receiver_taps(const std::vector<PointStencil>& where) {
    ReceiverTaps t;
    for (const auto& r : where) {
        t.index.insert(t.index.end(), r.index.begin(), r.index.end());
        t.weight.insert(t.weight.end(), r.weight.begin(), r.weight.end());
        t.offset.push_back(int(t.index.size()));
    }
    return t;
}

}  // namespace rtm
