#include <fmt/format.h>

#include "dsl/params.hpp"
#include "kernels/raw_state.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"

namespace kernc {

RawKernel::RawKernel(std::string code, std::string name, CompileOptions options)
    : code_(std::move(code)), name_(std::move(name)), options_(std::move(options)),
      state_(std::make_shared<detail::RawState>()) {
  dsl::check_kernel_name(name_);
  if (code_.find_first_not_of(" \t\n") == std::string::npos) {
    throw Error(ErrorCode::invalid_argument, fmt::format("RawKernel {}: the code is empty", name_));
  }
  validate(options_);
}

Program RawKernel::program() const {
  Program program;
  program.name = name_ + ".cu";
  program.source = code_;
  program.options = options_;
  return program;
}

RawModule::RawModule(std::string code, CompileOptions options, std::vector<std::string> name_expressions,
                     std::string name)
    : code_(std::move(code)), options_(std::move(options)), name_expressions_(std::move(name_expressions)),
      name_(std::move(name)), state_(std::make_shared<detail::RawState>()) {
  dsl::check_kernel_name(name_);
  if (code_.find_first_not_of(" \t\n") == std::string::npos) {
    throw Error(ErrorCode::invalid_argument, fmt::format("RawModule {}: the code is empty", name_));
  }
  for (const auto& expression : name_expressions_) {
    if (expression.find_first_not_of(" \t") == std::string::npos) {
      throw Error(ErrorCode::invalid_argument, fmt::format("RawModule {}: a name expression is empty", name_));
    }
  }
  validate(options_);
}

Program RawModule::program() const {
  Program program;
  program.name = name_ + ".cu";
  program.source = code_;
  program.options = options_;
  program.name_expressions = name_expressions_;
  return program;
}

}  // namespace kernc
