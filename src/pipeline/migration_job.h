#pragma once
// A migration job: many shots, one stacked image, in a job folder that survives
// interruption.
//
// The folder holds state.json (the job's settings and each shot's status), the raw
// stack as stack-<generation>.bin, and the outputs (image.sgy, illumination.sgy,
// PNG previews). After every `checkpoint_every` shots the stack is written under a new
// generation, then state.json is replaced by an atomic rename that names it, then the
// old generation is removed: a job killed at any moment resumes from the last
// checkpoint, redoing no shot it recorded as done and losing none. Shots are stacked
// in a fixed order into a float stack kept bit for bit, so a resumed job's image is
// identical to an uninterrupted one's.
#include <functional>
#include <string>
#include <vector>

#include "imaging/stack.h"
#include "pipeline/migration.h"

namespace rtm {

struct JobShot {
    std::string file;  // the SEG-Y file it came from
    long id = 0;       // its field record number there
};

struct MigrationJobOptions {
    std::string folder;
    MigrationOptions migration;
    imaging::PostProcessing post;
    int checkpoint_every = 1;  // shots between checkpoints
    int max_shots = -1;        // stop after this many shots in this run (< 0: all)
};

struct JobReport {
    int total = 0, done_before = 0, done_now = 0;
    bool complete = false;
    std::vector<std::string> outputs;
};

// Runs (or resumes) the job over the shots `names`; load_shot(i) reads shot i of them
// when its turn comes (one gather in memory at a time). `settings` describes the inputs
// and options for the fingerprint: a folder holding a job with other settings is
// refused, not mixed.
JobReport run_migration_job(const Model& model, const std::vector<JobShot>& names,
                            const std::function<ShotGather(std::size_t)>& load_shot, const Wavelet& wavelet,
                            const MigrationJobOptions& opt, const std::string& settings);

}  // namespace rtm
