// The CUDA backend: padded arrays in device memory, kernels/cuda for the step; the
// same step order as CpuPropagator (record u[n] at the receivers, step, inject s[n]
// with weight * vdt2 / cell volume (/ (1 + k) in a damping layer), swap). Receiver
// traces stay on the device for the whole run (time-major, one row per step) and come
// back on request. Migration operations: previous wavefield, volume sources (add_field),
// time reversal, and the edge band's save/restore through a device gather/scatter.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <utility>

#include "core/error.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/step_cuda.h"
#include "propagation/backend.h"

namespace rtm {

namespace kc = kernels::cuda;

bool cuda_device_available(std::string* description) {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        if (description)
            *description = e != cudaSuccess ? std::string("no CUDA device (") + cudaGetErrorString(e) + ")"
                                            : std::string("no CUDA device found");
        cudaGetLastError();  // clear the sticky-free error state of the failed query
        return false;
    }
    int dev = 0;
    cudaDeviceProp p{};
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&p, dev) != cudaSuccess) {
        if (description) *description = "CUDA device present but its properties could not be read";
        cudaGetLastError();
        return false;
    }
    if (description) {
        char buf[256];
        std::snprintf(buf, sizeof buf, "GPU %d: %s (%.1f GiB, %d SMs, compute capability %d.%d)", dev, p.name,
                      p.totalGlobalMem / double(1 << 30), p.multiProcessorCount, p.major, p.minor);
        *description = buf;
    }
    return true;
}

namespace {

template <class T>
class CudaPropagator final : public Propagator {
public:
    explicit CudaPropagator(const Domain& d) : d_(d), box_(d.box()) {
        const std::size_t n = box_.padded_size();
        const bool cpml = d.options().boundary == Boundary::Cpml;
        int axes = 0;
        for (int ax = 0; ax < 3; ++ax)
            if (cpml && (box_.pml_lo[ax] || box_.pml_hi[ax])) ++axes;
        require_memory(n * sizeof(T) * (3 + 2 * std::size_t(axes) + (d.damping().empty() ? 0 : 1)),
                       cpml ? "wavefields, (v dt)^2 and C-PML memory" : "wavefields, (v dt)^2 and damping");

        // Kernel variant: the library default, or RTM_CUDA_VARIANT (tuning, rtm bench).
        if (const char* v = std::getenv("RTM_CUDA_VARIANT")) cfg_.variant = kc::parse_variant(v);
        if (const char* v = std::getenv("RTM_CUDA_SPLIT")) cfg_.split = std::string(v) != "0";
        RTM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
        u_.resize(n);
        w_.resize(n);
        u_.zero(stream_);
        w_.zero(stream_);
        vdt2_host_.assign(d.vdt2().begin(), d.vdt2().end());
        vdt2_.upload(vdt2_host_);
        const double h[3] = {d.window().dx, d.window().dy, d.window().dz};
        for (int ax = 0; ax < 3; ++ax) {
            const bool used = box_.ndim == 3 || ax != 1;
            args_.inv_h2[ax] = used ? T(1 / (h[ax] * h[ax])) : T(0);
            args_.inv_h[ax] = used ? T(1 / h[ax]) : T(0);
            if (cpml && (box_.pml_lo[ax] || box_.pml_hi[ax])) {
                a_[ax].upload(std::vector<T>(d.profile(ax).a.begin(), d.profile(ax).a.end()));
                b_[ax].upload(std::vector<T>(d.profile(ax).b.begin(), d.profile(ax).b.end()));
                psi_[ax].resize(n);
                zeta_[ax].resize(n);
                psi_[ax].zero(stream_);
                zeta_[ax].zero(stream_);
            }
        }
        if (!d.damping().empty()) {
            damp_.upload(std::vector<T>(d.damping().begin(), d.damping().end()));
            args_.damp = damp_.data();
        }
        args_.box = box_;
        args_.vdt2 = vdt2_.data();
        for (int ax = 0; ax < 3; ++ax) {
            args_.a[ax] = a_[ax].empty() ? nullptr : a_[ax].data();
            args_.b[ax] = b_[ax].empty() ? nullptr : b_[ax].data();
            args_.psi[ax] = psi_[ax].empty() ? nullptr : psi_[ax].data();
            args_.zeta[ax] = zeta_[ax].empty() ? nullptr : zeta_[ax].data();
        }
        RTM_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }

    ~CudaPropagator() override {
        if (stream_) cudaStreamDestroy(stream_);
    }

