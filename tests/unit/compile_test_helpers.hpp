#pragma once
// What the compiler tests share (test_compiler_pch.cpp, test_host_pch.cpp,
// test_nvrtc_minimal.cpp): a small generated program to compile, and a compiler's
// precompiled-header side.

#include <doctest/doctest.h>

#include "compiler/pch_compiler.hpp"
#include "kernc/compiler.hpp"
#include "kernc/kernels.hpp"
#include "kernc/pipeline.hpp"

namespace kernc::test {

/// The program code generation makes for the elementwise kernel `name` ("T x, T y" ->
/// "T z", `operation`, `preamble`) over float32 arrays, in the first layout class.
inline Program float32_pair_program(const char* name, const char* operation, const char* preamble = "") {
  ElementwiseOptions options;
  options.preamble = preamble;
  ElementwiseKernel kernel("T x, T y", "T z", operation, name, options);
  CallTypes types;
  types.inputs = {ArgType::array(DType::float32), ArgType::array(DType::float32)};
  return program(kernel, types, Layout::elementwise_classes().front());
}

/// `compiler`'s precompiled-header side; fails the test if it has none.
inline const compiler::PchCompiler& pch_of(const Compiler& compiler) {
  const auto* pch = dynamic_cast<const compiler::PchCompiler*>(&compiler);
  REQUIRE(pch != nullptr);
  return *pch;
}

}  // namespace kernc::test
