#pragma once
// Warm-disk first calls, as issue 14 defines them: "first call in a fresh process with a
// warm disk cache". kernc_bench runs itself again as a child (--first-call-child) once per
// sample: each child opens the GPU and allocates its arrays, as any host program does
// before its first kernel, then times the first call of a kernel whose binary is already in
// the cache directory. One process is one sample, so the rows are medians over several.
//
// Three kinds of child (FirstCallMode):
//   fresh   the timed call is the process's first kernel call: what issue 14 asks about,
//           including what only a process's first call pays (code paged in, OpenSSL's
//           first digest, the logger);
//   warmed  another kernel from the same cache directory is called first, untimed: what
//           the first call of each further kernel costs;
//   phases  a fresh child that times the pieces of the first call one by one through the
//           public API: generating the program; the cache's look-up (disk read and
//           checks); the driver's load of that binary, the process's first module load;
//           Engine::load (the binary now in the engine's memory: planning the load and a
//           second module load); and the call itself once the engine holds the module.

#include <string>
#include <vector>

#include "kernc/kernels.hpp"

namespace bench {

/// The saxpy and the second kernel every child calls; `unique` keeps their text out of
/// any earlier cache (the parent compiles both into the cache directory first).
kernc::ElementwiseKernel first_call_saxpy(const std::string& unique);
kernc::ElementwiseKernel first_call_other(const std::string& unique);

struct FirstCallSample {
  double total_ms = 0;        ///< the timed first call, launch and synchronize included
  double program_ms = 0;      ///< phases only: ElementwiseKernel::program (code generation)
  double find_ms = 0;         ///< phases only: Cache::find from the disk cache
  double driver_ms = 0;       ///< phases only: Device::load of that binary, the first of the process
  double load_ms = 0;         ///< phases only: Engine::load after that (memory hit, a second module load)
  double call_ms = 0;         ///< phases only: the call once the engine holds the module
};

struct FirstCallResults {
  FirstCallSample fresh, warmed, phases;  ///< medians over the children of each kind
  int children = 0;                       ///< per kind
};

/// Runs `children` child processes of each kind on `cache_dir`, which must already hold
/// both kernels of `unique` for this GPU. Throws std::runtime_error if a child fails.
FirstCallResults measure_first_calls(const std::string& self, const std::string& cache_dir, const std::string& unique,
                                     int children);

/// The child's main: `argv` after --first-call-child is MODE CACHE_DIR UNIQUE. Prints one
/// line "first-call TOTAL PROGRAM FIND DRIVER LOAD CALL" (ms) and returns 0, or says why and returns 1.
int first_call_child(int argc, char** argv);

}  // namespace bench
