#pragma once
// What a host program exports besides its kernels (NOTE [ host kernel ABI ],
// templates/host_abi.cuh): the tables through which the runtime finds each kernel's entry
// and each name expression's global, appended to the program's source by the host compiler.

#include <map>
#include <string>
#include <vector>

namespace kernc::compiler {

/// The names of the `extern "C"` kernels (`__global__` functions, templates excluded) that
/// `source` declares at namespace scope, in order of first declaration.
std::vector<std::string> extern_c_kernels(const std::string& source);

/// The lowered name of name expression `index` in a host program ("kernc_host_expr_3"): the
/// name its entry or global is listed under.
std::string host_lowered_name(std::size_t index);

/// The text appended to a host program: the ABI version, whether blocks need per-thread
/// state, the target, and the kernel and global tables for `kernels` and
/// `name_expressions` (each listed under host_lowered_name of its index).
std::string host_entries(const std::vector<std::string>& kernels, const std::vector<std::string>& name_expressions,
                         bool needs_threads, const std::string& target);

}  // namespace kernc::compiler
