#include "propagation/slab_propagator.h"

#include <algorithm>
#include <chrono>
#include <set>
#include <utility>

#include <spdlog/spdlog.h>

#include "core/error.h"
#include "imaging/field_ops.h"

namespace rtm {

namespace {

using stencil::R;

class SlabPropagator final : public Propagator {
public:
    SlabPropagator(const Domain& whole, Precision precision, const Backend& backend, const parallel::World& group,
                   int batch)
        : Propagator(batch),
          whole_(whole),
          group_(group),
          slabs_(parallel::slab_layout(whole.box().nz, whole.box().pml_lo[2], whole.box().pml_hi[2],
                                       whole.box().free_surface, group.size())),
          me_(slabs_[std::size_t(group.rank())]),
          domain_(whole.slab(me_.z0, me_.z1)) {
        log_layout();
        Backend one = backend;
        one.group = nullptr;
        inner_ = make_propagator(domain_, precision, one, batch);
        // A two-pass step (TTI) differentiates its pass-1 fluxes across the faces too:
        // their ghost planes come from the neighbours between the passes.
        if (inner_->intermediate_plane_bytes() > 0)
            inner_->set_between_passes([this](int) { exchange_intermediate(); });
        above_ = group.rank() > 0 ? R : 0;
        below_ = group.rank() + 1 < group.size() ? R : 0;
        in_step_ = inner_->exchange_in_step(group);  // collective
        imaging_inside_ = inner_->window_continues(above_, below_);
        // The slab's first window plane in the whole window (faces lie outside the layers).
        w0_ = std::max(me_.z0, whole.box().pml_lo[2]) - whole.box().pml_lo[2];
    }

    void set_sources(const std::vector<PointStencil>& where,
                     const std::vector<std::vector<double>>& traces) override {
        std::vector<PointStencil> mine;
        for (const auto& s : where) mine.push_back(local(s, true));
        inner_->set_sources(mine, traces);
        stale_ = true;
    }
    void set_receivers(const std::vector<PointStencil>& where, int nt) override {
        owner_.clear();
        std::vector<PointStencil> mine;
        for (const auto& s : where) {
            owner_.push_back(owner(s));
            if (owner_.back() == group_.rank()) mine.push_back(local(s, false));
        }
        nt_ = nt;
        inner_->set_receivers(mine, nt);
    }

    void reset() override {
        inner_->reset();
        stale_ = true;
        image_.clear();
        illum_.clear();
    }
    // With the exchange in the step (a GPU's, propagation/cuda_slab_exchange.h) the
    // ghost planes are fresh after it; the exchange here is only for what else changed them.
    void step(int n) override {
        exchange();
        inner_->step(n);
        stale_ = !in_step_;
    }
    double busy_seconds() const override { return inner_->busy_seconds() + exchange_seconds_; }
    std::string name() const override {
        return inner_->name() + " in " + std::to_string(group_.size()) + " z-slabs";
    }
    bool finite() const override { return group_.all(inner_->finite()); }

    // Receiver after receiver, each from its slab.
    std::vector<double> receiver_traces() const override {
        const auto mine = inner_->receiver_traces();
        const auto parts = group_.allgather(mine.data(), mine.size() * sizeof(double));
        std::vector<double> out(owner_.size() * std::size_t(nt_));
        std::vector<std::size_t> next(parts.size(), 0);
        const std::size_t row = std::size_t(nt_) * sizeof(double);
        for (std::size_t r = 0; r < owner_.size(); ++r) {
            const std::size_t g = std::size_t(owner_[r]);
            std::copy_n(parts[g].data() + next[g]++ * row, row, reinterpret_cast<char*>(out.data() + r * nt_));
        }
        return out;
    }
    std::vector<double> wavefield() const override { return assemble(inner_->wavefield(), batch()); }
    std::vector<double> previous_wavefield() const override { return assemble(inner_->previous_wavefield(), batch()); }

    // The isotropic Born source (Propagator's, through the assembled wavefield); the
    // anisotropic one needs H p, V q across the faces, with ghost planes 2 R deep for TTI.
    void add_born_source(const Propagator& background) override {
        if (whole_.anisotropic()) refuse_anisotropic_born("Born modelling");
        Propagator::add_born_source(background);
    }
    void add_field(const std::vector<double>& f) override {
        const std::size_t plane = std::size_t(whole_.window().nx) * whole_.window().ny;
        if (f.size() != whole_.window().size())
            fail("add_field", "the field has " + std::to_string(f.size()) + " values but the window " +
                                  std::to_string(whole_.window().size()) + " nodes");
        const auto first = f.begin() + std::ptrdiff_t(std::size_t(w0_) * plane);
        inner_->add_field(std::vector<double>(first, first + std::ptrdiff_t(domain_.window().size())));
        stale_ = true;
    }
    void reverse_time() override {
        inner_->reverse_time();
        stale_ = true;
    }

