#pragma once
// The order a precompile starts its units in: NOTE [ longest compiles first ] in precompile.cpp.

#include <cstddef>
#include <vector>

#include "kernc/spec_file.hpp"

namespace kernc::detail {

/// Indices into `units`, the unit estimated to compile longest first; units of equal
/// estimate keep their order in `units`.
std::vector<std::size_t> longest_compiles_first(const Spec& spec, const std::vector<PrecompileUnit>& units);

}  // namespace kernc::detail
