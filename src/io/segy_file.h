#pragma once
// Private to src/io: a thin RAII layer over segyio's C API (segyio/segy.h).
//
// All byte-level work (big-endian fields, IBM float, sample conversion) is done by
// segyio; this layer only turns its error codes into rtm::Error messages that name
// the file, the trace and the header field ("unable to read trace 17 of model.sgy"),
// and checks what segyio leaves to its caller: the sample format, the sample count
// against the file size, field values that do not fit their 16-bit slots.
//
// Conventions: trace numbers are 0-based in code and 1-based in messages (as in
// segyio-catr); header fields are named by their 1-based byte position, as in the
// SEG-Y standard and segyio's SEGY_TR_* / SEGY_BIN_* enums.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <segyio/segy.h>

namespace rtm::io::detail {

// A number for messages: up to 10 significant digits, no trailing zeros.
std::string num(double v);
// Words for a textual header's card, in upper case as cards are written by custom.
std::string upper(std::string s);

// "inline number (trace-header byte 189)" and the like, for messages.
std::string trace_field_name(int byte);
std::string binary_field_name(int byte);

// Whether `byte` starts a trace-header field that segyio knows (e.g. 189, not 190).
bool is_trace_field(int byte);

// The sample formats rtm reads, by SEG-Y code: 1 IBM float, 2 int32, 3 int16,
// 5 IEEE float, 8 int8.
bool format_supported(int code);
std::string format_name(int code);     // "IBM float", "int16", ..., "unknown"
std::string supported_formats_text();  // "1 (IBM float), 2 (int32), ..."

// Coordinate and elevation scalars (bytes 69, 71): negative divides, positive
// multiplies, zero means 1.
double apply_scalar(std::int32_t value, std::int32_t scalar);

// One 240-byte trace header; fields are read and written through segyio.
class TraceHeader {
public:
    TraceHeader();
    // Value of the field starting at `byte` (a valid field: see is_trace_field).
    // The sample count (115) is unsigned in SEG-Y; segyio 1.8 hands it back signed,
    // so it is returned here as 0..65535.
    std::int32_t get(int byte) const;
    // Sets a field; throws rtm::Error naming `where` and the field when the value does
    // not fit (read back differently: 16-bit fields hold -32768..32767, the sample
    // count 0..65535).
    void set(int byte, std::int64_t value, const std::string& where);
    char* bytes() { return buf_.data(); }
    const char* bytes() const { return buf_.data(); }

private:
    std::vector<char> buf_;
};

// The 400-byte binary header.
class BinaryHeader {
public:
    BinaryHeader();
    std::int32_t get(int byte) const;  // sample counts (3221, 3223) come back unsigned
    void set(int byte, std::int64_t value, const std::string& where);
    char* bytes() { return buf_.data(); }
    const char* bytes() const { return buf_.data(); }

private:
    std::vector<char> buf_;
};

struct SegyCloser {
    void operator()(segy_file* fp) const;
};

// Refuses a file whose binary header says its coordinates and depths are in feet
// (measurement system, byte 3255, = 2): rtm reads metres.
class SegyReader;
void require_metres(const SegyReader& file);

// Refuses a path that exists but is no regular file or folder: /dev/null, a FIFO (whose
// read would wait for a writer), a socket, a block device; names what it is. Opens nothing.
void require_regular_file(const std::string& path);

// A SEG-Y file opened for reading. The constructor checks everything needed to read
// traces safely: the file exists and holds the 3600-byte headers, the sample format
// is supported, and the file size equals trace0 + traces x (240 + samples x bytes).
//
// Sample count: the binary header (3221) first, as segyio does, then the first trace
// header (115): the first that matches the file size wins. Real files disagree
// (f3.sgy's trace headers say 462 samples where the binary header and the file
// size say 75), and the file size settles it.
class SegyReader {
public:
    // mapped: read through a memory map (segyio's segy_mmap), where a trace is a copy
    // instead of a seek and two reads (a 3D model's 160 000 traces took 0.5 s through
    // stdio on the H200 host, 2026-11-23). For a file read whole at once (a model), not
    // one read from for hours (a shot file): a file truncated under a map ends the
    // process instead of failing a read, and the pages read count in the process's
    // resident memory (docs/memory.md's bound on a shot file's reader would not hold).
    // Without a map where the system gives none.
    explicit SegyReader(const std::string& path, bool mapped = false);

