#include "bare_nvrtc.hpp"

#include <nvrtc.h>

#include <chrono>
#include <stdexcept>
#include <vector>

namespace bench {

double bare_nvrtc_compile_ms(const kernc::Program& program, const std::string& arch) {
  std::vector<const char*> names, contents;
  for (const auto& [name, content] : program.options.headers) {
    names.push_back(name.c_str());
    contents.push_back(content.c_str());
  }
  const std::string arch_flag = "-arch=" + arch;
  const std::string std_flag = "-std=" + program.options.language_standard;
  const char* flags[] = {arch_flag.c_str(), std_flag.c_str()};
  const auto start = std::chrono::steady_clock::now();
  nvrtcProgram handle = nullptr;
  if (nvrtcCreateProgram(&handle, program.source.c_str(), program.name.c_str(), static_cast<int>(names.size()),
                         contents.data(), names.data()) != NVRTC_SUCCESS) {
    throw std::runtime_error("nvrtcCreateProgram failed for " + program.name);
  }
  const nvrtcResult result = nvrtcCompileProgram(handle, 2, flags);
  std::size_t size = 0;
  if (result == NVRTC_SUCCESS) nvrtcGetCUBINSize(handle, &size);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (result != NVRTC_SUCCESS || size == 0) {
    std::size_t log_size = 0;
    nvrtcGetProgramLogSize(handle, &log_size);
    std::string log(log_size, '\0');
    nvrtcGetProgramLog(handle, log.data());
    nvrtcDestroyProgram(&handle);
    throw std::runtime_error("bare NVRTC could not compile " + program.name + ":\n" + log);
  }
  nvrtcDestroyProgram(&handle);
  return ms;
}

}  // namespace bench