    std::size_t band_size() const override { return inner_->band_size(); }
    void save_band(float* dst) const override { inner_->save_band(dst); }
    void restore_band(const float* src) override {
        inner_->restore_band(src);
        stale_ = true;
    }
    void reserve_bands(std::size_t count) override { inner_->reserve_bands(count); }
    void store_band(std::size_t slot) override { inner_->store_band(slot); }
    void load_band(std::size_t slot) override {
        inner_->load_band(slot);
        stale_ = true;
    }

    std::size_t state_bytes() const override { return inner_->state_bytes(); }
    void reserve_states(std::size_t count) override { inner_->reserve_states(count); }
    void store_state(std::size_t slot) override { inner_->store_state(slot); }
    void load_state(std::size_t slot) override {
        inner_->load_state(slot);
        stale_ = true;
    }

    std::size_t keep(bool bf16) override { return inner_->keep(bf16); }
    void reserve_kept(std::size_t count, bool bf16) override { inner_->reserve_kept(count, bf16); }
    void reserve_imaging(ImagingCondition condition) override {
        // (Before the source pass, so that no shot propagates to be refused at its image.)
        if (condition == ImagingCondition::BornAdjoint && whole_.anisotropic())
            refuse_anisotropic_born("The born-adjoint condition");
        inner_->reserve_imaging(condition);
    }
    void recall(std::size_t slot, bool previous) override {
        inner_->recall(slot, previous);
        if (!previous) stale_ = true;  // u[n-1] is only read pointwise
    }
    void clear_kept() override { inner_->clear_kept(); }

    void correlate(const Propagator& source, double w, ImagingCondition condition) override;
    std::vector<double> correlation(bool illumination) const override {
        const auto& own = illumination ? illum_ : image_;
        // The inner's: one window per batch member; this one's own (derivative
        // conditions): batches of one only.
        return own.empty() ? assemble(inner_->correlation(illumination), batch()) : assemble(own, 1);
    }
    std::vector<UninitVector<double>> member_correlations(bool illumination) const override {
        const auto& own = illumination ? illum_ : image_;
        return own.empty() ? members_of(inner_->correlation(illumination), batch()) : members_of(own, 1);
    }

private:
    // The slabs, once per process and box depth (every shot makes its propagators).
    void log_layout() const {
        static std::set<std::pair<int, int>> said;
        if (!said.insert({whole_.box().nz, group_.size()}).second) return;
        std::string planes;
        for (const auto& s : slabs_) planes += " [" + std::to_string(s.z0) + ", " + std::to_string(s.z1) + ")";
        spdlog::info("z-slabs of the {} depth planes (layers included) over the {} ranks of a shot group:{}",
                     whole_.box().nz, group_.size(), planes);
    }

    // A stencil of the whole domain (member offsets of its box) as this slab's: padded
    // plane p of the whole box is plane p - z0 here; owned_only keeps the taps on owned
    // planes (injection), else all, which must lie within reach (sampling).
    PointStencil local(const PointStencil& s, bool owned_only) const {
        const long P = long(whole_.box().padded_size()), Pl = long(domain_.box().padded_size());
        const long sz = whole_.box().sz(), shift = long(me_.z0) * sz;
        PointStencil out;
        for (std::size_t k = 0; k < s.index.size(); ++k) {
            const long m = s.index[k] / P, q = s.index[k] % P, iz = q / sz - R;
            if (owned_only && (iz < me_.z0 || iz >= me_.z1)) continue;
            if (iz < me_.z0 - R || iz >= me_.z1 + R)
                fail("slab receiver", "a tap " + std::to_string(iz - me_.z0) + " planes from its slab", "Internal error");
            out.index.push_back(q - shift + m * Pl);
            out.weight.push_back(s.weight[k]);
        }
        return out;
    }
    // The slab sampling a receiver: the one holding its taps' middle plane (the taps span
    // at most 2R planes, so all lie within R of it).
    int owner(const PointStencil& s) const {
        if (s.index.empty()) return 0;
        const long P = long(whole_.box().padded_size()), sz = whole_.box().sz();
        long lo = -1, hi = -1;
        for (long i : s.index) {
            const long iz = (i % P) / sz - R;
            lo = lo < 0 ? iz : std::min(lo, iz);
            hi = std::max(hi, iz);
        }
        const long mid = (lo + hi) / 2;
        for (std::size_t g = 0; g < slabs_.size(); ++g)
            if (mid >= slabs_[g].z0 && mid < slabs_[g].z1) return int(g);
        fail("slab receiver", "its stencil lies outside the box", "Internal error");
    }

