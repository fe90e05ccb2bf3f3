#pragma once
// The checked contents of kernel definitions, shared by the type resolver and codegen.

#include <string>

#include "dsl/params.hpp"
#include "kernc/kernels.hpp"

namespace kernc::detail {

struct ElementwiseDefinition {
  std::string name;
  dsl::Signature signature;
  std::string operation;
  ElementwiseOptions options;
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
