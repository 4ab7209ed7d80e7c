#pragma once
// The wavefields of a CPU propagator and what migration keeps of them, one mechanism
// for both CPU propagators: the isotropic one (one field, u) and the VTI/TTI one (two,
// p and q; docs/anisotropy.md).
//
// Layout: a wavefield is `fields` x `batch` padded boxes, field after field and member
// after member within a field (field f of member m starts (f batch + m) boxes in), so
// that field f of every member is one array of a batch as the step kernels read it.
// Every storage operation (edge band, checkpoint state, snapshot) moves all the boxes,
// so what it puts back is the whole wavefield (p and q both): a TTI source wavefield
// rebuilt backwards from its band, or restored from a state, steps on exactly as the
// forward one did. Imaging reads the mean of the fields: u, or (p + q) / 2 = B^T u,
// the field receivers record, which is what the exact adjoint images (docs/anisotropy.md);
// the born-adjoint condition of VTI/TTI reads p and q apart (correlate).
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/bfloat16.h"
#include "core/default_init.h"
#include "core/error.h"
#include "imaging/field_ops.h"
#include "propagation/domain.h"
#include "propagation/propagator.h"

namespace rtm {

template <class T>
class HostWavefields {
public:
    HostWavefields(const Domain& d, int fields, int batch)
        : d_(d), fields_(fields), batch_(batch), box_(d.box().padded_size()) {
        cur.assign(box_ * std::size_t(fields * batch), T(0));
        prev.assign(cur.size(), T(0));
    }

    std::vector<T> cur, prev;  // u[n] and u[n-1]

    const Domain& domain() const { return d_; }
    // Born modelling: the host propagators read Propagator::born_perturbation itself.
    void set_born_perturbation(const std::vector<double>&) {}
    // More arrays a checkpoint state holds (the C-PML memory), registered by the owner.
    std::vector<std::vector<T>*> state_extra;

    // Field f of member 0 (the others follow at a stride of one padded box).
    T* field(std::vector<T>& a, int f) { return a.data() + std::size_t(f) * batch_ * box_; }
    const T* field(const std::vector<T>& a, int f) const { return a.data() + std::size_t(f) * batch_ * box_; }

    void reset() {
        std::fill(cur.begin(), cur.end(), T(0));
        std::fill(prev.begin(), prev.end(), T(0));
        for (auto* a : state_extra) std::fill(a->begin(), a->end(), T(0));
        image_.assign(image_.size(), 0.0);
        illum_.assign(illum_.size(), 0.0);
    }
    // After a step, and to run time backwards (Propagator::reverse_time).
    void swap() { std::swap(cur, prev); }

    // Padded indices of the window's nodes, in window order (x fastest).
    const std::vector<long>& window_index() const {
        if (window_idx_.empty()) {
            const Grid& g = d_.window();
            window_idx_.reserve(g.size());
            for (int iz = 0; iz < g.nz; ++iz)
                for (int iy = 0; iy < g.ny; ++iy)
                    for (int ix = 0; ix < g.nx; ++ix) window_idx_.push_back(d_.index(ix, iy, iz));
        }
        return window_idx_;
    }

    // The imaged field (the mean of the fields) of member m at padded point p of a.
    double imaged(const std::vector<T>& a, int m, long p) const {
        const T* f = a.data() + std::size_t(m) * box_ + p;
        return fields_ == 1 ? double(*f) : 0.5 * (double(f[0]) + double(f[std::size_t(batch_) * box_]));
    }
    // Member m's window of the imaged field of a.
    std::vector<double> member_window(const std::vector<T>& a, int m) const {
        const auto& idx = window_index();
        std::vector<double> out(idx.size());
        for (std::size_t i = 0; i < idx.size(); ++i) out[i] = imaged(a, m, idx[i]);
        return out;
    }
    // Every member's window of the imaged field of a, member after member.
    std::vector<double> window_of(const std::vector<T>& a) const {
        std::vector<double> out;
        out.reserve(window_index().size() * batch_);
        for (int m = 0; m < batch_; ++m) {
            const auto w = member_window(a, m);
            out.insert(out.end(), w.begin(), w.end());
        }
        return out;
    }

