#pragma once
// The machine's own scaling of a set of compiles (issue 35, item 3): the floor that
// `kernc precompile -j N` is measured against (tools/bench/precompile-scaling --floor).
//
// The same programs, through the same compiler object and flags as kernc, compiled by N
// processes forked from one that has NVRTC loaded already, each taking the next program of
// one shared queue, the longest first by the times of a sequential run: no process start,
// no NVRTC load, no messages between processes, and the best order a scheduler could know.
// What `kernc precompile -j N` loses beside it is kernc's; what this loses beside N times
// -j 1 is the machine's (clocks under load, shared caches and memory).

#include <vector>

#include "kernc/compiler.hpp"
#include "kernc/program.hpp"
#include "kernc/target.hpp"

namespace bench {

struct ParallelRun {
  int jobs = 0;
  double wall_s = 0, cpu_s = 0;  // cpu_s: the children's user + system time
};

/// Compiles every program of `longest_first` once in `jobs` forked processes sharing one
/// queue; throws std::runtime_error if a child fails.
ParallelRun compile_in_forked_processes(const std::vector<const kernc::Program*>& longest_first, int jobs,
                                        const kernc::Compiler& compiler, const kernc::Target& target);

}  // namespace bench
