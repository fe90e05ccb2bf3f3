#include <fmt/format.h>

#include "dsl/params.hpp"
#include "kernels/raw_state.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernc/limits.hpp"

namespace kernc {

namespace {

// What RawKernel and RawModule both require: a usable name, some code, valid options.
void check_raw_definition(const char* kind, const std::string& name, const std::string& code,
                          const CompileOptions& options) {
  dsl::check_raw_kernel_name(name);
  dsl::check_size(fmt::format("{} {}: the code", kind, name), code, limits::kMaxSourceBytes);
  if (code.find_first_not_of(" \t\n") == std::string::npos) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{} {}: the code is empty", kind, name));
  }
  validate(options);
}

// The program of raw code: the code verbatim, named after the kernel or module.
Program raw_program(const std::string& name, const std::string& code, const CompileOptions& options) {
  Program program;
  program.name = name + ".cu";
  program.source = code;
  program.options = options;
  return program;
}

}  // namespace

RawKernel::RawKernel(std::string code, std::string name, CompileOptions options)
    : code_(std::move(code)), name_(std::move(name)), options_(std::move(options)),
      state_(std::make_shared<detail::RawState>()) {
  check_raw_definition("RawKernel", name_, code_, options_);
}

Program RawKernel::program() const { return raw_program(name_, code_, options_); }

RawModule::RawModule(std::string code, CompileOptions options, std::vector<std::string> name_expressions,
                     std::string name)
    : code_(std::move(code)), options_(std::move(options)), name_expressions_(std::move(name_expressions)),
      name_(std::move(name)), state_(std::make_shared<detail::RawState>()) {
  check_raw_definition("RawModule", name_, code_, options_);
  if (name_expressions_.size() > limits::kMaxNameExpressions) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("RawModule {}: {} name expressions, over kernc's limit of {} (see kernc/limits.hpp)", name_,
                            name_expressions_.size(), limits::kMaxNameExpressions));
  }
  for (const auto& expression : name_expressions_) {
    dsl::check_size(fmt::format("RawModule {}: a name expression", name_), expression, limits::kMaxNameLength);
    if (expression.find_first_not_of(" \t") == std::string::npos) {
      throw Error(ErrorCode::invalid_argument, fmt::format("RawModule {}: a name expression is empty", name_));
    }
  }
}

Program RawModule::program() const {
  Program program = raw_program(name_, code_, options_);
  program.name_expressions = name_expressions_;
  return program;
}

}  // namespace kernc
