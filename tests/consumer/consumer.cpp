// A program that uses kernc the way a downstream project does: public headers only, linked
// through find_package, add_subdirectory, FetchContent or pkg-config (tests/consumer/run.sh).
// It compiles a CuPy-style kernel for sm_90 through the cache; no GPU is needed.

#include <cstdio>
#include <cstring>

#include "kernc/cache.hpp"
#include "kernc/config.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernc/pipeline.hpp"
#include "kernc/version.hpp"

int main() {
  try {
    kernc::Config config = kernc::Config::from_environment();
    kernc::ElementwiseKernel saxpy("T a, T x, T y", "T z", "z = a * x + y", "saxpy");
    kernc::CallTypes types = kernc::parse_call_signature("scalar float32, float32, float32 -> float32");
    kernc::Program program = kernc::program(saxpy, types, kernc::Layout{});
    kernc::Target target = kernc::Target::parse("sm_90");
    auto compiler = kernc::load_compiler(target.backend(), config.compiler_paths());
    kernc::Cache cache(config.cache_config());
    kernc::CacheResult result = cache.get_or_compile(program, target, *compiler);
    const bool elf = result.program->binary.size() > 4 && std::memcmp(result.program->binary.data(), "\x7f" "ELF", 4) == 0;
    std::printf("consumer: kernc %s compiled %s for %s: %zu-byte %s cubin, %s\n", kernc::version(),
                program.name.c_str(), target.str().c_str(), result.program->binary.size(), elf ? "ELF" : "NOT-ELF",
                kernc::to_string(result.outcome));
    return elf ? 0 : 1;
  } catch (const kernc::Error& error) {
    std::fprintf(stderr, "consumer: kernc error (%s): %s\n", kernc::to_string(error.code()), error.what());
    return 1;
  }
}
