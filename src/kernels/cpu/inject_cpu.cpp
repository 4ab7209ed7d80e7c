// Point-source injection grouped by target (see inject_cpu.h). Compiled with
// -ffp-contract=off (CMakeLists.txt): the sum w + x * inv_vol must not become a fused
// multiply-add, whose single rounding the GPU twin does not make.
#include "kernels/cpu/inject_cpu.h"

#include <algorithm>
#include <unordered_map>

namespace rtm::kernels {

Injection Injection::group(const std::vector<std::vector<long>>& index, const std::vector<std::vector<double>>& coef,
                           const std::vector<std::vector<double>>& traces, double inv_vol) {
    Injection inj;
    inj.inv_vol = inv_vol;
    for (const auto& t : traces) inj.nt = std::max(inj.nt, int(t.size()));
    // Filled row by row in parallel, each row's pages first touched by its thread
    // (core/default_init.h): a batch's receivers hold hundreds of MB of traces.
    inj.traces.resize(traces.size() * std::size_t(inj.nt));
#pragma omp parallel for schedule(static)
    for (long i = 0; i < long(traces.size()); ++i) {
        double* row = inj.traces.data() + std::size_t(i) * std::size_t(inj.nt);
        const auto& t = traces[std::size_t(i)];
        std::copy(t.begin(), t.end(), row);
        std::fill(row + t.size(), row + inj.nt, 0.0);
    }
    // Target of each tap, in order of first appearance; then the taps bucketed by target
    // (a stable counting sort keeps each target's taps in the given order).
    std::unordered_map<long, int> slot;
    std::vector<int> tap_target;
    for (const auto& idx : index)
        for (long p : idx) {
            const auto [it, fresh] = slot.try_emplace(p, int(inj.target.size()));
            if (fresh) inj.target.push_back(p);
            tap_target.push_back(it->second);
        }
    inj.offset.assign(inj.target.size() + 1, 0);
    for (int t : tap_target) ++inj.offset[t + 1];
    for (std::size_t t = 0; t < inj.target.size(); ++t) inj.offset[t + 1] += inj.offset[t];
    inj.source.resize(tap_target.size());
    inj.coef.resize(tap_target.size());
    std::vector<int> next(inj.offset.begin(), inj.offset.end() - 1);
    std::size_t k = 0;
    for (std::size_t i = 0; i < index.size(); ++i)
        for (std::size_t j = 0; j < index[i].size(); ++j, ++k) {
            const int at = next[tap_target[k]]++;
            inj.source[at] = int(i);
            inj.coef[at] = coef[i][j];
        }
    return inj;
}

template <class T>
void inject_cpu(const Injection& inj, int n, T* w) {
    if (n < 0 || n >= inj.nt) return;
    const long targets = long(inj.target.size());
#pragma omp parallel for schedule(static) if (targets > 4096)
    for (long t = 0; t < targets; ++t) {
        T acc = w[inj.target[t]];
        for (int k = inj.offset[t]; k < inj.offset[t + 1]; ++k) {
            const double a = inj.traces[std::size_t(inj.source[k]) * inj.nt + n];
            if (a != 0) acc += T(inj.coef[k] * a * inj.inv_vol);
        }
        w[inj.target[t]] = acc;
    }
}

template void inject_cpu<float>(const Injection&, int, float*);
template void inject_cpu<double>(const Injection&, int, double*);

}  // namespace rtm::kernels
