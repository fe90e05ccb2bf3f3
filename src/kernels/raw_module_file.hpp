#pragma once
// RawModule from binary files (CuPy's RawModule(path=...)): reading a cubin, PTX or fatbin
// under the cache's trust rule, telling its kind and target from its bytes, and choosing
// the binary a device runs down the architecture ladder.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernc/engine.hpp"
#include "kernc/kernels.hpp"
#include "kernc/runtime.hpp"
#include "kernc/target.hpp"

namespace kernc::detail {

/// What a RawModule made from files holds: each binary as described to the caller, and its
/// bytes (same order).
struct ModuleFiles {
  std::string module;  ///< the module's name, for messages
  std::vector<RawModuleBinary> binaries;
  std::vector<std::string> images;
};

/// The kind of a binary by its first bytes: `\x7fELF` (cubin), the fatbin magic
/// 0xba55ed50 (little-endian), or text whose first directive, after blanks and comments,
/// is `.version` (PTX). std::nullopt otherwise.
std::optional<ModuleFileKind> module_file_kind(std::string_view bytes);

/// The architecture a CUDA cubin was built for, from its ELF header (NOTE [ cubin
/// architecture ]): "sm_80". Throws kernc::Error(invalid_argument) for an ELF file that is
/// not a 64-bit little-endian CUDA image or whose architecture cannot be read; `what`
/// names the file in the message.
Target cubin_target(std::string_view bytes, const std::string& what);

/// The architecture PTX text was written for, from its `.target sm_XY` directive, as the
/// PTX target "compute_XY". Throws kernc::Error(invalid_argument) naming `what` when there
/// is no readable `.target`.
Target ptx_target(std::string_view text, const std::string& what);

/// The whole file at `path`, read once and only if it is trusted as a cache entry is
/// (cache::untrusted, NOTE [ entry trust ]): opened without following a symlink, checked on
/// the open descriptor. Throws kernc::Error(io) naming the path and why.
std::string read_trusted_file(const std::string& path, const std::string& module);

/// Reads and checks `files` for RawModule::from_files (see its documentation).
ModuleFiles read_module_files(std::vector<RawModuleFile> files, const std::string& module);

/// Indices into `binaries` that a device of architecture `device` tries, best first: per
/// rung of binary_ladder(device), the binaries whose target sits on it (an "a" target only
/// on the device's own architecture, an "f" target only within its major); a fatbin always
/// (the driver picks its image). Binaries no rung reaches are left out.
std::vector<std::size_t> ladder_order(const std::vector<RawModuleBinary>& binaries, const Target& device);

/// Loads the binary of `files` that `device` runs: down ladder_order, passing over one the
/// driver refuses. Throws kernc::Error(unsupported_target) listing what was given when no
/// binary fits or the driver refuses every one that does.
Engine::Loaded load_module_files(const ModuleFiles& files, const Device& device);

}  // namespace kernc::detail
