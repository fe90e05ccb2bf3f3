#include "kernc/engine.hpp"

#include <fmt/format.h>

#include "kernc/error.hpp"

namespace kernc {

Engine::Engine(Config config) : config_(std::move(config)), cache_(std::make_unique<Cache>(config_.cache_config())) {}

Engine::~Engine() = default;

Engine& Engine::global() {
  // Never destroyed: kernels may run from static destructors of the host program.
  static Engine* engine = new Engine(Config::from_environment());
  return *engine;
}

const Compiler& Engine::compiler(Backend backend) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& slot = compilers_[backend];
  if (!slot) slot = load_compiler(backend, config_.compiler_paths());
  return *slot;
}

Device Engine::device(int ordinal) {
  if (config_.runtime.value == "hip") return Device::get(ordinal, config_.hiprtc_library.value, Backend::hip);
  return Device::get(ordinal, config_.cuda_driver_library.value, Backend::cuda);
}

Engine::Loaded Engine::load(const Program& program, const Device& device) {
  Target target = device.target();
  const Compiler& compiler = this->compiler(target.backend());
  // The cache answers from memory after the first call; compiling happens outside any
  // lock of the engine, so loads of other programs never wait for it.
  CacheResult result = cache_->get_or_compile(program, target, compiler);
  const auto slot_key = std::make_pair(device.ordinal(), result.key);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto found = modules_.find(slot_key); found != modules_.end()) return found->second;
  }
  Loaded loaded;
  loaded.module = device.load(result.program->binary);
  loaded.program = result.program;
  loaded.outcome = result.outcome;
  loaded.key = result.key;
  std::lock_guard<std::mutex> lock(mutex_);
  return modules_.emplace(slot_key, std::move(loaded)).first->second;  // a racing load of the same key wins once
}

std::size_t Engine::loaded_modules() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return modules_.size();
}

}  // namespace kernc
