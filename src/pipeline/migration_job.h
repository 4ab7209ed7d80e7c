#pragma once
// A migration job: many shots, one stacked image, in a job folder that survives
// interruption.
//
// The folder holds state.json (the job's fingerprint and each shot's status: pending,
// done, or failed with its reason), the raw stack as stack-<generation>.bin (the image's
// then the illumination's exact sums, imaging::ExactSum raw, 32 bytes each, the
// machine's byte order: little-endian on x86-64 and ARM64; the model's grid, x fastest,
// then y, then z), ranks' checkpoints part-<rank>.bin (below), and the products
// (image.sgy, illumination.sgy, PNG previews).
//
// Ranks (parallel/world.h: mpirun, srun, or one process) take shots from a shared queue
// as they finish one (parallel/work_queue.h), largest first; each rank stacks its own
// shots. Stacks are exact sums (imaging/exact_sum.h), so the image is the same bit for
// bit for any number of ranks and any order in which shots finish.
//
// Checkpoints need no rank to wait for another: when `checkpoint_minutes` have passed
// since its last one (after the shot that crosses it), a rank writes its own stack and
// the shots in it to part-<rank>.bin (tmp file + fsync + rename). At the end of a run,
// the ranks' stacks are reduced to rank 0 once, which adds them to the job's stack and
// commits: the stack under a new generation, then state.json naming it (the commit
// point), each durably, then removes the parts and every other generation. A part
// records the generation its run started from; a run killed at any moment (one rank or
// all) leaves parts of that generation, which the next run, with any number of ranks,
// adds to the stack before it starts: no shot recorded in a part or in state.json is
// redone, and at most `checkpoint_minutes` of work per rank is lost. Parts from before
// a later commit are stale and removed unread. The products are written at the end of
// each run (a partial one too: the log says how many shots they hold). A run that
// completes the job (every shot done) commits no stack: it writes and syncs the
// products, then records the job complete in state.json, with each product's size and
// content hash, and removes the stacks and parts; running a complete job again checks
// the products and changes nothing.
//
// Nothing read back is trusted unchecked (pipeline/job_state.h): state.json's fields,
// the committed stack against the content hash state.json recorded with it, a part
// against the hash at its end. A damaged folder is refused, naming the file, rather than
// resumed into a wrong image.
//
// SIGINT or SIGTERM on any rank stops every rank after the shot under way, with the
// commit and the products (a second signal kills at once).
//
// A shot that throws (bad data, a blow-up, a geometry outside the model, a device out of
// memory) is tried once more on another rank, then recorded as failed with the error's
// message; the other shots go on. A later run retries the failed shots and never redoes
// done ones; the retry can only succeed where the cause has gone (memory, a device, a
// disk), as the fingerprint refuses changed input files and settings.
//
// Batches (propagation.batch, migration_batch): a rank takes up to a batch of shots at
// once and migrates those of one window together (migrate_shots); a batch that throws
// is migrated again shot by shot (the log says so), each shot then failing or stacking
// on its own. Shots are claimed, stacked and checkpointed one by one, so the batch
// changes neither the image nor the job folder.
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
    double cost = 1;   // its relative work (window points): the largest are handed out first
};

// What a job folder must have been started with to be resumed: the settings that
// change the image (options and backend) and the content of every input file. Inputs
// are known by the option that gives them, not by their paths: the same files reached
// by other paths (another working folder, a link, a moved survey) resume the job, and a
// file changed under the same path is refused.
struct JobFingerprint {
    struct Input {
        std::string key;   // the option ("model.vp"; "data.shots 2" for the second of a list)
        std::string path;  // as given, for messages
        std::string hash;  // of its content (io/file_hash.h)
    };
    // The option of an input's key ("data.shots" of "data.shots 2").
    static std::string option_of(const std::string& key) { return key.substr(0, key.find(' ')); }
    std::string settings;  // "key=value;" of the options that are not input files
    std::vector<Input> inputs;
};

struct MigrationJobOptions {
    std::string folder;
    MigrationOptions migration;
    imaging::PostProcessing post;
    double checkpoint_minutes = 5;  // minutes between checkpoints (0: after every shot)
    int max_shots = -1;             // try at most this many shots in this run (< 0: all)
    bool keep_shot_images = false;  // a PNG of each shot's image in FOLDER/shots (pipeline/job_previews.h)
};

// The job's image in words, for its log, its preview and its file's textual header:
// the imaging condition ("cross-correlation", "inverse scattering", "born-adjoint") and
// the post-processing ("stack / source illumination, -Laplacian, top mute 50 m").
const char* condition_name(ImagingCondition c);
std::string post_words(const imaging::PostProcessing& post);

struct FailedShot {
    JobShot shot;
    std::string reason;
};

struct RankReport {
    int rank = 0;
    std::string node;
    int shots = 0;                 // shots it tried (a shot group's members: the group's)
    int migrated = 0;              // of them, migrated and stacked
    double busy = 0;               // s migrating its shots
    double propagation = 0;        // of which s in propagation steps (Propagator::busy_seconds)
    double points = 0;             // grid points x steps it propagated
    double waiting = 0, wall = 0;  // s waiting for work, s in the shot loop
};

// The outcome, the same on every rank; the lists (failed_now, ranks, outputs) on rank 0.
struct JobReport {
    int total = 0, done_before = 0, done_now = 0;
    std::vector<FailedShot> failed_now;  // shots that failed in this run
    int failed = 0;                      // shots recorded as failed at the end of this run
    bool complete = false;               // every shot done
    int signal = 0;                      // SIGINT or SIGTERM that stopped the run early, else 0
    std::vector<RankReport> ranks;
    std::vector<std::string> outputs;
    // This run: its wall time (on rank 0, from the job folder's opening to the products),
    // and its shots' propagation steps' time and grid-point updates, summed over ranks.
    double seconds = 0, busy_seconds = 0, point_updates = 0;
};

// The files in `folder` (and its shots/) that a job there writes, replaces or removes,
// those that exist now: no input of the job may be one of them.
std::vector<std::string> job_files(const std::string& folder);

// Runs (or resumes) the job over the shots `names`, on every rank of the world (all
// call it); load_shot(i) reads shot i of them when a rank takes it (two batches of
// gathers in memory at a time per rank: the one migrating and the next, read beside it;
// one in a shot group). A folder holding a job with
// another fingerprint is refused, naming the input that changed.
JobReport run_migration_job(const Model& model, const std::vector<JobShot>& names,
                            const std::function<ShotGather(std::size_t)>& load_shot, const Wavelet& wavelet,
                            const MigrationJobOptions& opt, const JobFingerprint& fingerprint);  // rank 0's used

}  // namespace rtm
