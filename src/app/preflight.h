#pragma once
// What rtm model and rtm migrate check and print before the first propagation (issue 9,
// items 1 and 2): the plan (pipeline/plan.h), every shot's geometry, and every output
// path (a folder that can be made, not a file, writable, within SEG-Y's limits).
// --dry-run stops after it.
#include <string>
#include <vector>

#include "app/config.h"
#include "pipeline/plan.h"

namespace rtm::app {

// --dry-run, for both commands.
po::options_description plan_options();


// A file a command writes or removes, and the option that puts it there.
struct Product {
    std::string path, option;
};

// Refuses, before any work, an input file (every option that names one: config.h
// input_files) that is one of `products`, as std::filesystem::equivalent says (the same
// file under another name or through a link too): writing or removing it would lose the
// input. Names both options and the file.
void check_inputs_kept(const po::options_description& desc, const po::variables_map& vm,
                       const std::vector<Product>& products);

// Prints the plan and checks the outputs; true when --dry-run asks to stop there. born:
// Born modelling (its perturbation read and checked already).
bool preflight_model(const po::variables_map& vm, const Model& model, const std::vector<ShotGather>& geometry,
                     const Wavelet& wavelet, const PropagationOptions& prop, bool born, const std::string& shots_out,
                     const std::string& preview_out);
bool preflight_migrate(const po::variables_map& vm, const Model& model, const PlanShots& shots,
                       const Wavelet& wavelet, const MigrationOptions& migration, const std::string& job_folder);

}  // namespace rtm::app
