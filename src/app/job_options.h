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
io::GridReadOptions grid_read_options(const po::variables_map& vm);
Wavelet load_wavelet(const po::variables_map& vm);
PropagationOptions propagation_from(const po::variables_map& vm);

}  // namespace rtm::app