    // The current wavefield's R planes beside each inner face from the neighbours.
    void exchange() const {
        if (!stale_) return;
        const auto t0 = std::chrono::steady_clock::now();
        swap_faces(inner_->plane_bytes() * R * std::size_t(batch()),
                   [&](int iz0, void* dst) { inner_->copy_planes_out(iz0, R, dst); },
                   [&](int iz0, const void* src) { inner_->copy_planes_in(iz0, R, src); });
        exchange_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        stale_ = false;
    }
    // The pass-1 output planes beside each inner face of the member whose pass 1 just ran
    // (the step's between_passes: members step one after another, each exchanging its own).
    // Not timed here: it runs inside the inner step, whose busy time holds it already.
    void exchange_intermediate() const {
        swap_faces(inner_->intermediate_plane_bytes() * R,
                   [&](int iz0, void* dst) { inner_->copy_intermediate_out(iz0, R, dst); },
                   [&](int iz0, const void* src) { inner_->copy_intermediate_in(iz0, R, src); });
    }
    // R planes (bytes in all) across both inner faces: out(iz0, dst) packs planes iz0 ..
    // iz0 + R - 1, in(iz0, src) unpacks them into the halo there. An outer face packs
    // nothing (no neighbour: on a GPU that would be a copy and a wait for nothing).
    template <class Out, class In>
    void swap_faces(std::size_t bytes, const Out& out, const In& in) const {
        const int r = group_.rank(), nz = domain_.box().nz;
        send_.resize(bytes);
        recv_.resize(bytes);
        const int up = above_ ? r - 1 : -1, down = below_ ? r + 1 : -1;
        // Downwards: my last R planes to the slab below, the one above's into my top halo.
        if (down >= 0) out(nz - R, send_.data());
        group_.sendrecv(send_.data(), down < 0 ? 0 : bytes, down, recv_.data(), up < 0 ? 0 : bytes, up);
        if (up >= 0) in(-R, recv_.data());
        // Upwards: my first R planes to the slab above, the one below's into my bottom halo.
        if (up >= 0) out(0, send_.data());
        group_.sendrecv(send_.data(), up < 0 ? 0 : bytes, up, recv_.data(), down < 0 ? 0 : bytes, down);
        if (down >= 0) in(nz, recv_.data());
    }
    [[noreturn]] void refuse_anisotropic_born(const std::string& what) const {
        fail("option parallel.ranks-per-shot", what + " of anisotropic (VTI/TTI) models over z-slabs is not implemented",
             "Set parallel.ranks-per-shot = 1 for it (cross-correlation and inverse scattering run over slabs)");
    }

    // Each member's whole window from every slab's part of it (mine: this slab's, member
    // after member; each member's: the slabs top to bottom), and all of them in one
    // array, member after member (assemble).
    std::vector<UninitVector<double>> members_of(const std::vector<double>& mine, int members) const {
        const auto parts = group_.allgather(mine.data(), mine.size() * sizeof(double));
        std::vector<UninitVector<double>> out(std::size_t(members > 0 ? members : 0));
        for (int m = 0; m < members; ++m)
            for (const auto& part : parts) {
                const std::size_t n = part.size() / sizeof(double) / std::size_t(members);
                const double* p = reinterpret_cast<const double*>(part.data()) + m * n;
                out[std::size_t(m)].insert(out[std::size_t(m)].end(), p, p + n);
            }
        return out;
    }
    std::vector<double> assemble(const std::vector<double>& mine, int members) const {
        std::vector<double> out;
        for (const auto& member : members_of(mine, members)) out.insert(out.end(), member.begin(), member.end());
        return out;
    }

    // p's current wavefield on this slab's window planes with the ghost planes beside
    // its inner faces (all window planes: faces keep R planes from the layers).
    std::vector<double> extended(const SlabPropagator& p) const;

