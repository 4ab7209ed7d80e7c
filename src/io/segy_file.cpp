#include "io/segy_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "core/error.h"

namespace rtm::io::detail {

std::string num(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.10g", v);
    return buf;
}
std::string upper(std::string s) {
    for (auto& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
    return s;
}
namespace fs = std::filesystem;

namespace {

std::string segyio_error(int err) {
    switch (err) {
        case SEGY_FOPEN_ERROR: return "segyio: cannot open";
        case SEGY_FSEEK_ERROR: return "segyio: seek failed, the file is shorter than its headers claim";
        case SEGY_FREAD_ERROR: return "segyio: read failed, the file is shorter than its headers claim";
        case SEGY_FWRITE_ERROR: return "segyio: write failed (disk full?)";
        case SEGY_INVALID_FIELD: return "segyio: invalid header field";
        case SEGY_TRACE_SIZE_MISMATCH: return "segyio: file size is not a whole number of traces";
        case SEGY_INVALID_ARGS: return "segyio: invalid arguments";
        case SEGY_READONLY: return "segyio: file is read-only";
        default: return "segyio error " + std::to_string(err);
    }
}

bool is_unsigned_count(int byte) {
    return byte == SEGY_TR_SAMPLE_COUNT || byte == SEGY_BIN_SAMPLES || byte == SEGY_BIN_SAMPLES_ORIG;
}

std::int32_t as_unsigned16(int byte, std::int32_t v) {
    return (is_unsigned_count(byte) && v < 0) ? v + 65536 : v;
}

}  // namespace

std::string trace_field_name(int byte) {
    static const std::map<int, const char*> names = {
        {SEGY_TR_SEQ_LINE, "trace sequence number within line"},
        {SEGY_TR_SEQ_FILE, "trace sequence number within file"},
        {SEGY_TR_FIELD_RECORD, "field record number"},
        {SEGY_TR_NUMBER_ORIG_FIELD, "channel (trace number within field record)"},
        {SEGY_TR_ENSEMBLE, "CDP number"},
        {SEGY_TR_TRACE_ID, "trace identification code"},
        {SEGY_TR_OFFSET, "offset"},
        {SEGY_TR_RECV_GROUP_ELEV, "group elevation"},
        {SEGY_TR_SOURCE_DEPTH, "source depth"},
        {SEGY_TR_ELEV_SCALAR, "elevation scalar"},
        {SEGY_TR_SOURCE_GROUP_SCALAR, "coordinate scalar"},
        {SEGY_TR_SOURCE_X, "source X"},
        {SEGY_TR_SOURCE_Y, "source Y"},
        {SEGY_TR_GROUP_X, "group X"},
        {SEGY_TR_GROUP_Y, "group Y"},
        {SEGY_TR_DELAY_REC_TIME, "delay recording time"},
        {SEGY_TR_SAMPLE_COUNT, "sample count"},
        {SEGY_TR_SAMPLE_INTER, "sample interval"},
        {SEGY_TR_CDP_X, "CDP X"},
        {SEGY_TR_CDP_Y, "CDP Y"},
        {SEGY_TR_INLINE, "inline number"},
        {SEGY_TR_CROSSLINE, "crossline number"},
    };
    const auto it = names.find(byte);
    const std::string name = it != names.end() ? it->second : "field";
    return name + " (trace-header byte " + std::to_string(byte) + ")";
}

std::string binary_field_name(int byte) {
    static const std::map<int, const char*> names = {
        {SEGY_BIN_TRACES, "traces per ensemble"},
        {SEGY_BIN_INTERVAL, "sample interval"},
        {SEGY_BIN_SAMPLES, "sample count"},
        {SEGY_BIN_FORMAT, "sample format code"},
        {SEGY_BIN_SORTING_CODE, "trace sorting code"},
        {SEGY_BIN_MEASUREMENT_SYSTEM, "measurement system"},
        {SEGY_BIN_SEGY_REVISION, "SEG-Y revision"},
        {SEGY_BIN_TRACE_FLAG, "fixed length trace flag"},
        {SEGY_BIN_EXT_HEADERS, "number of extended textual headers"},
    };
    const auto it = names.find(byte);
    const std::string name = it != names.end() ? it->second : "field";
    return name + " (binary-header byte " + std::to_string(byte) + ")";
}

bool is_trace_field(int byte) {
    TraceHeader h;
    std::int32_t v = 0;
    return byte >= 1 && byte <= SEGY_TRACE_HEADER_SIZE &&
           segy_get_field(h.bytes(), byte, &v) == SEGY_OK;
}

bool format_supported(int code) {
    return code == SEGY_IBM_FLOAT_4_BYTE || code == SEGY_SIGNED_INTEGER_4_BYTE ||
           code == SEGY_SIGNED_SHORT_2_BYTE || code == SEGY_IEEE_FLOAT_4_BYTE ||
           code == SEGY_SIGNED_CHAR_1_BYTE;
}

std::string format_name(int code) {
    switch (code) {
        case SEGY_IBM_FLOAT_4_BYTE: return "IBM float";
        case SEGY_SIGNED_INTEGER_4_BYTE: return "int32";
        case SEGY_SIGNED_SHORT_2_BYTE: return "int16";
        case SEGY_FIXED_POINT_WITH_GAIN_4_BYTE: return "fixed point with gain (obsolete)";
        case SEGY_IEEE_FLOAT_4_BYTE: return "IEEE float";
        case SEGY_SIGNED_CHAR_1_BYTE: return "int8";
        default: return "unknown";
    }
}

std::string supported_formats_text() {
    return "1 (IBM float), 2 (int32), 3 (int16), 5 (IEEE float), 8 (int8)";
}

double apply_scalar(std::int32_t value, std::int32_t scalar) {
    if (scalar < 0) return double(value) / -double(scalar);
    if (scalar > 0) return double(value) * scalar;
    return value;
}

// ---------------------------------------------------------------- headers

TraceHeader::TraceHeader() : buf_(SEGY_TRACE_HEADER_SIZE, 0) {}

std::int32_t TraceHeader::get(int byte) const {
    std::int32_t v = 0;
    if (segy_get_field(buf_.data(), byte, &v) != SEGY_OK)
        fail(trace_field_name(byte), "not a trace-header field", "Use the first byte of a field, e.g. 189");
    return as_unsigned16(byte, v);
}

void TraceHeader::set(int byte, std::int64_t value, const std::string& where) {
    if (value < INT32_MIN || value > INT32_MAX || segy_set_field(buf_.data(), byte, std::int32_t(value)) != SEGY_OK ||
        get(byte) != value)
        fail(where, trace_field_name(byte) + " cannot hold " + std::to_string(value),
             "The SEG-Y field is too small for this value (16-bit fields hold -32768..32767)");
}

BinaryHeader::BinaryHeader() : buf_(SEGY_BINARY_HEADER_SIZE, 0) {}

std::int32_t BinaryHeader::get(int byte) const {
    std::int32_t v = 0;
    if (segy_get_bfield(buf_.data(), byte, &v) != SEGY_OK)
        fail(binary_field_name(byte), "not a binary-header field");
    return as_unsigned16(byte, v);
}

void BinaryHeader::set(int byte, std::int64_t value, const std::string& where) {
    if (value < INT32_MIN || value > INT32_MAX || segy_set_bfield(buf_.data(), byte, std::int32_t(value)) != SEGY_OK ||
        get(byte) != value)
        fail(where, binary_field_name(byte) + " cannot hold " + std::to_string(value),
             "The SEG-Y field is too small for this value (16-bit fields hold -32768..32767)");
}

void SegyCloser::operator()(segy_file* fp) const {
    if (fp) segy_close(fp);
}

// ---------------------------------------------------------------- reading

void require_metres(const SegyReader& file) {
    constexpr int kFeet = 2;
    if (file.binary().get(SEGY_BIN_MEASUREMENT_SYSTEM) == kFeet)
        fail(file.path(),
             "its coordinates and depths are in feet (" + binary_field_name(SEGY_BIN_MEASUREMENT_SYSTEM) +
                 " = 2); rtm reads metres (and velocities in m/s)",
             "Convert the file to metres and set byte 3255 to 1");
}

void require_regular_file(const std::string& path) {
    std::error_code ec;
    const fs::file_status st = fs::status(path, ec);  // (follows links)
    if (ec || !fs::exists(st) || fs::is_directory(st) || fs::is_regular_file(st)) return;  // said elsewhere
    const char* kind = fs::is_character_file(st) ? "a character device"
                       : fs::is_block_file(st)   ? "a block device"
                       : fs::is_fifo(st)         ? "a FIFO (named pipe)"
                       : fs::is_socket(st)       ? "a socket"
                                                 : "not a file";
    fail(path, std::string("is not a regular file (it is ") + kind + ")", "Give the path of a .segy/.sgy file");
}

SegyReader::SegyReader(const std::string& path, bool mapped) : path_(path) {
    std::error_code ec;
    if (!fs::exists(path, ec))
        fail(path, "no such file", "Check the path (relative paths start at " + fs::current_path(ec).string() + ")");
    if (fs::is_directory(path, ec)) fail(path, "is a folder, not a SEG-Y file", "Give the path of a .segy/.sgy file");
    require_regular_file(path);
    // Files of other kinds given by mistake (an image.png beside image.sgy, a state.json)
    // are named as what they are, not as SEG-Y with a strange sample format.
    {
        std::ifstream in(path, std::ios::binary);
        char magic[8] = {};
        in.read(magic, sizeof magic);
        const std::string m(magic, sizeof magic);
        const char* kind = m.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0 ? "a PNG image"
                           : m.compare(0, 4, "%PDF") == 0                  ? "a PDF document"
                           : m.compare(0, 2, "\x1f\x8b") == 0              ? "gzip-compressed (unpack it first)"
                           : m.compare(0, 4, "PK\x03\x04") == 0            ? "a zip archive (unpack it first)"
                                                                          : nullptr;
        if (kind) fail(path, std::string("is not a SEG-Y file: it is ") + kind, "Give the path of a .segy/.sgy file");
    }
    const auto size = fs::file_size(path, ec);
    if (ec) fail(path, "unable to get the file size: " + ec.message(), "Check the file's permissions");
    if (size < 3600)
        fail(path, "the file has " + std::to_string(size) + " bytes, fewer than the 3600 bytes of the SEG-Y textual and binary headers",
             "The file is truncated or is not SEG-Y");

    errno = 0;
    fp_.reset(segy_open(path.c_str(), "rb"));
    if (!fp_) fail(path, std::string("unable to open: ") + std::strerror(errno), "Check the file's permissions");
    if (const int err = segy_binheader(fp_.get(), bin_.bytes()); err != SEGY_OK)
        fail(path, "unable to read the binary header (" + segyio_error(err) + ")", "The file is truncated or is not SEG-Y");

    format_ = bin_.get(SEGY_BIN_FORMAT);
    if (!format_supported(format_)) {
        const int swapped = ((format_ & 0xff) << 8) | ((format_ >> 8) & 0xff);
        if (format_supported(swapped))
            fail(path, "sample format code " + std::to_string(format_) + " in " + binary_field_name(SEGY_BIN_FORMAT) +
                           " reads as " + std::to_string(swapped) + " byte-swapped: the file is little-endian",
                 "rtm reads big-endian SEG-Y (the standard byte order); convert the file, e.g. with segyio or SU's segywrite");
        fail(path, "sample format code " + std::to_string(format_) + " (" + format_name(format_) + ") in " +
                       binary_field_name(SEGY_BIN_FORMAT) + " is not supported",
             "rtm reads formats " + supported_formats_text() + "; convert the file or correct byte 3225");
    }

    // segyio reads and writes traces in words of the format's size only once told the
    // format (else 4 bytes: the last int16 or int8 samples of a trace would be lost).
    if (const int err = segy_set_format(fp_.get(), format_); err != SEGY_OK)
        fail(path, "unable to set sample format " + std::to_string(format_) + " (" + segyio_error(err) + ")");

    // SEG-Y revision 2 lets byte 3505 be -1: a variable number of extended textual headers,
    // ended by an "((SEG: EndText))" stanza. segyio (segy_trace0) takes the count as it is
    // and puts the first trace at byte 3600 - 3200 = 400, "outside the file".
    if (bin_.get(SEGY_BIN_EXT_HEADERS) == -1)
        fail(path,
             binary_field_name(SEGY_BIN_EXT_HEADERS) +
                 " = -1: a variable number of extended textual headers ended by an end stanza (SEG-Y revision 2), "
                 "which rtm does not read",
             "Rewrite the file with a fixed count of extended headers (SEG-Y revision 1), e.g. with segyio");
    trace0_ = segy_trace0(bin_.bytes());
    if (trace0_ < 3600 || std::uintmax_t(trace0_) > size)
        fail(path, binary_field_name(SEGY_BIN_EXT_HEADERS) + " = " + std::to_string(bin_.get(SEGY_BIN_EXT_HEADERS)) +
                       " puts the first trace at byte " + std::to_string(trace0_) + ", outside the file of " +
                       std::to_string(size) + " bytes",
             "The file is truncated or the field is wrong");
    if (std::uintmax_t(trace0_) == size) fail(path, "the file holds headers but no traces", "Write traces into it");

    TraceHeader first;
    if (const int err = segy_traceheader(fp_.get(), 0, first.bytes(), trace0_, 0); err != SEGY_OK)
        fail(path, "unable to read trace header 1 (" + segyio_error(err) + ")", "The file is truncated");

    // The sample count: the first candidate that matches the file size.
    const std::pair<int, int> candidates[] = {{SEGY_BIN_SAMPLES, bin_.get(SEGY_BIN_SAMPLES)},
                                              {SEGY_TR_SAMPLE_COUNT, first.get(SEGY_TR_SAMPLE_COUNT)}};
    for (const auto& [byte, n] : candidates) {
        if (n <= 0) continue;
        int count = 0;
        const int bytes = segy_trsize(format_, n);
        if (bytes > 0 && segy_traces(fp_.get(), &count, trace0_, bytes) == SEGY_OK && count > 0) {
            samples_ = n;
            samples_byte_ = byte;
            trace_bytes_ = bytes;
            traces_ = count;
            break;
        }
    }
    if (samples_ == 0) {
        const int nb = bin_.get(SEGY_BIN_SAMPLES), nt = first.get(SEGY_TR_SAMPLE_COUNT);
        if (nb <= 0 && nt <= 0)
            fail(path, "the sample count is zero in both " + binary_field_name(SEGY_BIN_SAMPLES) + " and " +
                           trace_field_name(SEGY_TR_SAMPLE_COUNT) + " of trace 1",
                 "Set the number of samples per trace in the binary header");
        const int n = nb > 0 ? nb : nt;
        const long long per_trace = SEGY_TRACE_HEADER_SIZE + segy_trsize(format_, n);
        const long long body = (long long)size - trace0_;
        fail(path, "the file size (" + std::to_string(size) + " bytes) does not fit its headers: after " +
                       std::to_string(trace0_) + " header bytes, traces of " + std::to_string(per_trace) + " bytes (240 + " +
                       std::to_string(n) + " " + format_name(format_) + " samples, " +
                       (nb > 0 ? binary_field_name(SEGY_BIN_SAMPLES) : trace_field_name(SEGY_TR_SAMPLE_COUNT)) +
                       ") leave " + std::to_string(body % per_trace) + " bytes over after " +
                       std::to_string(body / per_trace) + " whole traces (" +
                       (nt > 0 && nt != nb ? trace_field_name(SEGY_TR_SAMPLE_COUNT) + " = " + std::to_string(nt) + " fits no better"
                                           : std::string("trace 1's own header gives no other count")) +
                       ")",
             "The file is truncated (an interrupted copy or write?), its sample count is wrong, or its traces "
             "differ in length (rtm reads traces of one length): copy or export it again");
    }
    raw_.resize(std::size_t(trace_bytes_) + 8);
    if (mapped) segy_mmap(fp_.get());  // (no map: stdio, as without)
}

std::string SegyReader::text_header() const {
    std::vector<char> buf(SEGY_TEXT_HEADER_SIZE + 1, 0);
    if (const int err = segy_read_textheader(fp_.get(), buf.data()); err != SEGY_OK)
        fail(path_, "unable to read the textual header (" + segyio_error(err) + ")");
    return std::string(buf.data());
}

TraceHeader SegyReader::header(int trace) const {
    TraceHeader h;
    if (const int err = segy_traceheader(fp_.get(), trace, h.bytes(), trace0_, trace_bytes_); err != SEGY_OK)
        fail(path_, "unable to read the header of trace " + std::to_string(trace + 1) + " of " +
                        std::to_string(traces_) + " (" + segyio_error(err) + ")",
             "The file is truncated or damaged");
    return h;
}

std::vector<TraceHeader> SegyReader::headers() const {
    std::vector<TraceHeader> all;
    all.reserve(traces_);
    for (int i = 0; i < traces_; ++i) all.push_back(header(i));
    return all;
}

void SegyReader::read(int trace, float* out) const {
    if (const int err = segy_readtrace(fp_.get(), trace, raw_.data(), trace0_, trace_bytes_); err != SEGY_OK)
        fail(path_, "unable to read trace " + std::to_string(trace + 1) + " of " + std::to_string(traces_) + " (" +
                        segyio_error(err) + ")",
             "The file is truncated or damaged");
    if (const int err = segy_to_native(format_, samples_, raw_.data()); err != SEGY_OK)
        fail(path_, "unable to convert the samples of trace " + std::to_string(trace + 1) + " from format " +
                        std::to_string(format_) + " (" + segyio_error(err) + ")");
    const char* p = raw_.data();
    switch (format_) {
        case SEGY_IBM_FLOAT_4_BYTE:
        case SEGY_IEEE_FLOAT_4_BYTE: std::memcpy(out, p, sizeof(float) * samples_); break;
        case SEGY_SIGNED_INTEGER_4_BYTE:
            for (int i = 0; i < samples_; ++i) {
                std::int32_t v;
                std::memcpy(&v, p + 4 * i, 4);
                out[i] = float(v);
            }
            break;
        case SEGY_SIGNED_SHORT_2_BYTE:
            for (int i = 0; i < samples_; ++i) {
                std::int16_t v;
                std::memcpy(&v, p + 2 * i, 2);
                out[i] = float(v);
            }
            break;
        case SEGY_SIGNED_CHAR_1_BYTE:
            for (int i = 0; i < samples_; ++i) out[i] = float(static_cast<signed char>(p[i]));
            break;
        default: fail(path_, "internal: unexpected format " + std::to_string(format_));
    }
}

int SegyReader::interval(const TraceHeader& first, int* from_byte) const {
    const int tr = first.get(SEGY_TR_SAMPLE_INTER), bin = bin_.get(SEGY_BIN_INTERVAL);
    const int byte = tr > 0 ? SEGY_TR_SAMPLE_INTER : bin > 0 ? SEGY_BIN_INTERVAL : 0;
    if (from_byte) *from_byte = byte;
    return tr > 0 ? tr : bin > 0 ? bin : 0;
}

// ---------------------------------------------------------------- writing

SegyWriter::SegyWriter(const std::string& path, const std::vector<std::string>& text, BinaryHeader bin, int traces)
    : path_(path), tmp_(path + ".tmp") {
    samples_ = bin.get(SEGY_BIN_SAMPLES);
    if (samples_ <= 0) fail(path, "cannot write traces of " + std::to_string(samples_) + " samples", "Give at least one sample");
    bin.set(SEGY_BIN_FORMAT, SEGY_IEEE_FLOAT_4_BYTE, path);
    // PATH.tmp is this writer's while it lives: another process writing the same output
    // (a second rtm model run) would write into it, and one rename would fail (said as
    // "unable to rename", exit 1) while the other renamed a mix of both. Locked before
    // it is truncated; a writer that finds it locked stops here and removes nothing.
    // (A writer that renamed PATH.tmp between this open and this lock leaves the lock on
    // its finished file: the lock is taken again on the name's file. On NFS, flock is a
    // POSIX lock, which the first close of any descriptor of the file lets go: there it
    // keeps two runs apart only until then.)
    for (int tries = 0; tries < 3 && lock_.fd < 0; ++tries) {
        lock_.fd = ::open(tmp_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (lock_.fd < 0)
            fail(path, "unable to create " + tmp_ + ": " + std::strerror(errno), "Check that the folder exists and is writable");
        if (::flock(lock_.fd, LOCK_EX | LOCK_NB) != 0) {
            const int err = errno;
            ::close(lock_.fd);
            lock_.fd = -1;
            if (err == EWOULDBLOCK)
                fail(path, "another process is writing it (its temporary file " + tmp_ + " is locked)",
                     "Wait for that run to end, or give this one another output path");
            break;  // where the file system takes no locks, writing goes on as before
        }
        struct stat held {}, named {};
        if (::fstat(lock_.fd, &held) != 0 || ::stat(tmp_.c_str(), &named) != 0 || held.st_ino != named.st_ino ||
            held.st_dev != named.st_dev) {
            ::close(lock_.fd);
            lock_.fd = -1;
        }
    }
    open_tmp("w+b", "unable to create " + tmp_, "Check that the folder exists and is writable");

    std::string card(SEGY_TEXT_HEADER_SIZE, ' ');
    for (std::size_t i = 0; i < text.size() && i < 40; ++i) card.replace(80 * i, std::min<std::size_t>(80, text[i].size()), text[i].substr(0, 80));
    if (const int err = segy_write_textheader(fp_.get(), 0, card.c_str()); err != SEGY_OK)
        fail(path, "unable to write the textual header to " + tmp_ + " (" + segyio_error(err) + ")", "Check the disk");
    if (const int err = segy_write_binheader(fp_.get(), bin.bytes()); err != SEGY_OK)
        fail(path, "unable to write the binary header to " + tmp_ + " (" + segyio_error(err) + ")", "Check the disk");
    if (traces > 0 && segy_flush(fp_.get(), false) == SEGY_OK) {
        // The headers are on the file (stdio flushed) before the map covers them.
        const off_t bytes = off_t(trace0_) + off_t(traces) * (SEGY_TRACE_HEADER_SIZE + trace_bytes_);
        const int fd = ::open(tmp_.c_str(), O_WRONLY);
        const bool reserved = fd >= 0 && posix_fallocate(fd, 0, bytes) == 0;
        if (fd >= 0) ::close(fd);
        if (reserved) segy_mmap(fp_.get());
    }
}

SegyWriter::SegyWriter(const std::string& path, int samples)
    : path_(path), tmp_(path + ".tmp"), samples_(samples), creator_(false) {
    open_tmp("r+b", "unable to open " + tmp_ + ", which another rank made, to write into it",
             "Put the output on storage that every rank sees (a shared file system)");
}

void SegyWriter::open_tmp(const char* mode, const std::string& what, const std::string& fix) {
    trace0_ = SEGY_TEXT_HEADER_SIZE + SEGY_BINARY_HEADER_SIZE;
    trace_bytes_ = segy_trsize(SEGY_IEEE_FLOAT_4_BYTE, samples_);
    raw_.resize(trace_bytes_);
    errno = 0;
    fp_.reset(segy_open(tmp_.c_str(), mode));
    if (!fp_) fail(path_, what + ": " + std::strerror(errno), fix);
}

SegyWriter::~SegyWriter() {
    if (!committed_ && (creator_ || std::uncaught_exceptions() > exceptions_)) {
        fp_.reset();
        std::error_code ec;
        fs::remove(tmp_, ec);
    }
}

void SegyWriter::write(int trace, const TraceHeader& header, const float* samples) {
    if (const int err = segy_write_traceheader(fp_.get(), trace, header.bytes(), trace0_, trace_bytes_); err != SEGY_OK)
        fail(path_, "unable to write the header of trace " + std::to_string(trace + 1) + " to " + tmp_ + " (" +
                        segyio_error(err) + ")",
             "Check free disk space");
    std::memcpy(raw_.data(), samples, trace_bytes_);
    segy_from_native(SEGY_IEEE_FLOAT_4_BYTE, samples_, raw_.data());
    if (const int err = segy_writetrace(fp_.get(), trace, raw_.data(), trace0_, trace_bytes_); err != SEGY_OK)
        fail(path_, "unable to write trace " + std::to_string(trace + 1) + " to " + tmp_ + " (" + segyio_error(err) + ")",
             "Check free disk space");
}

void SegyWriter::close() {
    if (!fp_) return;
    // Flushed first, its result checked: segy_close (segyio 1.8) drops a mapped file's
    // msync result, and with it an I/O error.
    if (const int err = segy_flush(fp_.get(), false); err != SEGY_OK)
        fail(path_, "unable to write " + tmp_ + " to the disk (" + std::strerror(errno) + ")", "Check the disk and free space");
    if (const int err = segy_close(fp_.release()); err != SEGY_OK)
        fail(path_, "unable to finish writing " + tmp_ + " (" + segyio_error(err) + ")", "Check free disk space");
}

void SegyWriter::commit() {
    close();
    std::error_code ec;
    fs::rename(tmp_, path_, ec);
    if (ec) fail(path_, "unable to rename " + tmp_ + " to it: " + ec.message(), "Check that the folder is writable");
    committed_ = true;
}

}  // namespace rtm::io::detail
