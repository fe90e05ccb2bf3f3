#pragma once
// What a call throws, for tests of error paths: shared by the unit test files so that each
// need not keep its own copy (and so that one unity batch can hold them, NOTE [ unity
// builds ] in CMakeLists.txt).

#include <functional>
#include <optional>
#include <string>

#include "kernc/error.hpp"

namespace kernc::test {

/// The kernc::Error `call` throws, or nothing when it returns.
inline std::optional<Error> thrown_by(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& error) {
    return error;
  }
  return std::nullopt;
}

/// The message of the kernc::Error `call` throws, or "no error".
inline std::string error_message(const std::function<void()>& call) {
  const std::optional<Error> error = thrown_by(call);
  return error ? std::string(error->what()) : "no error";
}

/// "CODE: message" of the kernc::Error `call` throws, or "no error".
inline std::string error_code_and_message(const std::function<void()>& call) {
  const std::optional<Error> error = thrown_by(call);
  return error ? std::string(to_string(error->code())) + ": " + error->what() : "no error";
}

}  // namespace kernc::test
