#pragma once
// A compiler that can reuse precompiled headers between its compiles (NVRTC 12.8+; NOTE
// [ precompiled headers ], src/compiler/nvrtc_pch.hpp). The cache asks for it by
// dynamic_cast and gives it a private directory of its own to create them in, so the
// public Compiler interface needs no PCH vocabulary.

#include <cstddef>
#include <string>

#include "kernc/compiler.hpp"

namespace kernc::compiler {

class PchCompiler {
 public:
  /// Compiles as Compiler::compile does, to the same bytes, reusing or creating a
  /// precompiled header of the program's leading #include lines; creates them in
  /// `directory` (owned by the caller, private to this user).
  virtual CompiledProgram compile_with_pch(const Program& program, const Target& target,
                                           const std::string& directory) const = 0;
  /// How many precompiled headers it holds now, ready to be reused.
  virtual size_t precompiled_headers() const = 0;
  /// How many of its compiles so far started from a precompiled header made before them
  /// (not counting those that made one); a compile worker's count is its workers'.
  virtual size_t precompiled_header_uses() const = 0;

 protected:
  ~PchCompiler() = default;
};

}  // namespace kernc::compiler