    void set_sources(const std::vector<PointStencil>& where,
                     const std::vector<std::vector<double>>& traces) override {
        // Taps of all sources in one list; coef = vdt2 * weight / cell volume as the CPU
        // computes it (vdt2 in T, the rest in double).
        std::vector<long> idx;
        std::vector<int> src;
        std::vector<double> coef;
        const double inv_vol = 1.0 / d_.cell_volume();
        src_nt_ = 0;
        for (const auto& t : traces) src_nt_ = std::max(src_nt_, int(t.size()));
        for (std::size_t i = 0; i < where.size(); ++i)
            for (std::size_t k = 0; k < where[i].index.size(); ++k) {
                const long p = where[i].index[k];
                idx.push_back(p);
                src.push_back(int(i));
                coef.push_back(injection(p) * where[i].weight[k] * inv_vol);
            }
        std::vector<double> tr(where.size() * std::size_t(src_nt_), 0.0);
        for (std::size_t i = 0; i < where.size() && i < traces.size(); ++i)
            std::copy(traces[i].begin(), traces[i].end(), tr.begin() + i * src_nt_);
        require_memory(tr.size() * 8 + idx.size() * 20, "source traces");
        src_idx_.upload(idx);
        src_of_.upload(src);
        src_coef_.upload(coef);
        src_tr_.upload(tr);
    }

    void set_receivers(const std::vector<PointStencil>& where, int nt) override {
        std::vector<int> off{0};
        std::vector<long> idx;
        std::vector<double> wgt;
        for (const auto& r : where) {
            idx.insert(idx.end(), r.index.begin(), r.index.end());
            wgt.insert(wgt.end(), r.weight.begin(), r.weight.end());
            off.push_back(int(idx.size()));
        }
        nrec_ = int(where.size());
        nt_ = nt;
        require_memory(std::size_t(nrec_) * nt * sizeof(T) + idx.size() * 16, "receiver traces");
        rec_off_.upload(off);
        rec_idx_.upload(idx);
        rec_w_.upload(wgt);
        rec_tr_.resize(std::size_t(nrec_) * nt);
        rec_tr_.zero(stream_);
    }

    void reset() override {
        u_.zero(stream_);
        w_.zero(stream_);
        for (int ax = 0; ax < 3; ++ax) {
            psi_[ax].zero(stream_);
            zeta_[ax].zero(stream_);
        }
        rec_tr_.zero(stream_);
        RTM_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }

    void step(int n) override {
        if (nrec_ > 0 && n >= 0 && n < nt_)
            kc::sample_cuda(u_.data(), nrec_, rec_off_.data(), rec_idx_.data(), rec_w_.data(), rec_tr_.data(), n,
                            stream_);
        args_.u = u_.data();
        args_.w = w_.data();
        kc::step_cuda(args_, cfg_, stream_);
        kc::inject_cuda(w_.data(), int(src_idx_.size()), src_idx_.data(), src_of_.data(), src_coef_.data(),
                        src_tr_.data(), src_nt_, n, stream_);
        std::swap(u_, w_);
    }

    std::vector<double> receiver_traces() const override {
        RTM_CUDA_CHECK(cudaStreamSynchronize(stream_));
        const auto t = rec_tr_.download();  // nt x nrec
        std::vector<double> out(t.size());
        for (int n = 0; n < nt_; ++n)
            for (int r = 0; r < nrec_; ++r) out[std::size_t(r) * nt_ + n] = double(t[std::size_t(n) * nrec_ + r]);
        return out;
    }

    std::vector<double> wavefield() const override { return window_of(u_); }
    std::vector<double> previous_wavefield() const override { return window_of(w_); }

    // u += injection * f on the window's nodes (f there, x fastest), on the stream after
    // the step just queued: f goes up as T (converted here), the product is taken in
    // double as the CPU does.
    void add_field(const std::vector<double>& f) override {
        const Grid& g = d_.window();
        if (f.size() != g.size())
            fail("add_field", "the field has " + std::to_string(f.size()) + " values but the window " +
                                  std::to_string(g.size()) + " nodes");
        if (inj_.empty()) {  // injection coefficient per window node, once
            std::vector<T> c(g.size());
            for (int iz = 0; iz < g.nz; ++iz)
                for (int iy = 0; iy < g.ny; ++iy)
                    for (int ix = 0; ix < g.nx; ++ix) c[g.index(ix, iy, iz)] = T(injection(d_.index(ix, iy, iz)));
            inj_.upload(c);
            field_.resize(g.size());
        }
        field_host_.resize(g.size());
        for (std::size_t i = 0; i < f.size(); ++i) field_host_[i] = T(f[i]);
        // Pageable source: the copy is staged before it returns, so field_host_ may change after.
        RTM_CUDA_CHECK(cudaMemcpyAsync(field_.data(), field_host_.data(), f.size() * sizeof(T),
                                       cudaMemcpyHostToDevice, stream_));
        kc::add_window_cuda(box_, window_origin(), g.nx, g.ny, g.nz, inj_.data(), field_.data(), u_.data(), stream_);
    }

    void reverse_time() override { std::swap(u_, w_); }

    std::size_t band_size() const override { return d_.band().size(); }

