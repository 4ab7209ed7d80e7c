#pragma once
// The backend seam: a propagator advances one domain's wavefield in time on some
// device (CPU now; CUDA behind the same interface). It owns the wavefields; the
// host gives it source traces and reads receiver traces back.
//
// Time step n (n = 0 .. nt-1) of `step`:
//   1. record u[n] at every receiver into row n of the receiver traces;
//   2. u[n+1] = 2 u[n] - u[n-1] + (v dt)^2 (Lap u[n] + C-PML terms + s[n]),
//      with s[n] = sum over sources of trace[n] * weight / cell volume
//      (in a damping layer the whole right side is divided by 1 + k, see Domain::injection),
//      so that (1/v^2) u_tt - Lap u = f(t) delta(x - x_s) for a source of wavelet f.
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/default_init.h"
#include "propagation/domain.h"

namespace rtm {

namespace parallel {
class World;
}

enum class Precision { Single, Double };

// Imaging conditions, evaluated by the propagators where the wavefields live (correlate).
enum class ImagingCondition { CrossCorrelation, InverseScattering, BornAdjoint };

// A batch's receiver traces, receiver-major, as receiver_traces_later's fetch hands them
// over, in the vector its backend filled: a GPU's first touched by the threads of its
// copy and transpose (UninitVector: 312 MB zeroed by one thread first took half of 16 2D
// shots' 0.14 s to the host, H200 host, 2026-11-25), the others' receiver_traces() as
// they come (no second copy).
class FetchedTraces {
public:
    explicit FetchedTraces(std::vector<double> traces) : plain_(std::move(traces)) {}
    explicit FetchedTraces(UninitVector<double> traces) : touched_(std::move(traces)) {}
    const double* data() const { return touched_.empty() ? plain_.data() : touched_.data(); }

private:
    std::vector<double> plain_;
    UninitVector<double> touched_;
};

// A batch: a propagator may carry several members, independent wavefields of one
// domain propagated together (the shots of a survey over one model: in 2D only a batch
// fills a GPU). Their padded arrays lie one after another, so member m's source and
// receiver stencils are its own moved by m padded boxes (member_stencil); receiver
// traces and wavefields come back member after member. Migration's operations act on
// one wavefield and refuse a batch.
class Propagator {
public:
    virtual ~Propagator() = default;
    int batch() const { return batch_; }

    // Sources: one stencil and one trace of nt samples (at the domain's dt) each.
    virtual void set_sources(const std::vector<PointStencil>& where,
                             const std::vector<std::vector<double>>& traces) = 0;
    virtual void set_receivers(const std::vector<PointStencil>& where, int nt) = 0;

    virtual void reset() = 0;       // wavefields and C-PML memory to zero
    virtual void step(int n) = 0;   // see above
    // Receiver traces recorded so far: receivers x nt, receiver after receiver.
    virtual std::vector<double> receiver_traces() const = 0;
    // The same traces, fetched by calling the function returned (once, on any thread),
    // while this propagator goes on: it may be given new receivers, reset and stepped
    // meanwhile. A GPU backend hands over the device buffer the steps so far wrote and
    // records the next ones into another, so that the copy to the host and the
    // transpose run beside the next shot's steps; this default takes them now.
    virtual std::function<FetchedTraces()> receiver_traces_later() {
        return [t = receiver_traces()]() mutable { return FetchedTraces(std::move(t)); };
    }
    // The current wavefield u[n] on the window's nodes (x fastest), for tests and snapshots.
    virtual std::vector<double> wavefield() const = 0;
    // False when any computed point of any member's current wavefield is not finite (a
    // blow-up: NaN or infinity in the data, the model or an unstable step). This default
    // looks at wavefield() on the host; a GPU backend reduces where the field lives.
    virtual bool finite() const;

