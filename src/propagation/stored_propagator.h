#pragma once
// The migration operations of a propagator whose wavefields, and what migration keeps of
// them, live in one storage object (HostWavefields on the CPU, DeviceWavefields on a GPU:
// both time levels of every field, snapshots, checkpoint states, the edge band, the
// image), forwarded once here for the isotropic and the VTI/TTI propagators of both
// backends. The step, sources, receivers, correlate (which needs the source propagator's
// own type) and a backend's extras stay with each propagator.
#include <cstddef>
#include <utility>
#include <vector>

#include "core/threads.h"
#include "propagation/domain.h"
#include "propagation/propagator.h"

namespace rtm {

template <class Storage>
class StoredPropagator : public Propagator {
public:
    std::vector<double> wavefield() const override { return f_.window_of(f_.cur); }
    std::vector<double> previous_wavefield() const override { return f_.window_of(f_.prev); }
    void reverse_time() override { f_.swap(); }

    std::size_t band_size() const override { return f_.band_size(); }
    void save_band(float* dst) const override { f_.save_band(dst); }
    void restore_band(const float* src) override { f_.restore_band(src); }

    std::size_t state_bytes() const override { return f_.state_bytes(); }
    void reserve_states(std::size_t count) override { f_.reserve_states(count); }
    void store_state(std::size_t slot) override { f_.move_state(slot, true); }
    void load_state(std::size_t slot) override { f_.move_state(slot, false); }

    std::size_t keep(bool bf16) override { return f_.keep(bf16); }
    void reserve_kept(std::size_t count, bool bf16) override { f_.reserve_kept(count, bf16); }
    void reserve_imaging(ImagingCondition condition) override { f_.reserve_imaging(condition); }
    void recall(std::size_t slot, bool previous) override { f_.recall(slot, previous); }
    void clear_kept() override { f_.clear_kept(); }
    std::vector<double> correlation(bool illumination) const override { return f_.correlation(illumination); }
    // Born modelling's perturbation: on the domain's window (the Born source is formed
    // there), its size checked by Propagator, then handed to the storage (a GPU's keeps
    // it in device memory).
    void set_born_perturbation(const Grid& window, std::vector<double> dm_v2) override {
        require_domain_window(f_.domain(), window);
        Propagator::set_born_perturbation(window, std::move(dm_v2));
        f_.set_born_perturbation(born_perturbation());
    }

    std::vector<UninitVector<double>> member_correlations(bool illumination) const override {
        std::vector<UninitVector<double>> out;
        for (int m = 0; m < batch(); ++m) out.push_back(f_.member_correlation(illumination, m));
        return out;
    }

protected:
    // fields: wavefields per time level (1: u; 2: p and q).
    StoredPropagator(const Domain& d, int fields, int batch) : Propagator(batch), f_(d, fields, batch) {}
    Storage f_;
};

}  // namespace rtm