    // The band is saved every step of a run: a gather into a device staging buffer and
    // one copy to the caller's (pageable) memory. Pinned host buffers with asynchronous
    // copies on a second stream would overlap this with the next step's kernel.
    void save_band(float* dst) const override {
        prepare_band();
        const std::size_t nb = band_idx_.size();
        if (!nb) return;
        kc::gather_cuda(u_.data(), band_idx_.data(), nb, band_buf_.data(), stream_);
        RTM_CUDA_CHECK(cudaMemcpyAsync(dst, band_buf_.data(), nb * sizeof(float), cudaMemcpyDeviceToHost, stream_));
        RTM_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }
    void restore_band(const float* src) override {
        prepare_band();
        const std::size_t nb = band_idx_.size();
        if (!nb) return;
        RTM_CUDA_CHECK(cudaMemcpyAsync(band_buf_.data(), src, nb * sizeof(float), cudaMemcpyHostToDevice, stream_));
        kc::scatter_cuda(band_buf_.data(), band_idx_.data(), nb, u_.data(), stream_);
    }

    std::string name() const override { return sizeof(T) == 4 ? "cuda (fp32)" : "cuda (fp64)"; }
    const char* variant() const { return kc::variant_name(cfg_.variant); }

private:
    std::vector<double> window_of(const kc::DeviceBuffer<T>& f) const {
        RTM_CUDA_CHECK(cudaStreamSynchronize(stream_));
        const auto u = f.download();
        const Grid& g = d_.window();
        std::vector<double> out(g.size());
        for (int iz = 0; iz < g.nz; ++iz)
            for (int iy = 0; iy < g.ny; ++iy)
                for (int ix = 0; ix < g.nx; ++ix) out[g.index(ix, iy, iz)] = double(u[d_.index(ix, iy, iz)]);
        return out;
    }

    // What a unit source density adds to u[n+1] at padded point p: (v dt)^2, over 1 + k
    // in a damping layer (the damped update divides its whole right side), as the CPU.
    double injection(long p) const {
        const double v = d_.vdt2()[p];
        return d_.damping().empty() ? v : v / (1 + d_.damping()[p]);
    }

    // Computed-point coordinates of window node (0, 0, 0).
    kc::Index3 window_origin() const { return {box_.pml_lo[0], box_.pml_lo[1], box_.pml_lo[2]}; }

    // Band indices go to the device on first use (8 B per band node).
    void prepare_band() const {
        if (band_ready_) return;
        const auto& b = d_.band();
        require_memory(b.size() * (sizeof(long) + sizeof(float)), "edge band (indices and staging)");
        band_idx_.upload(b);
        band_buf_.resize(b.size());
        band_ready_ = true;
    }

    // A clear error, with the sizes, when an allocation would not fit.
    void require_memory(std::size_t bytes, const char* what) const {
        std::size_t free_b = 0, total_b = 0;
        RTM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
        if (bytes + (64u << 20) > free_b) {
            std::ostringstream os;
            os.precision(3);
            os << "the " << what << " of this domain (" << box_.nx << " x " << box_.ny << " x " << box_.nz
               << " points with absorbing layers, " << (sizeof(T) == 4 ? "fp32" : "fp64") << ") need "
               << bytes / double(1 << 30) << " GiB but the GPU has " << free_b / double(1 << 30) << " GiB free of "
               << total_b / double(1 << 30) << " GiB";
            fail("GPU memory", os.str(), "Use a smaller window or aperture, coarser grid, fp32, or --device cpu");
        }
    }

    const Domain& d_;
    kernels::Box box_;
    kernels::StepArgs<T> args_;
    kc::LaunchConfig cfg_;
    cudaStream_t stream_ = nullptr;
    std::vector<T> vdt2_host_;
    kc::DeviceBuffer<T> u_, w_, vdt2_, damp_, a_[3], b_[3], psi_[3], zeta_[3];
    kc::DeviceBuffer<T> inj_, field_;  // add_field: coefficients and the field, window nodes
    std::vector<T> field_host_;
    mutable kc::DeviceBuffer<long> band_idx_;
    mutable kc::DeviceBuffer<float> band_buf_;
    mutable bool band_ready_ = false;
    kc::DeviceBuffer<long> src_idx_, rec_idx_;
    kc::DeviceBuffer<int> src_of_, rec_off_;
    kc::DeviceBuffer<double> src_coef_, src_tr_, rec_w_;
    kc::DeviceBuffer<T> rec_tr_;
    int src_nt_ = 0, nrec_ = 0, nt_ = 0;
};

}  // namespace

std::unique_ptr<Propagator> make_cuda_propagator(const Domain& domain, Precision precision) {
    std::string why;
    if (!cuda_device_available(&why)) fail("option --device gpu", why, "Use --device cpu or auto");
    if (precision == Precision::Double) return std::make_unique<CudaPropagator<double>>(domain);
    return std::make_unique<CudaPropagator<float>>(domain);
}

}  // namespace rtm
