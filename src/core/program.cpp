#include <fmt/format.h>

#include "kernc/error.hpp"
#include "kernc/program.hpp"

namespace kernc {

const std::string& CompiledProgram::lowered_name(const std::string& name_expression) const {
  auto found = lowered_names.find(name_expression);
  if (found == lowered_names.end()) {
    std::string known;
    for (const auto& [expression, lowered] : lowered_names) known += (known.empty() ? "" : ", ") + expression;
    throw Error(ErrorCode::not_found,
                fmt::format("no name expression \"{}\" in this program; it has: {}", name_expression,
                            known.empty() ? "none (pass name expressions to the compile)" : known));
  }
  return found->second;
}

}  // namespace kernc
