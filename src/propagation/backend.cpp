#include "propagation/backend.h"

#include <algorithm>
#include <cmath>
#include <future>

#include "core/error.h"
#include "core/threads.h"
#include "imaging/field_ops.h"
#include "parallel/world.h"
#include "propagation/slab_propagator.h"

namespace rtm {

Propagator::Propagator(int batch) : batch_(batch) {
    if (batch < 1) fail("propagator", "a batch of " + std::to_string(batch) + " members", "Ask for at least one");
}

void Propagator::require_same_batch(const Propagator& source) const {
    if (source.batch() != batch_)
        fail("correlate", "the source propagator carries a batch of " + std::to_string(source.batch()) +
                              " but this one " + std::to_string(batch_),
             "Make both propagators of a migration with the same batch");
}

bool Propagator::finite() const {
    for (double x : wavefield())
        if (!std::isfinite(x)) return false;
    return true;
}

PointStencil member_stencil(PointStencil s, const kernels::Box& box, int m) {
    for (auto& i : s.index) i += long(m) * long(box.padded_size());
    return s;
}

void Propagator::unsupported(const char* what) const {
    fail("backend " + name(), std::string("does not implement ") + what + ", which this run needs",
         "Use --propagation.device cpu");
}

void Propagator::set_born_perturbation(const Grid& window, std::vector<double> dm_v2) {
    const std::size_t expected = window.size() * std::size_t(batch());
    if (dm_v2.size() != expected)
        fail("set_born_perturbation", "the perturbation has " + std::to_string(dm_v2.size()) +
                                          " values but the window " + std::to_string(expected) +
                                          (batch() > 1 ? " (all members)" : ""));
    born_window_ = window;
    born_dm_v2_ = std::move(dm_v2);
}

const std::vector<double>& Propagator::born_perturbation() const {
    if (born_dm_v2_.empty()) fail("add_born_source", "no perturbation set", "Call set_born_perturbation first");
    return born_dm_v2_;
}

void Propagator::add_born_source(const Propagator& background) {
    require_same_batch(background);
    auto f = background.wavefield();
    const std::vector<double>& dm_v2 = born_perturbation();
    const Grid& g = born_window();
    if (f.size() != dm_v2.size())
        fail("add_born_source", "the perturbation has " + std::to_string(dm_v2.size()) +
                                    " values but the background's window " + std::to_string(f.size()),
             "Give set_born_perturbation the domain's window");
    for (int m = 0; m < batch(); ++m) {
        const auto first = f.begin() + std::ptrdiff_t(m * g.size());
        const auto lap = imaging::laplacian(std::vector<double>(first, first + std::ptrdiff_t(g.size())), g);
        for (std::size_t i = 0; i < g.size(); ++i) first[std::ptrdiff_t(i)] = -dm_v2[m * g.size() + i] * lap[i];
    }
    add_field(f);
}

void Propagator::reserve_bands(std::size_t count) {
    // Not zeroed: every slot is stored before it is loaded.
    band_history_.reset(new float[count * band_size()]);
    band_slots_ = count;
}

void Propagator::store_band(std::size_t slot) {
    if (slot >= band_slots_) fail("store_band", "slot " + std::to_string(slot) + " beyond the " + std::to_string(band_slots_) + " reserved");
    save_band(band_history_.get() + slot * band_size());
}

void Propagator::load_band(std::size_t slot) {
    if (slot >= band_slots_) fail("load_band", "slot " + std::to_string(slot) + " beyond the " + std::to_string(band_slots_) + " reserved");
    restore_band(band_history_.get() + slot * band_size());
}

DeviceChoice parse_device(const std::string& s) {
    if (s == "auto") return DeviceChoice::Auto;
    if (s == "cpu") return DeviceChoice::Cpu;
    if (s == "gpu") return DeviceChoice::Gpu;
    fail_usage("option propagation.device", "unknown device '" + s + "'", "Use auto, cpu or gpu");
}

#ifndef RTM_HAVE_CUDA
bool cuda_device_available(std::string* description, int) {
    if (description) *description = "this rtm was built without CUDA";
    return false;
}
double device_free_bytes() { return 0; }
double device_memory_bandwidth() { return 0; }
std::unique_ptr<Propagator> make_cuda_propagator(const Domain&, Precision, int) {
    fail("option propagation.device", "this rtm was built without CUDA",
         "Rebuild with nvcc on the PATH, or set propagation.device = cpu");
}
#endif

namespace {
std::future<void>& device_started() {
    static std::future<void> started;
    return started;
}
}  // namespace

void start_device(DeviceChoice choice, int node_rank) {
    if (choice == DeviceChoice::Cpu || device_started().valid()) return;
    // (Its answer is choose_backend's to give: a failure here is met there again.)
    device_started() = run_beside(true, 0, [node_rank] { cuda_device_available(nullptr, node_rank); });
}

Backend choose_backend(DeviceChoice choice, int node_rank) {
    if (device_started().valid()) device_started().get();
    Backend b;
    b.choice = choice;
    if (choice == DeviceChoice::Cpu) {
        b.why = "CPU requested (propagation.device = cpu)";
        return b;
    }
    std::string what;
    const bool have = cuda_device_available(&what, node_rank);
    if (choice == DeviceChoice::Gpu && !have)
        fail("option propagation.device = gpu", "no usable GPU: " + what, "Set propagation.device to cpu or auto");
    b.gpu = have;
    b.why = have ? what : "no GPU (" + what + "), using the CPU";
    return b;
}

std::unique_ptr<Propagator> make_propagator(const Domain& domain, Precision precision,
                                            const Backend& backend, int batch) {
    if (backend.group && backend.group->size() > 1) return make_slab_propagator(domain, precision, backend, *backend.group, batch);
    if (backend.gpu) return make_cuda_propagator(domain, precision, batch);
    return make_cpu_propagator(domain, precision, batch);
}

}  // namespace rtm
