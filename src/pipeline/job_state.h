#pragma once
// A migration job's state.json (pipeline/migration_job.h), read and checked: rtm uses
// nothing from it that it has not checked, so a damaged or edited file is refused,
// naming the file and the field, instead of giving a wrong image (a shot stacked twice,
// or left out) with exit 0. Inside pipeline/ only.
//
// Version 7 holds: version; settings (text); inputs (option: content hash); generation
// (the committed stack's, 0 before the first commit); stack, from the first commit on:
// the committed stack file's content hash and the shots it holds (their indices); shots, in job
// order: file, id and status (pending, done or failed), with what the run learnt (a done
// shot's seconds and storage, a failed one's reason); complete, once every shot is done
// and the products written, with products: each product's file name in the folder, its
// size and content hash.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace rtm {

constexpr int kStateVersion = 9;  // 2: double stack, per-input hashes, failed shots; 3: exact stack,
                                  // ranks' parts; 4: the empty exact sum is all zeros; 5: the stack's
                                  // and the products' hashes, each part's own; 6: inputs known by
                                  // their options, not their paths; 7: the model's spacing as used,
                                  // not model.dx, dy and dz; 8: the stack's hash binds its shots, a
                                  // part's its job; 9: images of a tilt 0 everywhere (VTI) and of a
                                  // smoothed tilt (its axis) changed, data.receivers-outside

// What the refusal of a damaged job folder says to do.
inline const char* const kStartJobAgain = "Delete the job folder (or use a new output.job) to start the job again";

// The state in `file` after checking every field rtm reads: types, values (a status
// rtm writes, a generation of 0 or more), and their agreement (the shots done are the
// committed stack's; a complete job's are all done and its products recorded). Refuses
// a file that is not JSON, or written by another version of rtm, naming it.
nlohmann::json read_state(const std::filesystem::path& file);

// What a complete job records of a product it wrote: size and content hash.
nlohmann::json product_record(const std::filesystem::path& file);

// Refuses a complete job (state: read_state's) whose products in `folder` are missing or
// are not the files it completed with, naming the file: its stack is gone, so the image
// cannot be written again from the folder. A PNG preview's loss is a warning.
void check_products(const nlohmann::json& state, const std::filesystem::path& folder);

}  // namespace rtm