    // cur += coef(field, p) f on the window (f: every member's window, member after
    // member), coef the weight a unit source density has on that field at padded point p.
    template <class Coef>
    void add_field(const std::vector<double>& f, const Coef& coef) {
        require_window_values(f, 1, "add_field");
        const std::size_t ws = window_index().size();
        for (int k = 0; k < fields_; ++k)
            for (int m = 0; m < batch_; ++m)
                add_to_window(k, m, [&](std::size_t i, long p) {
                    const double v = f[m * ws + i];
                    return v == 0 ? 0.0 : coef(k, p) * v;
                });
    }
    // cur += W g on the window: g holds a value per field (field after field, member after
    // member within a field, as the wavefield's boxes), coef(k, j, p) the weight of g's
    // field j on field k at padded point p (the Born source, Propagator::add_born_source).
    template <class Coef>
    void add_fields(const std::vector<double>& g, const Coef& coef) {
        require_window_values(g, fields_, "add_fields");
        const std::size_t ws = window_index().size();
        for (int k = 0; k < fields_; ++k)
            for (int m = 0; m < batch_; ++m)
                add_to_window(k, m, [&](std::size_t i, long p) {
                    double sum = 0;
                    for (int j = 0; j < fields_; ++j) {
                        const double v = g[(std::size_t(j) * batch_ + m) * ws + i];
                        if (v != 0) sum += coef(k, j, p) * v;
                    }
                    return sum;
                });
    }
    // Field k of member m of a on the window (x fastest).
    std::vector<double> field_window(const std::vector<T>& a, int k, int m) const {
        const auto& idx = window_index();
        const T* f = field(a, k) + std::size_t(m) * box_;
        std::vector<double> out(idx.size());
        for (std::size_t i = 0; i < idx.size(); ++i) out[i] = double(f[idx[i]]);
        return out;
    }
    // The symmetry axis n on the window's nodes (TTI; empty arrays for VTI and isotropic),
    // as imaging::anisotropic_operator reads it.
    const std::array<std::vector<double>, 3>& window_axis() const {
        if (d_.anisotropic() && d_.tti().tilted && window_axis_[0].empty())
            for (int a = 0; a < 3; ++a)
                for (long p : window_index()) window_axis_[a].push_back(d_.tti().axis[a][std::size_t(p)]);
        return window_axis_;
    }

    // The edge band of every box (fp32), box after box.
    std::size_t band_size() const { return d_.band().size() * boxes(); }
    void save_band(float* dst) const {
        const auto& b = d_.band();
        for (std::size_t k = 0; k < boxes(); ++k) {
            const T* u = cur.data() + k * box_;
            float* dk = dst + k * b.size();
            for (std::size_t i = 0; i < b.size(); ++i) dk[i] = float(u[b[i]]);
        }
    }
    void restore_band(const float* src) {
        const auto& b = d_.band();
        for (std::size_t k = 0; k < boxes(); ++k) {
            T* u = cur.data() + k * box_;
            const float* sk = src + k * b.size();
            for (std::size_t i = 0; i < b.size(); ++i) u[b[i]] = T(sk[i]);
        }
    }

    // Checkpoint states: cur, prev and state_extra, one after another in a slot.
    std::size_t state_values() const {
        std::size_t n = cur.size() + prev.size();
        for (auto* a : state_extra) n += a->size();
        return n;
    }
    std::size_t state_bytes() const { return state_values() * sizeof(T); }
    void reserve_states(std::size_t count) {
        states_.resize(count * state_values());
        state_slots_ = count;
    }
    void move_state(std::size_t slot, bool store) {
        if (slot >= state_slots_)
            fail(store ? "store_state" : "load_state",
                 "slot " + std::to_string(slot) + " beyond the " + std::to_string(state_slots_) + " reserved");
        T* p = states_.data() + slot * state_values();
        std::vector<std::vector<T>*> arrays{&cur, &prev};
        arrays.insert(arrays.end(), state_extra.begin(), state_extra.end());
        for (auto* a : arrays) {
            if (store) std::copy(a->begin(), a->end(), p);
            else std::copy(p, p + a->size(), a->begin());
            p += a->size();
        }
    }

    // Snapshots: a slot holds the window of every box (every field of every member).
    std::size_t keep(bool bf16) {
        if ((bf16 && !kept_.empty()) || (!bf16 && !kept16_.empty()))
            fail("keep", "snapshots of one propagator must all be of one kind (all bfloat16 or none)");
        const auto& idx = window_index();
        for (std::size_t k = 0; k < boxes(); ++k) {
            const T* u = cur.data() + k * box_;
            if (bf16)
                for (long p : idx) kept16_.push_back(to_bf16(float(u[p])));
            else
                for (long p : idx) kept_.push_back(u[p]);
        }
        return (bf16 ? kept16_.size() : kept_.size()) / slot_values() - 1;
    }
    void reserve_imaging(ImagingCondition) {}  // (host memory: taken as needed)
    void reserve_kept(std::size_t count, bool bf16) {
        const std::size_t values = count * slot_values();
        if (bf16) kept16_.reserve(values);
        else kept_.reserve(values);
    }
    void recall(std::size_t slot, bool previous) {
        const auto& idx = window_index();
        const std::size_t kept = (kept16_.empty() ? kept_.size() : kept16_.size()) / slot_values();
        if (slot >= kept)
            fail("recall", "slot " + std::to_string(slot) + " was never kept (" + std::to_string(kept) + " kept)");
        auto& a = previous ? prev : cur;
        for (std::size_t k = 0; k < boxes(); ++k) {
            T* u = a.data() + k * box_;
            const std::size_t off = slot * slot_values() + k * idx.size();
            for (std::size_t i = 0; i < idx.size(); ++i)
                u[idx[i]] = kept16_.empty() ? kept_[off + i] : T(from_bf16(kept16_[off + i]));
        }
    }
    void clear_kept() {  // the memory stays for the next keep() calls (a propagator kept for the next shot)
        kept_.clear();
        kept16_.clear();
    }