    // --- For migration (a backend without them says so when a migration starts) ---
    // A VTI/TTI propagator's wavefield is two fields, p and q: what these store and
    // restore is both (p of every member, then q), and what they image and return as
    // "the wavefield" is (p + q) / 2, the field receivers record (docs/anisotropy.md).
    // The previous wavefield u[n-1] on the window's nodes (member after member).
    virtual std::vector<double> previous_wavefield() const { unsupported("previous_wavefield"); }
    // Adds (v dt)^2 f to the current wavefield on the window (f on the window's nodes, one
    // window per member, member after member): called right after step(n), it injects the
    // volume source f[n] into u[n+1] exactly as point sources are injected (VTI/TTI: W B f).
    virtual void add_field(const std::vector<double>& f) { unsupported("add_field"); }
    // Born modelling's perturbation dm_v2: the slowness-squared perturbation times v^2 on
    // the nodes of `window` (the domain's; member after member), for the add_born_source
    // calls that follow (set once a run: a GPU backend keeps it in device memory).
    // Checks its size.
    virtual void set_born_perturbation(const Grid& window, std::vector<double> dm_v2);
    // Born modelling's source, called right after step(n) as add_field: adds W g to the
    // current wavefield (u[n+1]), g = -dm_v2 L u0[n], u0[n] the current wavefield of
    // `background` (same domain and batch), L the propagator's spatial operator with
    // values outside the window zero (imaging::field_ops): Lap for the isotropic scheme,
    // diag(H, V) on (p, q) for VTI/TTI, where W is the 2x2 (v dt)^2 C
    // (docs/anisotropy.md "Born modelling"). This default is the isotropic one, on the
    // host through wavefield() and add_field(): an anisotropic backend overrides it,
    // since wavefield() is then (p + q) / 2.
    virtual void add_born_source(const Propagator& background);
    // Swaps u[n] and u[n-1]: after it, step(n) for n = N-1, N-2, ... runs time
    // backwards (u[n-1] = 2 u[n] - u[n+1] + (v dt)^2 (Lap u[n] + s[n]) is the same update).
    virtual void reverse_time() { unsupported("reverse_time"); }
    // The band of window nodes within R of the window's edge (which holds everything the
    // window's interior needs from outside), for rebuilding a wavefield backwards:
    // save it after each forward step, restore it after each backward one. band_size()
    // counts the values of every member (each member's band, member after member).
    virtual std::size_t band_size() const { unsupported("band_size"); }
    virtual void save_band(float* dst) const { unsupported("save_band"); }
    virtual void restore_band(const float* src) { unsupported("restore_band"); }
    // The band history of a whole run, kept by the propagator: reserve_bands(count)
    // makes slots 0..count-1 (slot contents undefined until stored), store_band(slot)
    // saves the current wavefield's band there, load_band(slot) puts it back. This
    // default keeps it in host memory through save_band/restore_band; a GPU backend
    // keeps it in device memory, where it moves no bytes over the bus.
    virtual void reserve_bands(std::size_t count);
    virtual void store_band(std::size_t slot);
    virtual void load_band(std::size_t slot);

    // Checkpoints of the whole state, for checkpointing migration (memory_plan.h):
    // reserve_states(count) makes slots 0..count-1 of state_bytes() each (contents
    // undefined until stored); store_state(slot) copies the current state there (both
    // time levels on the padded grid, and any C-PML memory); load_state(slot) makes it
    // the current state again, bit for bit, so the steps after it repeat exactly the
    // ones that followed store_state.
    virtual std::size_t state_bytes() const { unsupported("state_bytes"); }
    virtual void reserve_states(std::size_t count) { unsupported("reserve_states"); }
    virtual void store_state(std::size_t slot) { unsupported("store_state"); }
    virtual void load_state(std::size_t slot) { unsupported("load_state"); }

    // Seconds spent in time steps since construction: on the CPU the steps' wall time,
    // on a GPU the device time between events around each step's launches (the
    // "propagation time" of the commands' summaries; waits for the queued steps).
    virtual double busy_seconds() const = 0;

    virtual std::string name() const = 0;

    // --- For z-slabs (propagation/slab_propagator.h) ---
    // The current wavefield's padded planes iz0 .. iz0 + count - 1 (computed-plane
    // numbers, -R .. nz + R - 1 with the halo) of every member, member after member, in
    // the propagation's precision: plane_bytes() bytes a plane. What a slab sends its
    // neighbours (its edge planes) and receives from them (into its halo).
    virtual std::size_t plane_bytes() const { unsupported("plane_bytes"); }
    virtual void copy_planes_out(int iz0, int count, void* dst) const { unsupported("copy_planes_out"); }
    virtual void copy_planes_in(int iz0, int count, const void* src) { unsupported("copy_planes_in"); }
    // A two-pass step (TTI: pass 1 writes the fluxes that pass 2 differentiates, across
    // the planes too): the planes of the pass-1 output of the member whose pass 1 just
    // ran (each intermediate field that pass 2 reads across z, one after another), which a slab's
    // neighbours need in their ghost planes before pass 2; set_between_passes(f) has
    // step() call f(member) there, for the caller's exchange. intermediate_plane_bytes()
    // is 0 for a one-pass step (nothing to exchange within a step).
    virtual std::size_t intermediate_plane_bytes() const { return 0; }
    virtual void copy_intermediate_out(int iz0, int count, void* dst) const { unsupported("copy_intermediate_out"); }
    virtual void copy_intermediate_in(int iz0, int count, const void* src) { unsupported("copy_intermediate_in"); }
    virtual void set_between_passes(std::function<void(int member)> between) { unsupported("set_between_passes"); }
    // Collective over `group` (rank r: slab r, depth order), called before set_sources:
    // true when this propagator then keeps its ghost planes fresh itself, in every
    // step() (its edge planes sent to the neighbours while the interior computes); after
    // anything else that changes the current wavefield the caller still exchanges
    // through copy_planes_out/in. False (on every rank alike) where it cannot.
    virtual bool exchange_in_step(const parallel::World& group) { return false; }
    // For z-slabs: the current wavefields' planes before the window's first and after its
    // last (`before`, `after` of them: the ghost planes, which the caller keeps fresh)
    // hold the field beyond the window, so that correlate's derivatives read them, not
    // zero. False where this backend does not (the caller differentiates on the host).
    virtual bool window_continues(int before, int after) { return false; }

