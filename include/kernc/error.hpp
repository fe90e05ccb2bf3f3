#pragma once
/// \file
/// The one error family of kernc's public API.
///
/// NOTE [ errors ]
/// Every expected failure (user code that does not compile, a missing vendor
/// library, an unknown target, a bad argument) leaves the library as a
/// kernc::Error with a code. The library never prints and never exits; a cache
/// miss is not an error. Only the CLI decides what to show.

#include <stdexcept>
#include <string>
#include <vector>
#include "kernc/export.hpp"

namespace kernc {

enum class ErrorCode {
  invalid_argument,    ///< a caller passed something malformed
  unsupported_target,  ///< the loaded compiler cannot build for the requested target
  library_not_found,   ///< a vendor library could not be loaded
  symbol_not_found,    ///< a loaded vendor library lacks a required symbol
  compile_failed,      ///< the user's source did not compile; see compile_failure()
  compiler_api,        ///< a compiler API call failed for a reason other than the source
  io,                  ///< a file could not be read or written
  not_found,           ///< a named thing (cache entry, lowered name) does not exist
  backend_disabled,    ///< this build was configured without the backend asked for
  no_device,           ///< no usable GPU (no driver, no device, or the ordinal does not exist)
  driver,              ///< a CUDA driver call failed; the message names the call and the error
  launch_config,       ///< a launch configuration exceeds a device limit (the message names it)
  not_precompiled,     ///< compiling is off (KERNC_COMPILE=never) and no cache has the kernel
  out_of_memory,       ///< the device (or host) cannot hold what was asked; the message names it and the bytes
  device_fault,        ///< a kernel faulted (illegal address, trap, ...): the GPU context is lost for this process
};

/// Returns the snake_case name of an error code, e.g. "compile_failed".
KERNC_API const char* to_string(ErrorCode code) noexcept;

/// Everything that went into a compile that failed, so that a caller can show or store it.
struct KERNC_API CompileFailure {
  std::string program_name;          ///< the file name given to the compiler
  std::string target;                ///< e.g. "sm_90", "gfx90a:xnack-"
  std::string log;                   ///< the compiler's full log
  std::string source;                ///< the full source handed to the compiler
  std::vector<std::string> options;  ///< the exact flags handed to the compiler
};

/// The exception type thrown by every kernc API.
class KERNC_API Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message);
  Error(std::string message, CompileFailure failure);

  ErrorCode code() const noexcept { return code_; }
  /// Set only when code() == ErrorCode::compile_failed.
  const CompileFailure* compile_failure() const noexcept {
    return has_failure_ ? &failure_ : nullptr;
  }

 private:
  ErrorCode code_;
  bool has_failure_ = false;
  CompileFailure failure_;
};

}  // namespace kernc
