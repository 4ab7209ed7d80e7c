#pragma once
// The pictures of a migration job (issue 9, item 5): the image's preview, titled with
// the job, how many shots it holds and the condition, and on request
// (migration.keep-shot-images) each shot's own image for QC.
#include <map>
#include <string>
#include <vector>

#include "pipeline/migration_job.h"

namespace rtm {

// image.png (3D: three slices) in `folder` of the post-processed image of `done` of
// `total` shots. Returns the files written.
std::vector<std::string> write_image_previews(const std::string& folder, const Volume& image,
                                              const MigrationJobOptions& opt, int done, int total);

// The label of each shot file of a job in its QC pictures' names: the file's stem, and
// where two files share it (a/s.sgy and b/s.sgy, s.sgy and s.segy) also its place in
// the job's list (s-1, s-2): one shot's picture overwrote another's.
std::map<std::string, std::string> shot_preview_labels(const std::vector<JobShot>& names);

// shots/shot-<id>-<label>.png in `folder`: the shot's raw image (its condition before
// illumination and Laplacian) placed on the model's grid. Returns the files.
std::vector<std::string> write_shot_preview(const std::string& folder, const Grid& model, const ShotMigration& shot,
                                            const JobShot& name, const std::string& label, const MigrationOptions& opt);

}  // namespace rtm