    // Snapshots and cross-correlation kept where the wavefields live (device memory on
    // a GPU), so migration moves no wavefield to the host while it runs:
    // keep() stores the current wavefield of every member (in the propagation's precision, or in
    // bfloat16: 8 bits of mantissa, float's range) and returns its slot (slots count from
    // 0 in order; all of one kind); recall(slot) makes a stored wavefield the current one
    // (previous: the previous one, which inverse scattering reads as u_s').
    virtual std::size_t keep(bool bf16) { unsupported("keep"); }
    // How many keep() calls will follow (a capacity hint, as std::vector::reserve: the
    // CPU backend then fills one allocation instead of copying its store at each growth).
    virtual void reserve_kept(std::size_t count, bool bf16) {}
    // Takes now, before the source pass fills the memory with what it keeps, what
    // correlate(condition) will need besides: the image and illumination, and for the
    // VTI/TTI born adjoint the source's diag(H, V) and its fluxes on the window (a GPU's
    // device memory; the memory plan counts it: MemoryNeeds::window_scratch).
    virtual void reserve_imaging(ImagingCondition condition) {}
    virtual void recall(std::size_t slot, bool previous = false) { unsupported("recall"); }
    // Forgets the kept wavefields (keep() counts from slot 0 again); their memory stays
    // for the next keep() calls (a propagator kept for the next shot, WindowCache), until
    // the propagator goes.
    virtual void clear_kept() { unsupported("clear_kept"); }
    // image += w * I, illumination += w * u_s^2 on the window, with u_s the source's
    // current wavefield and u this propagator's (source: same backend, precision and
    // batch; member m's image from member m of both):
    //   CrossCorrelation:  I = u_s u
    //   InverseScattering: I = (u_s - u_s') (u - u') / (dt^2 v^2) - grad u_s . grad u,
    //                      u_s' and u' the previous wavefields (both rates at t + dt/2,
    //                      both negated: their product is the rate product)
    //   BornAdjoint:       I = -v^2 Lap(u_s) u; VTI/TTI: -v^2 (H p_s . p + V q_s . q) on
    //                      both fields (docs/anisotropy.md "Born modelling and its adjoint")
    // Derivatives with imaging::field_ops' 8th-order stencils, zero outside the window.
    virtual void correlate(const Propagator& source, double w,
                           ImagingCondition condition = ImagingCondition::CrossCorrelation) {
        unsupported("correlate");
    }
    // The accumulated image and illumination (window nodes, member after member); zeroed by reset().
    virtual std::vector<double> correlation(bool illumination) const { unsupported("correlation"); }
    // The same, each member's window alone (a batch's images to the host without a copy
    // of them all: 45 2D shots' are 462 MB), in arrays first written (and their pages
    // first touched) by the copy that fills them, on every core: a 3D shot's image and
    // illumination, zeroed by one thread first, took 0.14 s of the host between its steps
    // and the next shot's (768 MB; H200 host, 2026-11-24).
    virtual std::vector<UninitVector<double>> member_correlations(bool illumination) const {
        unsupported("member_correlations");
    }

protected:
    explicit Propagator(int batch = 1);
    [[noreturn]] void unsupported(const char* what) const;
    // Throws unless `source` carries as many members as this propagator (correlate).
    void require_same_batch(const Propagator& source) const;
    // set_born_perturbation's values and window (add_born_source; throws when none was set).
    const std::vector<double>& born_perturbation() const;
    const Grid& born_window() const { return born_window_; }

private:
    int batch_ = 1;
    std::unique_ptr<float[]> band_history_;  // for the default band history
    std::size_t band_slots_ = 0;
    std::vector<double> born_dm_v2_;  // set_born_perturbation
    Grid born_window_;
};

// Member m's stencil in a batch's stacked arrays.
PointStencil member_stencil(PointStencil s, const kernels::Box& box, int m);

std::unique_ptr<Propagator> make_cpu_propagator(const Domain& domain, Precision precision, int batch = 1);

}  // namespace rtm