    // image += w * I and illumination += w * u_s^2 (Propagator::correlate) on the imaged
    // fields, member after member, each with exactly the arithmetic of a batch of one.
    void correlate(const HostWavefields& src, double w, ImagingCondition condition) {
        const auto& idx = window_index();
        const std::size_t ws = idx.size();
        if (image_.empty()) {
            image_.assign(ws * batch_, 0.0);
            illum_.assign(ws * batch_, 0.0);
        }
        const Grid& g = d_.window();
        const auto& v2 = d_.v2();
        const double dt = d_.dt();
        for (int m = 0; m < batch_; ++m) {
            double* image = image_.data() + m * ws;
            double* illum = illum_.data() + m * ws;
            switch (condition) {
                case ImagingCondition::CrossCorrelation:
                    for (std::size_t i = 0; i < ws; ++i)
                        image[i] += w * src.imaged(src.cur, m, idx[i]) * imaged(cur, m, idx[i]);
                    break;
                case ImagingCondition::InverseScattering: {
                    const auto s_now = src.member_window(src.cur, m), s_prev = src.member_window(src.prev, m);
                    const auto l = member_window(cur, m), lp = member_window(prev, m);
                    const auto gg = imaging::grad_dot(s_now, l, g);
                    for (std::size_t i = 0; i < ws; ++i) {
                        const double srate = (s_now[i] - s_prev[i]) / dt, lrate = (l[i] - lp[i]) / dt;
                        image[i] += w * (srate * lrate / v2[i] - gg[i]);
                    }
                    break;
                }
                case ImagingCondition::BornAdjoint: {
                    if (fields_ == 1) {
                        const auto lap = imaging::laplacian(src.member_window(src.cur, m), g);
                        for (std::size_t i = 0; i < ws; ++i) image[i] -= w * (v2[i] * lap[i] * imaged(cur, m, idx[i]));
                        break;
                    }
                    // The transpose of the VTI/TTI Born source W g, g = -dm v^2 (H p_s, V q_s):
                    // this propagator's fields are W lambda (docs/anisotropy.md), so the
                    // image is -v^2 (H p_s . p + V q_s . q).
                    const auto [hp, vq] = imaging::anisotropic_operator(
                        src.field_window(src.cur, 0, m), src.field_window(src.cur, 1, m), g, window_axis());
                    const T *p = field(cur, 0) + std::size_t(m) * box_, *q = field(cur, 1) + std::size_t(m) * box_;
                    for (std::size_t i = 0; i < ws; ++i)
                        image[i] -= w * (v2[i] * (hp[i] * double(p[idx[i]]) + vq[i] * double(q[idx[i]])));
                    break;
                }
            }
            for (std::size_t i = 0; i < ws; ++i) {
                const double s = src.imaged(src.cur, m, idx[i]);
                illum[i] += w * s * s;
            }
        }
    }
    std::vector<double> correlation(bool illumination) const {
        const auto& v = illumination ? illum_ : image_;
        return v.empty() ? std::vector<double>(d_.window().size() * batch_, 0.0) : v;
    }
    // Member m's (window nodes).
    UninitVector<double> member_correlation(bool illumination, int m) const {
        const auto& v = illumination ? illum_ : image_;
        const std::size_t n = d_.window().size();
        return v.empty() ? filled(n, 0.0) : converted<double>(v.data() + m * n, n);
    }

private:
    void require_window_values(const std::vector<double>& f, int fields, const char* who) const {
        const std::size_t ws = window_index().size();
        if (f.size() != ws * batch_ * fields)
            fail(who, "the field has " + std::to_string(f.size()) + " values but the window " + std::to_string(ws) +
                          " nodes" + (fields > 1 ? " for each of " + std::to_string(fields) + " fields" : "") +
                          (batch_ > 1 ? " for each of " + std::to_string(batch_) + " members" : ""));
    }
    // cur's field k of member m += value(i, p) at window node i (padded point p).
    template <class Value>
    void add_to_window(int k, int m, const Value& value) {
        const auto& idx = window_index();
        T* um = field(cur, k) + std::size_t(m) * box_;
        for (std::size_t i = 0; i < idx.size(); ++i) {
            const double v = value(i, idx[i]);
            if (v != 0) um[idx[i]] += T(v);
        }
    }

    std::size_t boxes() const { return std::size_t(fields_) * batch_; }
    std::size_t slot_values() const { return window_index().size() * boxes(); }

    const Domain& d_;
    int fields_, batch_;
    std::size_t box_;
    mutable std::vector<long> window_idx_;
    mutable std::array<std::vector<double>, 3> window_axis_;
    std::vector<T> kept_;                 // snapshots, slot after slot
    std::vector<std::uint16_t> kept16_;   // or in bfloat16
    std::vector<double> image_, illum_;   // the correlation's accumulators (window, member after member)
    std::vector<T> states_;               // checkpoints, state after state
    std::size_t state_slots_ = 0;
};

}  // namespace rtm
