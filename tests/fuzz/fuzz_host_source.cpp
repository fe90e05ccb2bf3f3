// libFuzzer target: the host compiler's source scanners, which read a user's CUDA C++ of
// any length before g++ sees it: the extern "C" kernel finder, the per-thread-state scan
// and the dynamic shared memory rewrite. None may recurse or take more than linear time,
// and the rewrite must keep the line count (compile errors point at the user's lines).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "compiler/host_entries.hpp"
#include "compiler/host_source.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)kernc::compiler::extern_c_kernels(text);
  (void)kernc::compiler::needs_threads(text);
  const std::string rewritten = kernc::compiler::rewrite_dynamic_shared(text);
  if (std::count(rewritten.begin(), rewritten.end(), '\n') != std::count(text.begin(), text.end(), '\n')) std::abort();
  return 0;
}
