#include "kernc/compile_options.hpp"

#include <cctype>

#include <fmt/format.h>

#include "kernc/error.hpp"

namespace kernc {

namespace {
bool is_identifier(std::string_view text) {
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  for (char c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// A macro name, optionally function-like: "NAME" or "NAME(a,b)".
bool is_macro_name(std::string_view text) {
  auto paren = text.find('(');
  if (paren == std::string_view::npos) return is_identifier(text);
  return is_identifier(text.substr(0, paren)) && text.back() == ')';
}

Error bad_option(const std::string& message) { return Error(ErrorCode::invalid_argument, message); }
}  // namespace

void validate(const CompileOptions& options) {
  static const char* kStandards[] = {"c++11", "c++14", "c++17", "c++20"};
  bool known = false;
  for (const char* standard : kStandards) known = known || options.language_standard == standard;
  if (!known) {
    throw bad_option(fmt::format("unknown language standard \"{}\": expected c++11, c++14, c++17 or c++20",
                                 options.language_standard));
  }
  for (const auto& [name, value] : options.defines) {
    if (!is_macro_name(name)) {
      throw bad_option(fmt::format("define \"{}\" is not a macro name (an identifier, optionally with "
                                   "a parameter list)", name));
    }
    if (value.find_first_of("\n\r") != std::string::npos) {
      throw bad_option(fmt::format("the value of define {} contains a line break", name));
    }
  }
  for (const auto& dir : options.include_dirs) {
    if (dir.empty()) throw bad_option("an include directory is an empty string");
  }
  for (const auto& [name, content] : options.headers) {
    if (name.empty()) throw bad_option("an extra header has an empty name");
    if (name.find('\0') != std::string::npos) throw bad_option("an extra header's name contains a NUL byte");
  }
  for (const auto& flag : options.raw_flags) {
    if (flag.empty()) throw bad_option("a raw flag is an empty string");
  }
}

std::string canonical_bytes(const CompileOptions& options) {
  // Every field is written as tag, length and bytes, so no two different option sets
  // share an encoding whatever bytes they hold. std::map iterates in key order, so maps
  // serialise the same whatever order the caller filled them in; lists keep their order
  // because the compiler's search order depends on it.
  std::string out = "kernc-options-v1;";
  auto field = [&out](std::string_view tag, std::string_view value) {
    out += fmt::format("{}={}:", tag, value.size());
    out.append(value.data(), value.size());
    out += ';';
  };
  field("std", options.language_standard);
  for (const auto& [name, value] : options.defines) {
    field("define", name);
    field("value", value);
  }
  for (const auto& dir : options.include_dirs) field("include_dir", dir);
  for (const auto& [name, content] : options.headers) {
    field("header", name);
    field("content", content);
  }
  field("fast_math", options.fast_math ? "1" : "0");
  field("line_info", options.line_info ? "1" : "0");
  field("debug", options.debug ? "1" : "0");
  for (const auto& flag : options.raw_flags) field("raw", flag);
  return out;
}

}  // namespace kernc
