#pragma once
// A migration job: many shots, one stacked image, in a job folder that survives
// interruption.
//
// The folder holds state.json (the job's fingerprint and each shot's status: pending,
// done, or failed with its reason), the raw stack as stack-<generation>-image.bin and
// stack-<generation>-illumination.bin (float64, the machine's byte order: little-endian
// on x86-64 and ARM64; the model's grid, x fastest, then y, then z), and the products
// (image.sgy, illumination.sgy, PNG previews).
//
// A checkpoint writes the stack under a new generation, then state.json naming it (the
// commit point), each by tmp file + fsync + rename, the folder fsynced after each, then
// removes every other generation. Checkpoints come when `checkpoint_minutes` have passed
// since the last one (after the shot that crosses it) and at the end of every run: a
// job killed at any moment resumes from the last checkpoint, redoing no shot it
// recorded as done and losing at most that much work. The products are written once,
// at the end of each run (a partial one too: the log says how many shots they hold).
// Shots are stacked in a fixed order into a double stack kept bit for bit, so a
// resumed job's image is identical to an uninterrupted one's.
//
// SIGINT or SIGTERM stops a run after the shot under way, with a checkpoint and the
// products (a second signal kills at once).
//
// A shot that throws (bad data, a blow-up, a geometry outside the model) is recorded
// as failed with the error's message; the other shots go on. A later run retries the
// failed shots (the cause may have been transient, or fixed) and never redoes done ones.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "imaging/stack.h"
#include "pipeline/migration.h"

namespace rtm {

struct JobShot {
    std::string file;  // the SEG-Y file it came from
    long id = 0;       // its field record number there
};

// What a job folder must have been started with to be resumed: the settings that
// change the image (options and backend) and the content of every input file.
struct JobFingerprint {
    std::string settings;
    std::vector<std::pair<std::string, std::string>> inputs;  // file, content hash
};

struct MigrationJobOptions {
    std::string folder;
    MigrationOptions migration;
    imaging::PostProcessing post;
    double checkpoint_minutes = 5;  // minutes between checkpoints (0: after every shot)
    int max_shots = -1;             // try at most this many shots in this run (< 0: all)
    bool keep_shot_images = false;  // a PNG of each shot's image in FOLDER/shots (pipeline/job_previews.h)
};

struct FailedShot {
    JobShot shot;
    std::string reason;
};

struct JobReport {
    int total = 0, done_before = 0, done_now = 0;
    std::vector<FailedShot> failed_now;  // shots that failed in this run
    int failed = 0;                      // shots recorded as failed at the end of this run
    bool complete = false;               // every shot done
    int signal = 0;                      // SIGINT or SIGTERM that stopped the run early, else 0
    std::vector<std::string> outputs;
};

// Runs (or resumes) the job over the shots `names`; load_shot(i) reads shot i of them
// when its turn comes (one gather in memory at a time). A folder holding a job with
// another fingerprint is refused, naming the input that changed.
JobReport run_migration_job(const Model& model, const std::vector<JobShot>& names,
                            const std::function<ShotGather(std::size_t)>& load_shot, const Wavelet& wavelet,
                            const MigrationJobOptions& opt, const JobFingerprint& fingerprint);

}  // namespace rtm
