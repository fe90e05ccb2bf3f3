#include "kernc/error.hpp"

namespace kernc {

const char* to_string(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::invalid_argument: return "invalid_argument";
    case ErrorCode::unsupported_target: return "unsupported_target";
    case ErrorCode::library_not_found: return "library_not_found";
    case ErrorCode::symbol_not_found: return "symbol_not_found";
    case ErrorCode::compile_failed: return "compile_failed";
    case ErrorCode::compiler_api: return "compiler_api";
    case ErrorCode::io: return "io";
    case ErrorCode::not_found: return "not_found";
    case ErrorCode::backend_disabled: return "backend_disabled";
    case ErrorCode::no_device: return "no_device";
    case ErrorCode::driver: return "driver";
    case ErrorCode::launch_config: return "launch_config";
    case ErrorCode::not_precompiled: return "not_precompiled";
    case ErrorCode::out_of_memory: return "out_of_memory";
    case ErrorCode::device_fault: return "device_fault";
  }
  return "unknown";
}

Error::Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}

Error::Error(std::string message, CompileFailure failure)
    : std::runtime_error(std::move(message)),
      code_(ErrorCode::compile_failed),
      has_failure_(true),
      failure_(std::move(failure)) {}

}  // namespace kernc
