// Builds without HIP headers have no HIP runtime (see NOTE [ runtime backends ]).

#include "kernc/error.hpp"
#include "runtime/driver.hpp"

namespace kernc::detail {

std::unique_ptr<Driver> open_hip_driver(int, const std::string&) {
  throw Error(ErrorCode::backend_disabled,
              "this build of kernc has no HIP backend: hip/hip_runtime_api.h was not found when it was configured");
}

}  // namespace kernc::detail
