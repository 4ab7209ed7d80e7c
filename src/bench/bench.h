#pragma once
// rtm bench: kernel and end-to-end throughput against a bandwidth ceiling measured in
// the same run. argv[0] is skipped (a program or sub-command name); the options follow:
//   --grid NXxNYxNZ (NXxNZ in 2D)   --steps N   --variant NAME|all   --precision single|double
//   --mode full|stencil|modelling|rtm   --device auto|cpu|gpu   --threads N   --zchunk N   --json FILE
//   --physics iso|vti|tti (vti, tti: the GPU's VTI/TTI step, --mode full, variants two-pass, swic)
//   --pml N   --boundary cpml|damping   (modelling; a variant NAME+nosplit runs the layer
//   kernel over the whole box in one launch; NAME+ov1 / NAME+ov2 overlap C-PML pass 1 /
//   pass 1 and the shell with the interior launch, see LaunchConfig::overlap)
//   --mode slabs (under mpirun -np G, GPUs of one node; --boundary none,damping,cpml): one
//   shot's steps over the G ranks in z-slabs against one GPU in the same job, and the
//   share of the exchange hidden (bench_slabs.cpp)
// Prints one table row per measurement: Gpoints/s, GB/s at the minimal byte count,
// the ceiling (copy bandwidth / bytes per point) and the ratio. Returns 0 on success.
// Checks every option and the --json path before any work; throws rtm::UsageError (exit
// 2) for a value that does not parse or is none of the choices (--grid, --mode,
// --precision, --variant, ...), rtm::Error for the rest.
namespace rtm {

int run_bench(int argc, char** argv);

}  // namespace rtm
