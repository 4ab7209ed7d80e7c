#pragma once
// Point-source injection, grouped by target point: the twin of kernels::cuda::inject_cuda
// (both propagators inject through it, so GPU and CPU injection agree bit for bit).
#include <vector>

#include "core/default_init.h"

namespace rtm::kernels {

// The taps of all sources (tap k of source i at padded index p with coefficient c = the
// point's injection factor times the tap's weight, see Domain::injection), grouped by
// target point: targets in order of first appearance, each with its taps in the order
// they were given (source after source, tap after tap). Built once per set_sources.
struct Injection {
    std::vector<long> target;    // distinct padded indices
    std::vector<int> offset;     // target t's taps: [offset[t], offset[t + 1])
    std::vector<int> source;     // per tap: its source (row of the traces)
    std::vector<double> coef;    // per tap: injection factor * weight
    UninitVector<double> traces;  // sources x nt samples, zero past a source's own trace
    int nt = 0;
    double inv_vol = 1;          // 1 / cell volume

    // Taps source by source: index[i][k], coef[i][k]; traces[i] (any length <= nt).
    static Injection group(const std::vector<std::vector<long>>& index, const std::vector<std::vector<double>>& coef,
                           const std::vector<std::vector<double>>& traces, double inv_vol);
};

// At step n, for every target point p, for its taps k in order, with a = traces[source[k]][n]:
//   if a != 0:  w[p] = w[p] + T((coef[k] * a) * inv_vol)
// each product and the sum rounded once, in that order (no fused multiply-add): the same
// additions into each point, in the same order, as the source-by-source loop
// `for i, for k: w[index[i][k]] += T(factor * weight * a_i * inv_vol)`, so the result does
// not depend on how the targets are split among threads.
template <class T>
void inject_cpu(const Injection& inj, int n, T* w);

}  // namespace rtm::kernels
