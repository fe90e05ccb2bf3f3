#include "kernc/version.hpp"

namespace kernc {

const char* version() noexcept { return KERNC_VERSION_STRING; }

}  // namespace kernc
