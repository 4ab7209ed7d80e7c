#pragma once
// The pictures of a migration job (issue 9, item 5): the image's preview, titled with
// the job, how many shots it holds and the condition, and on request
// (migration.keep-shot-images) each shot's own image for QC.
#include <string>
#include <vector>

#include "pipeline/migration_job.h"

namespace rtm {

// image.png (3D: three slices) in `folder` of the post-processed image of `done` of
// `total` shots. Returns the files written.
std::vector<std::string> write_image_previews(const std::string& folder, const Volume& image,
                                              const MigrationJobOptions& opt, int done, int total);

// shots/shot-<id>-<file stem>.png in `folder`: the shot's raw image (its condition
// before illumination and Laplacian) placed on the model's grid. Returns the files.
std::vector<std::string> write_shot_preview(const std::string& folder, const Grid& model, const ShotMigration& shot,
                                            const JobShot& name, const MigrationOptions& opt);

}  // namespace rtm
