#pragma once
// The identity of the code that is running: the GNU build ID the linker wrote into the
// ELF object (shared library or executable) that holds kernc.

#include <string>

namespace kernc::platform {

/// The build ID of the object this code was linked into, as lowercase hex; empty when the
/// object has none (linked with --build-id=none) or it cannot be found. Read once per
/// process. Two objects with the same ID are the same bytes, so the same code.
const std::string& code_build_id();

}  // namespace kernc::platform
