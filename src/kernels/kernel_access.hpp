#pragma once
// What the pipeline functions (include/kernc/pipeline.hpp) read of a kernel object: its
// checked definition, or a raw kernel's state. The kernel classes name this struct their
// friend, so that the pipeline is not part of their public interface.

#include "dsl/definitions.hpp"
#include "kernc/kernels.hpp"
#include "kernels/raw_state.hpp"

namespace kernc::detail {

struct KernelAccess {
  static const ElementwiseDefinition& definition(const ElementwiseKernel& kernel) { return *kernel.definition_; }
  static const ReductionDefinition& definition(const ReductionKernel& kernel) { return *kernel.definition_; }
  static const RawState& state(const RawKernel& kernel) { return *kernel.state_; }
  static const RawState& state(const RawModule& module) { return *module.state_; }
};

}  // namespace kernc::detail
