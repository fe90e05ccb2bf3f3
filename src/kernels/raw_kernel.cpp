#include <fmt/format.h>

#include "codegen/cucomplex_bridge.hpp"
#include "codegen/grid_dependency_bridge.hpp"
#include "dsl/params.hpp"
#include "kernels/raw_module_file.hpp"
#include "kernels/raw_state.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernc/pipeline.hpp"
#include "kernels/kernel_access.hpp"
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
  program.origin.kernel = name;
  program.source = code;
  program.options = options;
  codegen::bridge_cucomplex(program);  // NOTE [ cuComplex bridge ]
  codegen::bridge_grid_dependency(program);  // NOTE [ grid dependency bridge ]
  return program;
}

}  // namespace

RawKernel::RawKernel(std::string code, std::string name, CompileOptions options)
    : code_(std::move(code)), name_(std::move(name)), options_(std::move(options)),
      state_(std::make_shared<detail::RawState>()) {
  check_raw_definition("RawKernel", name_, code_, options_);
  // What a call compiles on a miss, made from copies of the definition: the state (and the
  // plans it remembers) never holds the kernel object itself.
  state_->make_program = [name = name_, code = code_, options = options_] { return raw_program(name, code, options); };
}

Program program(const RawKernel& kernel) { return detail::KernelAccess::state(kernel).make_program(); }

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
  state_->make_program = [name = name_, code = code_, options = options_, expressions = name_expressions_] {
    Program program = raw_program(name, code, options);
    program.name_expressions = expressions;
    return program;
  };
}

RawModule RawModule::from_file(const std::string& path, std::string name) {
  return from_files({RawModuleFile{path, std::nullopt}}, std::move(name));
}

RawModule RawModule::from_files(std::vector<RawModuleFile> files, std::string name) {
  dsl::check_raw_kernel_name(name);
  RawModule module;
  module.name_ = std::move(name);
  auto state = std::make_shared<detail::RawState>();
  state->files = std::make_shared<const detail::ModuleFiles>(detail::read_module_files(std::move(files), module.name_));
  module.state_ = std::move(state);
  return module;
}

bool RawModule::is_binary() const noexcept { return state_ && state_->files; }

const std::vector<RawModuleBinary>& RawModule::binaries() const noexcept {
  static const std::vector<RawModuleBinary> kNone;
  return is_binary() ? state_->files->binaries : kNone;
}

std::vector<RawModuleBinary> RawModule::binaries_for(const Target& device) const {
  std::vector<RawModuleBinary> chosen;
  if (!is_binary()) return chosen;
  for (std::size_t k : detail::ladder_order(state_->files->binaries, device)) chosen.push_back(state_->files->binaries[k]);
  return chosen;
}

Program program(const RawModule& module) {
  const detail::RawState& state = detail::KernelAccess::state(module);
  if (state.files) {
    std::string paths;
    for (const auto& binary : state.files->binaries) paths += (paths.empty() ? "" : ", ") + binary.path;
    throw Error(ErrorCode::invalid_argument, fmt::format("RawModule {} is loaded from binary files ({}): it has no "
                                                         "program to compile",
                                                         module.name(), paths));
  }
  return state.make_program();
}

}  // namespace kernc
