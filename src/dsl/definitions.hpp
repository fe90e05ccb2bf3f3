#pragma once
// The checked contents of kernel definitions, shared by the type resolver and codegen.
// Definitions only: what a kernel has loaded lives in src/kernels/handle_table.hpp.

#include <string>

#include "dsl/output_access.hpp"
#include "dsl/params.hpp"
#include "kernc/kernel_options.hpp"

namespace kernc::detail {

struct ElementwiseDefinition {
  std::string name;
  dsl::Signature signature;
  std::string operation;
  ElementwiseOptions options;
  /// No snippet names the loop index (`i`, `_ind`): the loop may visit the elements in any
  /// order, so the planner may reorder axes by the arrays' common stride order.
  bool any_loop_order = false;
  /// How the operation uses the outputs: NOTE [ outputs in registers ].
  dsl::OutputAccess output_access;
};

struct ReductionDefinition {
  std::string name;
  dsl::Signature signature;
  std::string map_expr;
  std::string reduce_expr;
  std::string post_map_expr;
  std::string identity;
  ReductionOptions options;
};

}  // namespace kernc::detail
