#pragma once
// Option groups shared by the jobs (model, migrate): the velocity model, the source
// wavelet and the propagation settings, and what they build.
#include "app/config.h"
#include "io/model_io.h"
#include "core/survey.h"
#include "pipeline/modelling.h"

namespace rtm::app {

po::options_description model_options();
po::options_description wavelet_options();
po::options_description propagation_options();

Model load_model(const po::variables_map& vm);
// Refuses `what` (Born modelling, the born-adjoint condition) for an anisotropic model on
// a GPU backend, which has no anisotropic Born operator yet (the CPU backend has).
void refuse_anisotropic_born_on_gpu(const Model& model, const Backend& backend, const std::string& what);
io::GridReadOptions grid_read_options(const po::variables_map& vm);
Wavelet load_wavelet(const po::variables_map& vm);
PropagationOptions propagation_from(const po::variables_map& vm);

}  // namespace rtm::app
