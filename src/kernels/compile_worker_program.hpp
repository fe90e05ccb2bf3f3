#pragma once
// Which program an Engine's compile workers run (Config::compile_workers, compile_worker).
// See NOTE [ compile workers of an engine ] in compile_worker_program.cpp.

#include <string>
#include <vector>

#include "kernc/config.hpp"

namespace kernc::detail {

/// The file that holds this code: libkernc.so, or the program a static kernc is linked into.
std::string kernc_library_path();

/// The kernc executables a library at `library_path` tries as its compile worker, in order:
/// the installed CLI (the install's bin directory as seen from its lib directory), then the
/// build tree's (tools/kernc/kernc beside src/ or tests/).
std::vector<std::string> worker_program_candidates(const std::string& library_path);

/// The command an Engine's compile workers run: {program, kCompileWorkerArgument}. The
/// program is Config::compile_worker when set (it must be an executable file), else the
/// first of `candidates` that is one. Throws Error(library_not_found) naming what was
/// tried and how to set it.
std::vector<std::string> compile_worker_command(const Config& config, const std::vector<std::string>& candidates);

}  // namespace kernc::detail
