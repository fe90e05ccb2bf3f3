#pragma once
/// \file
/// The version of the kernc library in use (the one loaded at run time, which may differ
/// from the headers a program was built with).

#include "kernc/export.hpp"

namespace kernc {

/// "MAJOR.MINOR.PATCH" ("0.2.0" now): the project version, set once in the top-level
/// CMakeLists.txt' project(); `kernc --version`, the CMake package (kerncConfigVersion.cmake)
/// and kernc.pc report the same.
KERNC_API const char* version() noexcept;

}  // namespace kernc
