#pragma once
// Helpers for the io tests: small volumes and gathers with known contents, and
// segyio-based edits of written files (reordering traces, patching header fields)
// to build unsorted or broken input. The edits go through segyio's own functions so
// the bytes are right; only the tests do this.
#include <segyio/segy.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/grid.h"
#include "core/survey.h"
#include "support/catch.hpp"
#include "support/test_data.h"

#ifdef RTM_CATCH3
using Catch::Approx;
#endif

namespace rtm::test {

// A volume whose every sample is distinct, so a misplaced trace shows.
inline Volume numbered_volume(const Grid& g) {
    Volume v(g);
    for (int iz = 0; iz < g.nz; ++iz)
        for (int iy = 0; iy < g.ny; ++iy)
            for (int ix = 0; ix < g.nx; ++ix) v.at(ix, iy, iz) = 1500.f + ix + 100.f * iy + 0.25f * iz;
    return v;
}

// A frame with its x axis 30 degrees counter-clockwise from world X, far from 0
// as UTM coordinates are.
inline Frame rotated_frame(double degrees = 30) {
    const double a = degrees * std::acos(-1.0) / 180;
    Frame f;
    f.ox = 612345.67;
    f.oy = 6074321.09;
    f.exx = std::cos(a), f.exy = std::sin(a);
    f.eyx = -std::sin(a), f.eyy = std::cos(a);
    return f;
}

// ---- segyio-based edits

struct SegyHandle {
    segy_file* fp = nullptr;
    char bin[SEGY_BINARY_HEADER_SIZE] = {};
    long trace0 = 0;
    int trsize = 0, traces = 0;
    SegyHandle(const std::string& path, const char* mode) {
        fp = segy_open(path.c_str(), mode);
        REQUIRE(fp);
        REQUIRE(segy_binheader(fp, bin) == SEGY_OK);
        trace0 = segy_trace0(bin);
        // Told the format, segyio moves traces in samples of its size (else 4-byte words).
        REQUIRE(segy_set_format(fp, segy_format(bin)) == SEGY_OK);
        trsize = segy_trsize(segy_format(bin), segy_samples(bin));
        REQUIRE(segy_traces(fp, &traces, trace0, trsize) == SEGY_OK);
    }
    ~SegyHandle() { segy_close(fp); }
    SegyHandle(const SegyHandle&) = delete;
    SegyHandle& operator=(const SegyHandle&) = delete;
};

// Writes dst with the traces of src in the given order (indices into src; a trace may
// be left out), headers and samples copied unchanged.
inline void copy_traces(const std::string& src, const std::string& dst, const std::vector<int>& order) {
    SegyHandle in(src, "rb");
    segy_file* out = segy_open(dst.c_str(), "w+b");
    REQUIRE(out);
    std::vector<char> text(SEGY_TEXT_HEADER_SIZE + 1), header(SEGY_TRACE_HEADER_SIZE), data(in.trsize);
    REQUIRE(segy_read_textheader(in.fp, text.data()) == SEGY_OK);
    REQUIRE(segy_write_textheader(out, 0, text.data()) == SEGY_OK);
    REQUIRE(segy_write_binheader(out, in.bin) == SEGY_OK);
    for (std::size_t k = 0; k < order.size(); ++k) {
        REQUIRE(segy_traceheader(in.fp, order[k], header.data(), in.trace0, in.trsize) == SEGY_OK);
        REQUIRE(segy_readtrace(in.fp, order[k], data.data(), in.trace0, in.trsize) == SEGY_OK);
        REQUIRE(segy_write_traceheader(out, int(k), header.data(), in.trace0, in.trsize) == SEGY_OK);
        REQUIRE(segy_writetrace(out, int(k), data.data(), in.trace0, in.trsize) == SEGY_OK);
    }
    REQUIRE(segy_close(out) == SEGY_OK);
}

inline std::int32_t trace_field(const std::string& path, int trace, int byte) {
    SegyHandle f(path, "rb");
    char header[SEGY_TRACE_HEADER_SIZE];
    REQUIRE(segy_traceheader(f.fp, trace, header, f.trace0, f.trsize) == SEGY_OK);
    std::int32_t v = 0;
    REQUIRE(segy_get_field(header, byte, &v) == SEGY_OK);
    return v;
}

// Sets one field of one trace header (trace < 0: of every trace).
inline void set_trace_field(const std::string& path, int trace, int byte, std::int32_t value) {
    SegyHandle f(path, "r+b");
    char header[SEGY_TRACE_HEADER_SIZE];
    for (int i = trace < 0 ? 0 : trace; i < (trace < 0 ? f.traces : trace + 1); ++i) {
        REQUIRE(segy_traceheader(f.fp, i, header, f.trace0, f.trsize) == SEGY_OK);
        REQUIRE(segy_set_field(header, byte, value) == SEGY_OK);
        REQUIRE(segy_write_traceheader(f.fp, i, header, f.trace0, f.trsize) == SEGY_OK);
    }
}

inline void set_binary_field(const std::string& path, int byte, std::int32_t value) {
    SegyHandle f(path, "r+b");
    REQUIRE(segy_set_bfield(f.bin, byte, value) == SEGY_OK);
    REQUIRE(segy_write_binheader(f.fp, f.bin) == SEGY_OK);
}

// Writes dst: src (an IEEE float file) with its samples in another SEG-Y format, each
// round((value - offset) * scale) (exact in every format for the values the tests use),
// encoded by segyio; headers copied, the binary header's format changed.
inline void rewrite_in_format(const std::string& src, const std::string& dst, int format, float offset, float scale) {
    SegyHandle in(src, "rb");
    const int n = segy_samples(in.bin);
    char bin[SEGY_BINARY_HEADER_SIZE];
    std::memcpy(bin, in.bin, sizeof bin);
    REQUIRE(segy_set_bfield(bin, SEGY_BIN_FORMAT, format) == SEGY_OK);
    segy_file* out = segy_open(dst.c_str(), "w+b");
    REQUIRE(out);
    REQUIRE(segy_set_format(out, format) == SEGY_OK);
    const int out_size = segy_trsize(format, n);
    std::vector<char> text(SEGY_TEXT_HEADER_SIZE + 1), header(SEGY_TRACE_HEADER_SIZE), raw(in.trsize),
        coded(std::size_t(out_size) + 8);
    REQUIRE(segy_read_textheader(in.fp, text.data()) == SEGY_OK);
    REQUIRE(segy_write_textheader(out, 0, text.data()) == SEGY_OK);
    REQUIRE(segy_write_binheader(out, bin) == SEGY_OK);
    for (int i = 0; i < in.traces; ++i) {
        REQUIRE(segy_traceheader(in.fp, i, header.data(), in.trace0, in.trsize) == SEGY_OK);
        REQUIRE(segy_readtrace(in.fp, i, raw.data(), in.trace0, in.trsize) == SEGY_OK);
        REQUIRE(segy_to_native(SEGY_IEEE_FLOAT_4_BYTE, n, raw.data()) == SEGY_OK);
        for (int k = 0; k < n; ++k) {
            float v;
            std::memcpy(&v, raw.data() + 4 * k, 4);
            const long q = std::lround((v - offset) * scale);
            if (format == SEGY_SIGNED_INTEGER_4_BYTE) { const std::int32_t x = std::int32_t(q); std::memcpy(&coded[4 * k], &x, 4); }
            else if (format == SEGY_SIGNED_SHORT_2_BYTE) { const std::int16_t x = std::int16_t(q); std::memcpy(&coded[2 * k], &x, 2); }
            else if (format == SEGY_SIGNED_CHAR_1_BYTE) coded[k] = char(static_cast<signed char>(q));
            else { const float x = float(q); std::memcpy(&coded[4 * k], &x, 4); }  // IBM: from native float
        }
        REQUIRE(segy_from_native(format, n, coded.data()) == SEGY_OK);
        REQUIRE(segy_write_traceheader(out, i, header.data(), in.trace0, out_size) == SEGY_OK);
        REQUIRE(segy_writetrace(out, i, coded.data(), in.trace0, out_size) == SEGY_OK);
    }
    segy_close(out);
}

}  // namespace rtm::test
