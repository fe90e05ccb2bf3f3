#pragma once
// The compile sequence NVRTC and HIPRTC share. Their C APIs mirror each other call for
// call, so the sequence is written once over a small adapter (`Calls`) that each
// backend provides; only flags, targets and binary retrieval differ per backend.

#include <chrono>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "compiler/compile_log.hpp"
#include "kernc/error.hpp"
#include "kernc/program.hpp"

namespace kernc::compiler {

/// `Calls` provides: `using Handle`, `using Status`, `static constexpr Status kSuccess`,
/// `create`, `destroy`, `add_name_expression`, `compile`, `log_size`, `log`,
/// `lowered_name`, `binary(Handle, const Target&)`, `error_string(Status)`,
/// `is_compilation_error(Status)`, `tidy_log(std::string& log, const std::string& program_name)`
/// and `compiled(Handle)`, called once right after the compile (NVRTC asks its PCH status).
template <class Calls>
CompiledProgram rtc_compile(const Calls& calls, const Program& program, const Target& target,
                            std::vector<std::string> flags, const std::string& compiler_name) {
  auto start = std::chrono::steady_clock::now();
  auto check = [&calls](typename Calls::Status status, const char* call) {
    if (status != Calls::kSuccess) {
      throw Error(ErrorCode::compiler_api, fmt::format("{} failed: {}", call, calls.error_string(status)));
    }
  };

  std::vector<const char*> header_names, header_sources;
  for (const auto& [name, content] : program.options.headers) {
    header_names.push_back(name.c_str());
    header_sources.push_back(content.c_str());
  }
  // Owns the program from the line that creates it (see STYLE: RAII on the line that creates).
  struct Owned {
    const Calls& calls;
    typename Calls::Handle handle{};
    ~Owned() {
      if (handle) calls.destroy(&handle);
    }
  } owned{calls};
  check(calls.create(&owned.handle, program.source.c_str(), program.name.c_str(),
                     static_cast<int>(header_names.size()), header_sources.data(), header_names.data()),
        "create program");
  for (const auto& expression : program.name_expressions) {
    check(calls.add_name_expression(owned.handle, expression.c_str()), "add name expression");
  }

  CompiledProgram result;
  result.target = target;
  result.flags = std::move(flags);
  result.compiler = compiler_name;
  std::vector<const char*> argv;
  for (const auto& flag : result.flags) argv.push_back(flag.c_str());
  auto status = calls.compile(owned.handle, static_cast<int>(argv.size()), argv.data());
  calls.compiled(owned.handle);

  size_t log_size = 0;
  check(calls.log_size(owned.handle, &log_size), "get log size");
  result.log.assign(log_size, '\0');
  if (log_size > 0) check(calls.log(owned.handle, result.log.data()), "get log");
  while (!result.log.empty() && (result.log.back() == '\0' || result.log.back() == '\n')) result.log.pop_back();
  calls.tidy_log(result.log, program.name);

  if (status != Calls::kSuccess) {
    std::string why = calls.is_compilation_error(status) ? first_error_line(result.log)
                                                         : std::string(calls.error_string(status));
    throw Error(fmt::format("{} failed to compile for {}: {}", program.name, target.str(), why),
                CompileFailure{program.name, target.str(), result.log, program.source, result.flags});
  }
  result.binary = calls.binary(owned.handle, target);
  for (const auto& expression : program.name_expressions) {
    const char* lowered = nullptr;
    check(calls.lowered_name(owned.handle, expression.c_str(), &lowered), "get lowered name");
    result.lowered_names[expression] = lowered ? lowered : "";
  }
  result.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace kernc::compiler
