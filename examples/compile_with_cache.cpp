// Embedding kernc: compile a templated kernel for a target through the cache, the way a
// host program would before loading it. Usage: compile_with_cache [TARGET]
#include <cstdio>

#include "kernc/cache.hpp"
#include "kernc/compiler.hpp"
#include "kernc/config.hpp"
#include "kernc/error.hpp"

int main(int argc, char** argv) {
  try {
    kernc::Config config = kernc::Config::from_environment();
    kernc::Target target = kernc::Target::parse(argc > 1 ? argv[1] : "sm_90");
    auto compiler = kernc::load_compiler(target.backend(), config.compiler_paths());
    kernc::Cache cache(config.cache_config());

    kernc::Program program;
    program.name = "scale.cu";
    program.source = "template <typename T> __global__ void scale(T* x, T a, int n) {\n"
                     "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                     "  if (i < n) x[i] *= a;\n"
                     "}\n";
    program.name_expressions = {"scale<float>", "scale<double>"};

    for (int round = 0; round < 2; ++round) {
      kernc::CacheResult result = cache.get_or_compile(program, target, *compiler);
      std::printf("%s: %s in %.2f ms, %zu bytes, scale<float> is %s\n", target.str().c_str(),
                  kernc::to_string(result.outcome), result.elapsed_ms, result.program->binary.size(),
                  result.program->lowered_name("scale<float>").c_str());
    }
    return 0;
  } catch (const kernc::Error& error) {
    std::fprintf(stderr, "compile_with_cache: %s\n", error.what());
    if (const auto* failure = error.compile_failure()) std::fprintf(stderr, "%s\n", failure->log.c_str());
    return 1;
  }
}