    const std::string& path() const { return path_; }
    int format() const { return format_; }
    int samples() const { return samples_; }
    int samples_byte() const { return samples_byte_; }  // field the count came from
    int traces() const { return traces_; }
    long trace0() const { return trace0_; }
    int trace_bytes() const { return trace_bytes_; }  // sample bytes per trace
    const BinaryHeader& binary() const { return bin_; }
    std::string text_header() const;  // 40 lines of 80 characters, ASCII

    TraceHeader header(int trace) const;
    std::vector<TraceHeader> headers() const;  // all of them, in file order
    // Reads one trace's samples converted to float (out holds samples() values).
    void read(int trace, float* out) const;

    // Sample interval in the header's unit (microseconds, or millimetres for depth
    // models): the first trace's byte 117 when positive, else binary byte 3217.
    // Returns 0 when both are zero or negative; `from_byte` tells which was used.
    int interval(const TraceHeader& first, int* from_byte = nullptr) const;

private:
    std::string path_;
    std::unique_ptr<segy_file, SegyCloser> fp_;
    BinaryHeader bin_;
    int format_ = 0, samples_ = 0, samples_byte_ = 0, traces_ = 0, trace_bytes_ = 0;
    long trace0_ = 0;
    mutable std::vector<char> raw_;
};

// A new SEG-Y file (IEEE float, format 5), written to PATH.tmp and renamed to PATH
// by commit(). Destroying an uncommitted writer removes PATH.tmp, so a failed write
// leaves no half file behind: the creator always, a joined writer when an exception
// destroys it (its rank failed, and the job with it: the creator's rank is then ended
// by MPI_Abort, which unwinds nothing).
class SegyWriter {
public:
    // `text` is up to 40 lines of at most 80 characters (written as EBCDIC by segyio);
    // `bin` must carry the sample count (3221); the format field is set to 5 here.
    // traces > 0: the file's size is known: it is reserved on disk at once and written
    // through a memory map (segyio's segy_mmap), where a trace is two copies instead of
    // two seeks that each flush stdio's buffer (a 3D image's 160 000 traces took 0.7 s
    // through stdio on the H200 host, 2026-11-23). Through stdio where the space cannot
    // be reserved (a full disk is then reported at the trace it stops) or no map is
    // given. (On a copy-on-write file system, btrfs or ZFS, a full disk can still refuse
    // a reserved page, which ends the process under a map instead of failing a write.) For a file one process writes: a joined writer (another rank, perhaps on
    // another node of a shared file system) writes through stdio.
    SegyWriter(const std::string& path, const std::vector<std::string>& text, BinaryHeader bin, int traces = 0);
    // Joins PATH.tmp made by a creating writer (another process) to write traces into it:
    // every process writes its own traces; the creator commits once all have closed.
    SegyWriter(const std::string& path, int samples);
    ~SegyWriter();
    SegyWriter(const SegyWriter&) = delete;
    SegyWriter& operator=(const SegyWriter&) = delete;

    int samples() const { return samples_; }
    // Writes trace number `trace` (0-based): its header and samples() floats.
    void write(int trace, const TraceHeader& header, const float* samples);
    // Flushes and closes PATH.tmp (a joining writer's end).
    void close();
    // close(), then renames PATH.tmp to PATH (the creator, after every joiner's close).
    void commit();

private:
    // Opens PATH.tmp in segyio's `mode` for traces of samples_ floats; throws what + errno's text.
    void open_tmp(const char* mode, const std::string& what, const std::string& fix);

    std::string path_, tmp_;
    std::unique_ptr<segy_file, SegyCloser> fp_;
    int samples_ = 0, trace_bytes_ = 0;
    long trace0_ = 0;
    std::vector<char> raw_;
    bool committed_ = false, creator_ = true;
    struct Descriptor {  // closed however the writer ends, its constructor's throw included
        int fd = -1;
        ~Descriptor() {
            if (fd >= 0) ::close(fd);
        }
    } lock_;  // the creator's flock on PATH.tmp (-1: none)
    int exceptions_ = std::uncaught_exceptions();  // in flight when made: more when destroyed is a failure
};

}  // namespace rtm::io::detail
