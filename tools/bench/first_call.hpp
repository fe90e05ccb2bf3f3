#pragma once
// Warm-disk first calls, as issue 14 defines them: "first call in a fresh process with a
// warm disk cache". kernc_bench runs itself again as a child (--first-call-child) once per
// sample: each child opens the GPU and allocates its arrays, as any host program does
// before its first kernel, then times the first call of a kernel whose binary is already in
// the cache directory. One process is one sample, so the rows are medians over several.
//
// Four kinds of child:
//   fresh   the timed call is the process's first kernel call: what issue 14 asks about,
//           including what only a process's first call pays (code paged in, the logger);
//   warmed  another kernel from the same cache directory is called first, untimed: what
//           the first call of each further kernel costs;
//   phases  a fresh child that times the pieces of the first call through the public API:
//           the variant's text; Engine::load(variant, ...), which finds the program's
//           digest in the variant index (NOTE [ variant index ]), reads and checks the
//           entry and has the driver load it (the process's first module load; the child
//           fails if the program had to be generated); and the call once the engine holds
//           the module;
//   driver  a fresh child that times only the driver's load of the saxpy's binary, read
//           from the cache untimed before: the process's first module load, which is the
//           driver's part of `phases`' load;
//   gpu1    (two GPUs or more) a fresh child that calls the saxpy on GPU 0 untimed, then
//           times its first call on GPU 1: with the image loaded once for every GPU (NOTE
//           [ load once for every GPU ], src/runtime/cuda_driver.cpp), about the driver's
//           per-context load; run again with KERNC_CUDA_LOAD_ONCE=0 (a module per GPU) to
//           compare.

#include <string>
#include <vector>

#include "kernc/kernels.hpp"

namespace bench {

/// The saxpy and the second kernel every child calls; `unique` keeps their text out of
/// any earlier cache (the parent compiles both into the cache directory first).
kernc::ElementwiseKernel first_call_saxpy(const std::string& unique);
kernc::ElementwiseKernel first_call_other(const std::string& unique);
/// What is wrong with a child's result `z` of the saxpy on x filled with the bytes 0x3f
/// (z = 3x everywhere), or "" when it is right.
std::string first_call_problem(const kernc::Device& device, const kernc::DeviceArray& z);

struct FirstCallSample {
  double total_ms = 0;    ///< fresh, warmed: the timed first call, launch and synchronize included
  double variant_ms = 0;  ///< phases: ElementwiseKernel::variant
  double load_ms = 0;     ///< phases: Engine::load by the variant index, the driver's first module load included
  double call_ms = 0;     ///< phases: the call once the engine holds the module
  double driver_ms = 0;   ///< driver: Device::load of the binary, the first of the process
};

struct FirstCallResults {
  FirstCallSample fresh, warmed, phases, driver;  ///< medians over the children of each kind
  /// gpu1 children, loading once and (KERNC_CUDA_LOAD_ONCE=0) a module per GPU; measured
  /// only where a second GPU is visible.
  FirstCallSample second_gpu, second_gpu_per_context;
  bool second_gpu_measured = false;
  int children = 0;  ///< per kind
};

/// Runs `children` child processes of each kind on `cache_dir`, which must already hold
/// both kernels of `unique` for this GPU; the gpu1 kind only when `two_gpus`. Throws
/// std::runtime_error if a child fails.
FirstCallResults measure_first_calls(const std::string& self, const std::string& cache_dir, const std::string& unique,
                                     int children, bool two_gpus);

/// The child's main: `argv` after --first-call-child is MODE CACHE_DIR UNIQUE (MODE: fresh,
/// warmed, phases, driver or gpu1). Prints one
/// line "first-call TOTAL VARIANT LOAD CALL DRIVER" (ms) and returns 0, or says why and returns 1.
int first_call_child(int argc, char** argv);

}  // namespace bench
