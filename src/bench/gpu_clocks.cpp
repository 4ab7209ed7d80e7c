#include "bench/gpu_clocks.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace rtm::bench {

namespace {

// NVML's C interface, the few calls used, as nvml.h declares them (the header ships in a
// CUDA package this project does not install; the library is the driver's, opened at run
// time, so that rtm starts where there is none). Every call returns 0 on success.
using Device = struct NvmlDevice*;
constexpr int kClockSm = 1;  // NVML_CLOCK_SM
// nvmlClocksEventReasons (nvmlClocksThrottleReasons before R535): the bits that lower clocks.
constexpr unsigned long long kSwPowerCap = 0x4, kHwSlowdown = 0x8, kSwThermal = 0x20, kHwThermal = 0x40,
                             kHwPowerBrake = 0x80;

struct Nvml {
    int (*init)() = nullptr;
    int (*by_pci)(const char*, Device*) = nullptr;
    int (*clock)(Device, int, unsigned*) = nullptr;
    int (*max_clock)(Device, int, unsigned*) = nullptr;
    int (*power)(Device, unsigned*) = nullptr;
    int (*limit)(Device, unsigned*) = nullptr;
    int (*reasons)(Device, unsigned long long*) = nullptr;
    std::string why;  // empty: usable

    static const Nvml& get() {
        static const Nvml n = [] {
            Nvml x;
            void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
            if (!lib) {
                x.why = "no NVML (libnvidia-ml.so.1 not found)";
                return x;
            }
            auto sym = [&](auto& fn, const char* name) { fn = reinterpret_cast<std::decay_t<decltype(fn)>>(dlsym(lib, name)); };
            sym(x.init, "nvmlInit_v2");
            sym(x.by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
            sym(x.clock, "nvmlDeviceGetClockInfo");
            sym(x.max_clock, "nvmlDeviceGetMaxClockInfo");
            sym(x.power, "nvmlDeviceGetPowerUsage");
            sym(x.limit, "nvmlDeviceGetEnforcedPowerLimit");
            sym(x.reasons, "nvmlDeviceGetCurrentClocksEventReasons");
            if (!x.reasons) sym(x.reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
            if (!x.init || !x.by_pci || !x.clock || !x.max_clock || !x.power || !x.limit || !x.reasons)
                x.why = "NVML lacks a call the bench reads";
            else if (x.init() != 0)
                x.why = "NVML did not initialise";
            return x;
        }();
        return n;
    }
};

struct Sample {
    unsigned sm_mhz = 0, power_mw = 0;
    unsigned long long reasons = 0;
};

}  // namespace

struct GpuSampler::Impl {
    std::atomic<bool> done{false};
    std::vector<Sample> samples;
    Device dev = nullptr;
    unsigned max_mhz = 0, limit_mw = 0;
    std::string why;
    std::thread t;
};

GpuSampler::GpuSampler() : impl_(std::make_unique<Impl>()) {
    const Nvml& n = Nvml::get();
    Impl& m = *impl_;
    m.why = n.why;
    if (!m.why.empty()) return;
    int cuda_dev = 0;
    char bus[32] = "";
    if (cudaGetDevice(&cuda_dev) != cudaSuccess || cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_dev) != cudaSuccess ||
        n.by_pci(bus, &m.dev) != 0) {
        m.why = "NVML does not know this CUDA device";
        return;
    }
    if (n.max_clock(m.dev, kClockSm, &m.max_mhz) != 0 || n.limit(m.dev, &m.limit_mw) != 0) {
        m.why = "NVML gives no clock or power limit for this device";
        return;
    }
    m.t = std::thread([&m, &n] {
        while (!m.done.load()) {
            Sample s;
            if (n.clock(m.dev, kClockSm, &s.sm_mhz) == 0 && n.power(m.dev, &s.power_mw) == 0 &&
                n.reasons(m.dev, &s.reasons) == 0)
                m.samples.push_back(s);
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    });
}

GpuSampler::~GpuSampler() { stop(); }

GpuConditions GpuSampler::stop() {
    Impl& m = *impl_;
    m.done = true;
    if (m.t.joinable()) m.t.join();
    GpuConditions c;
    c.samples = int(m.samples.size());
    if (m.samples.empty()) {
        c.unread = m.why.empty() ? "no sample taken" : m.why;
        return c;
    }
    c.read = true;
    c.max_sm_mhz = m.max_mhz;
    c.power_limit_w = m.limit_mw * 1e-3;
    for (const Sample& s : m.samples) {
        c.sm_mhz += s.sm_mhz;
        c.power_w += s.power_mw * 1e-3;
        // (HW slowdown: power or heat, the driver does not say which; counted with power.)
        c.capped_share += (s.reasons & (kSwPowerCap | kHwPowerBrake | kHwSlowdown)) ? 1 : 0;
        c.thermal_share += (s.reasons & (kSwThermal | kHwThermal)) ? 1 : 0;
    }
    for (double* v : {&c.sm_mhz, &c.power_w, &c.capped_share, &c.thermal_share}) *v /= c.samples;
    return c;
}

}  // namespace rtm::bench
