#pragma once
// The CuPy parameter grammar: a comma-separated list of "[raw] TYPE NAME", where TYPE is
// a dtype name (or NumPy alias) or a one-letter type placeholder (T, U, ...).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernc/kernel_options.hpp"

namespace kernc::dsl {

using Param = Parameter;  // public: include/kernc/kernel_options.hpp

/// Parses in_params or out_params (`which` names the list in errors: "in_params").
/// Throws kernc::Error(invalid_argument) quoting the offending text and saying what was expected.
std::vector<Param> parse_params(std::string_view text, std::string_view which, bool output);

/// A kernel's inputs and outputs, checked together (no name used twice).
struct Signature {
  std::vector<Param> in;
  std::vector<Param> out;
  /// Placeholder letters in order of first appearance (outputs first, as CuPy binds them).
  std::vector<std::string> placeholders() const;
};

/// Parses and checks both lists and the kernel name (a C identifier, not reserved).
Signature parse_signature(std::string_view in_params, std::string_view out_params, std::string_view kernel_name);

/// Throws kernc::Error(invalid_argument) unless `name` is a C identifier usable as a kernel name
/// of generated code (not a keyword, not starting with _, which generated code reserves).
void check_kernel_name(std::string_view name);
/// The same for raw code, which kernc does not generate: a name starting with _ (CuPy's
/// `_my_kernel`, a mangled `_Z3fooPf`) is allowed.
void check_raw_kernel_name(std::string_view name);

/// Throws kernc::Error(invalid_argument) when `text` is longer than `limit` bytes; the message
/// names `what` (e.g. "saxpy: operation"), the size, the limit and the start of the text.
void check_size(std::string_view what, std::string_view text, std::size_t limit);

/// Whether `text` contains `word` as a whole identifier (not inside a longer one).
bool names_word(std::string_view text, std::string_view word);

/// Whether `word` is a C++ keyword (names may not be keywords).
bool is_cpp_keyword(std::string_view word);

}  // namespace kernc::dsl
