#pragma once
// Shot records as SEG-Y: traces grouped into gathers by field record number (or by
// source position when that is missing), in any trace order.
#include <memory>
#include <string>
#include <vector>

#include "core/survey.h"

namespace rtm::io {

// Reads all gathers of a file: a ShotIndex (shot_index.h, which states the rules),
// then every gather loaded (a sample that is not finite is an error naming the trace:
// its number in the file, field record and channel, and the sample). Holds the whole file: jobs load one gather at a time.
std::vector<ShotGather> read_shots(const std::string& path);

// Writes gathers as SEG-Y rev 1, IEEE float, with complete geometry headers:
// field record (= id), channel (channels[r], or r + 1 when empty), trace sequence
// numbers, source/group X/Y (scalar -100: cm), source depth and group elevation
// (= -receiver depth; elevation scalar -100), offset (signed source-to-group distance
// in whole metres, negative when group X < source X, as unscaled SEG-Y offsets are),
// CDP X/Y (midpoint), sample count and interval (dt must be whole microseconds) and
// trace identification code 1. All gathers must share nt and dt.
//
// The gathers are written as they come, in any order, each at its place (one at a time
// in memory) to PATH.tmp, renamed to PATH by commit(); a writer destroyed before
// commit() removes PATH.tmp, so an interrupted job leaves no half file under PATH.
// Several processes (the ranks of a job) write one file: one creates it, the others
// join it and write their own gathers, close(), and then the creator commits.
class ShotWriter {
public:
    enum class Role { Create, Join };
    // `geometry`: every gather to be written, in order (data may be empty): the headers
    // are written from it (count, nt, dt, most traces per gather), and it is checked
    // now, before any gather is made.
    // `what`: the gathers in a few words for the textual header's first card (a creator's).
    ShotWriter(const std::string& path, const std::vector<ShotGather>& geometry, Role role = Role::Create,
               const std::string& what = "shot gathers");
    ~ShotWriter();
    ShotWriter(const ShotWriter&) = delete;
    ShotWriter& operator=(const ShotWriter&) = delete;

    // Writes gather `index` of the geometry (its nt, dt and channels checked again).
    void write(std::size_t index, const ShotGather& gather);
    // Ends this process's writing (a joining writer's end).
    void close();
    // Renames PATH.tmp to PATH once every announced gather is written (by this writer,
    // or by it and the joined writers that have closed).
    void commit(bool every_gather_written_here = true);

private:
    struct File;  // segyio's writer and the shared trace header (segy_file.h is private to io)
    std::string path_;
    ShotGather first_;  // sampling and id of the first gather (no traces)
    std::vector<std::size_t> first_trace_;  // of each gather in the file, then the end of the last
    std::vector<char> written_;             // gathers written by this writer
    std::unique_ptr<File> file_;
};

// All gathers at once, through ShotWriter.
void write_shots(const std::string& path, const std::vector<ShotGather>& shots);

}  // namespace rtm::io