    const Domain& whole_;
    const parallel::World& group_;
    std::vector<parallel::Slab> slabs_;
    parallel::Slab me_;
    Domain domain_;
    std::unique_ptr<Propagator> inner_;
    int above_ = 0, below_ = 0, w0_ = 0;
    std::vector<int> owner_;  // each receiver's slab
    int nt_ = 0;
    mutable bool stale_ = true;
    bool in_step_ = false;  // the inner propagator exchanges in each step itself
    bool imaging_inside_ = false;  // it differentiates across the faces itself (ghost planes)
    mutable std::vector<char> send_, recv_;
    mutable double exchange_seconds_ = 0;
    std::vector<double> image_, illum_;  // the derivative conditions' accumulators
};

std::vector<double> SlabPropagator::extended(const SlabPropagator& p) const {
    const Grid& g = domain_.window();
    const kernels::Box& box = domain_.box();
    const std::size_t plane = std::size_t(g.nx) * g.ny;
    std::vector<double> out((std::size_t(above_ + below_) + std::size_t(g.nz)) * plane);
    const auto own = p.inner_->wavefield();
    std::copy(own.begin(), own.end(), out.begin() + std::ptrdiff_t(above_ * plane));
    const std::size_t bytes = p.inner_->plane_bytes();
    std::vector<char> buf(bytes * R);
    // The imaged field (u, or (p + q) / 2 as the TTI propagators image it: R planes of p,
    // then R of q) on the window nodes of halo planes iz0 .. iz0 + R - 1.
    const int fields = domain_.anisotropic() ? 2 : 1;
    const bool single = bytes == fields * std::size_t(box.sz()) * sizeof(float);
    const long field_stride = long(R) * box.sz();
    const auto value = [&](long q) {
        return single ? double(reinterpret_cast<const float*>(buf.data())[q]) : reinterpret_cast<const double*>(buf.data())[q];
    };
    const auto ghosts = [&](int iz0, double* dst) {
        p.inner_->copy_planes_out(iz0, R, buf.data());
        for (int k = 0; k < R; ++k)
            for (int iy = 0; iy < g.ny; ++iy)
                for (int ix = 0; ix < g.nx; ++ix) {
                    const long q = box.at(ix + box.pml_lo[0], iy + box.pml_lo[1], iz0 + k) - long(iz0 + R) * box.sz();
                    dst[std::size_t(k) * plane + g.index(ix, iy, 0)] =
                        fields == 1 ? value(q) : 0.5 * (value(q) + value(q + field_stride));
                }
    };
    if (above_) ghosts(-R, out.data());
    if (below_) ghosts(box.nz, out.data() + (std::size_t(above_) + std::size_t(g.nz)) * plane);
    return out;
}

// Cross-correlation is pointwise: the slab's own propagator does it where the fields
// live. The other two differentiate the fields across the faces: by the slab's own
// propagator where it reads the ghost planes (window_continues: a GPU's), else here on the host, over
// the slab's window and its ghost planes, with the arithmetic of the CPU propagator's
// correlate (same operators, same order), so that each point gets the same sum.
void SlabPropagator::correlate(const Propagator& source, double w, ImagingCondition condition) {
    const auto* src = dynamic_cast<const SlabPropagator*>(&source);
    if (!src) unsupported("correlate with a propagator that is not of the same slabs");
    if (condition == ImagingCondition::CrossCorrelation) return inner_->correlate(*src->inner_, w, condition);
    // Before the GPU's path too: its window operator would take each face for the window's edge.
    if (condition == ImagingCondition::BornAdjoint && domain_.anisotropic())
        refuse_anisotropic_born("The born-adjoint condition");
    if (imaging_inside_) {  // from the ghost planes, where the fields live (a GPU's)
        src->exchange();
        exchange();
        return inner_->correlate(*src->inner_, w, condition);
    }
    require_same_batch(source);
    if (batch() > 1)
        fail("option propagation.batch", "the inverse-scattering and born-adjoint conditions over z-slabs take one shot at a time",
             "Set propagation.batch = 1 with parallel.ranks-per-shot above 1");
    src->exchange();
    exchange();
    const Grid& g = domain_.window();
    Grid ge = g;
    ge.nz = above_ + g.nz + below_;
    const std::size_t n = g.size(), off = std::size_t(above_) * std::size_t(g.nx) * g.ny;
    if (image_.empty()) {
        image_.assign(n, 0.0);
        illum_.assign(n, 0.0);
    }
    const auto& v2 = domain_.v2();
    const double dt = domain_.dt();
    const auto us = extended(*src);
    if (condition == ImagingCondition::InverseScattering) {
        const auto l = extended(*this);
        const auto usp = src->inner_->previous_wavefield(), lp = inner_->previous_wavefield();
        const auto gg = imaging::grad_dot(us, l, ge);
        for (std::size_t i = 0; i < n; ++i) {
            const double srate = (us[off + i] - usp[i]) / dt, lrate = (l[off + i] - lp[i]) / dt;
            image_[i] += w * (srate * lrate / v2[i] - gg[off + i]);
        }
    } else {
        const auto lap = imaging::laplacian(us, ge);
        const auto u = inner_->wavefield();
        for (std::size_t i = 0; i < n; ++i) image_[i] -= w * (v2[i] * lap[off + i] * u[i]);
    }
    for (std::size_t i = 0; i < n; ++i) {
        const double s = us[off + i];
        illum_[i] += w * s * s;
    }
}

}  // namespace

std::unique_ptr<Propagator> make_slab_propagator(const Domain& domain, Precision precision, const Backend& backend,
                                                 const parallel::World& group, int batch) {
    return std::make_unique<SlabPropagator>(domain, precision, backend, group, batch);
}

}  // namespace rtm
