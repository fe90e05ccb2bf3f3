#include "compiler/nvrtc_compiler.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compiler/compile_log.hpp"
#include "compiler/nvrtc_pch.hpp"
#include "compiler/pch_compiler.hpp"
#include "compiler/rtc_compile.hpp"
#include "compiler/toolkit_includes.hpp"
#include "kernc/error.hpp"
#include "platform/nvrtc_api.hpp"
#include "platform/sha256.hpp"

namespace kernc::compiler {

std::vector<std::string> nvrtc_flags(const CompileOptions& options, const Target& target,
                                     const std::vector<std::string>& toolkit_dirs) {
  std::vector<std::string> flags;
  flags.push_back("-arch=" + target.str());
  flags.push_back("-std=" + options.language_standard);
  for (const auto& [name, value] : options.defines) {
    flags.push_back(value.empty() ? "-D" + name : "-D" + name + "=" + value);
  }
  for (const auto& dir : options.include_dirs) flags.push_back("-I" + dir);
  for (const auto& dir : toolkit_dirs) flags.push_back("-I" + dir);  // after the program's own
  if (options.fast_math) flags.push_back("--use_fast_math");
  if (options.line_info) flags.push_back("-lineinfo");
  if (options.debug) flags.push_back("-G");
  flags.insert(flags.end(), options.raw_flags.begin(), options.raw_flags.end());
  return flags;
}

namespace {

// The name expressions an error of NVRTC's name map is about: those whose name (template
// arguments left out) is the identifier the error quotes; all of them when none matches.
std::string undefined_expressions(const std::vector<std::string>& expressions, const std::string& error) {
  std::vector<std::string> named;
  for (const auto& expression : expressions) {
    std::string base = expression.substr(0, expression.find('<'));
    base.erase(base.find_last_not_of(" \t") + 1);
    if (!base.empty() && error.find("\"" + base + "\"") != std::string::npos) named.push_back(expression);
  }
  if (named.empty()) named = expressions;
  std::string text = named.size() == 1 ? "name expression " : "name expressions ";
  for (size_t k = 0; k < named.size(); ++k) text += (k ? ", \"" : "\"") + named[k] + "\"";
  return text + (named.size() == 1 ? " is" : " are");
}

// NOTE [ the driver's compute cache ]
// NVRTC 12.9 and later keep the programs they compile in the CUDA driver's compute cache
// (~/.nv/ComputeCache, the driver's own JIT cache) when a driver can be loaded, unless
// CUDA_CACHE_DISABLE=1 or the compile passes -no-cache (nvrtc.h; the NVRTC guide's
// "Caching (CUDA 12.9+)"). A program the driver's cache serves is not compiled: kernc
// would count it as a compile (issue 35 measured 25 ms "compiles" of programs that take
// 0.35 s), and a second, unbounded cache would grow outside kernc's control while kernc's
// own cache already keeps every binary. So kernc passes -no-cache by default.
// KERNC_DRIVER_COMPILE_CACHE=1 lets NVRTC use the driver's cache, and passes
// --enable-cache-trace with it (not in nvrtc.h; present in NVRTC 13.0, which then logs
// "Successfully retrieved cached cubin from driver cache"): kernc reads the hit from the
// log, marks the result CompiledProgram::driver_cache_hit (counted as
// CacheStats::driver_cache_hits, not as a compile) and removes the trace lines from the
// log. A hit of the PTX step alone (the cubin compiled from a cached PTX) still counts as
// a compile. Neither flag changes the binary, so neither is in flags() or the cache key.
// Before 12.9 NVRTC has no such cache, and older releases reject the flags: none is passed.
bool has_driver_cache(int major, int minor) { return major > 12 || (major == 12 && minor >= 9); }

// NOTE [ minimal built-ins ]
// Every NVRTC program pays for NVRTC's built-in header, which declares the CUDA runtime's
// device-side API: texture and surface objects, cudaMalloc and the other device runtime
// functions, launches from device code, and the driver's types (cudaError_t, cudaStream_t).
// -minimal (NVRTC 12.4 and later) leaves those out: a one-line program compiles in 26 ms
// instead of 37 ms, examples/kernels.json's median program 0.81x as long
// (tools/bench/NOTES.md, compile-v6), and every one of its 106 binaries is byte for byte
// the one compiled without it. kernc's generated programs use none of it, but a snippet or
// preamble may (a texture object, CUB, which names cudaError_t), and a raw program often
// does: so only programs that ask (Program::try_minimal_builtins, set by code generation)
// compile with -minimal first, and one that fails so is compiled again without it, whose
// result or error is the one returned. The retry costs a failing program one front end; no
// binary depends on which of the two compiles made it, so the key does not say.
bool has_minimal_builtins(int major, int minor) { return major > 12 || (major == 12 && minor >= 4); }

// Whether a line of the log is NVRTC's cache trace (--enable-cache-trace).
bool is_cache_trace(const std::string& line) {
  for (const char* marker : {"[nvrtc cache]", "driver cache", "Cache miss, need to compile", "Failed to generate cache key"}) {
    if (line.find(marker) != std::string::npos) return true;
  }
  return false;
}

// Takes NVRTC's line about the PCH at `path` ("NAME": creating|using precompiled header file
// "PATH") out of `log`; whether it was there, i.e. whether NVRTC made or used that PCH. Its
// warnings about a PCH it refused name the file too, but never start so.
bool take_pch_line(std::string& log, const std::string& program_name, bool create, const std::string& path) {
  const std::string mark = fmt::format("\"{}\": {} precompiled header file \"{}\"", program_name,
                                       create ? "creating" : "using", path);
  const size_t at = log.find(mark);
  if (at == std::string::npos || (at > 0 && log[at - 1] != '\n')) return false;
  const size_t start = at;
  size_t end = log.find('\n', at);
  end = end == std::string::npos ? log.size() : end + 1;
  log.erase(start, end - start);
  while (!log.empty() && log.front() == '\n') log.erase(0, 1);
  while (!log.empty() && log.back() == '\n') log.pop_back();
  return true;
}

class NvrtcCompiler final : public Compiler, public PchCompiler {
 public:
  NvrtcCompiler(platform::NvrtcApi api, const CompilerLibraryPaths& paths)
      : api_(std::move(api)), driver_cache_allowed_(paths.driver_compile_cache) {
    ToolkitIncludes includes = cuda_toolkit_includes(paths, api_.library.path());
    identity_.include_dirs = std::move(includes.dirs);
    identity_.headers = std::move(includes.identity);
    identity_.include_source = std::move(includes.found_by);
    int major = 0, minor = 0;
    api_.nvrtcVersion(&major, &minor);
    identity_.backend = Backend::cuda;
    identity_.library_path = api_.library.path();
    identity_.version = fmt::format("{}.{}", major, minor);
    driver_cache_exists_ = has_driver_cache(major, minor);
    minimal_builtins_ = has_minimal_builtins(major, minor);
    if (api_.nvrtcGetNumSupportedArchs && api_.nvrtcGetSupportedArchs) {
      int count = 0;
      if (api_.nvrtcGetNumSupportedArchs(&count) == NVRTC_SUCCESS && count > 0) {
        archs_.resize(static_cast<size_t>(count));
        if (api_.nvrtcGetSupportedArchs(archs_.data()) != NVRTC_SUCCESS) archs_.clear();
      }
    }
    std::sort(archs_.begin(), archs_.end());
    identity_.targets = supported_targets();
  }

  Backend backend() const noexcept override { return Backend::cuda; }
  const CompilerIdentity& identity() const noexcept override { return identity_; }

  std::vector<std::string> supported_targets() const override {
    std::vector<std::string> names;
    for (int arch : archs_) names.push_back(fmt::format("sm_{}", arch));
    return names;
  }

  void check_target(const Target& target) const override {
    if (target.backend() != Backend::cuda) {
      throw Error(ErrorCode::unsupported_target,
                  fmt::format("NVRTC cannot compile for {}, a HIP target", target.str()));
    }
    if (archs_.empty()) return;  // an NVRTC too old to say; let it judge the flag itself
    if (std::find(archs_.begin(), archs_.end(), target.sm_number()) == archs_.end()) {
      throw Error(ErrorCode::unsupported_target,
                  fmt::format("NVRTC {} ({}) does not support {}; it supports {} (as sm_NN or compute_NN)",
                              identity_.version, identity_.library_path, target.str(),
                              fmt::join(supported_targets(), ", ")));
    }
  }

  std::vector<std::string> flags(const CompileOptions& options, const Target& target) const override {
    return nvrtc_flags(options, target, identity_.include_dirs);
  }

  CompiledProgram compile(const Program& program, const Target& target) const override {
    check_target(target);
    validate(program.options);
    return minimal_first(program, [&](bool minimal) {
      return compile_with_flags(program, target, compile_flags(program, target, minimal), nullptr);
    });
  }

  // NOTE [ precompiled headers ] (src/compiler/nvrtc_pch.hpp) says what this does and why.
  CompiledProgram compile_with_pch(const Program& program, const Target& target,
                                   const std::string& directory) const override {
    const std::string prefix = leading_includes(program.source);
    if (!api_.nvrtcGetPCHCreateStatus || directory.empty() || prefix.empty() ||
        !program.options.include_dirs.empty()) {
      return compile(program, target);
    }
    check_target(target);
    validate(program.options);
    // A PCH made with -minimal is a different PCH (its key holds every flag).
    return minimal_first(program, [&](bool minimal) {
      return compile_with_pch_flags(program, target, directory, prefix, compile_flags(program, target, minimal));
    });
  }

  size_t precompiled_headers() const override { return pch_.ready(); }
  size_t precompiled_header_uses() const override { return pch_.uses(); }

 private:
  // NOTE [ minimal built-ins ]: `compile(true)` when the program asks for it and NVRTC has
  // -minimal (not twice when its own flags already say -minimal), `compile(false)` after a
  // failed compile or otherwise.
  template <class Compile>
  CompiledProgram minimal_first(const Program& program, Compile&& compile) const {
    const auto& raw = program.options.raw_flags;
    const bool asked = std::find(raw.begin(), raw.end(), "-minimal") != raw.end() ||
                       std::find(raw.begin(), raw.end(), "--minimal") != raw.end();
    if (!program.try_minimal_builtins || !minimal_builtins_ || asked) return compile(false);
    try {
      return compile(true);
    } catch (const Error& error) {
      if (!error.compile_failure()) throw;
      return compile(false);
    }
  }

  CompiledProgram compile_with_pch_flags(const Program& program, const Target& target, const std::string& directory,
                                         const std::string& prefix, std::vector<std::string> flags) const {
    const PchSet::Plan plan = pch_.plan(pch_key(program, flags, prefix), directory);
    if (plan.mode == PchSet::Mode::none) return compile_with_flags(program, target, flags, nullptr);
    const bool create = plan.mode == PchSet::Mode::create;
    std::vector<std::string> pch_flags = flags;
    // NVRTC warns of each #line after the includes (generated programs wrap snippets in
    // them) while creating, though the PCH is made and used to the same bytes: not for the log.
    pch_flags.push_back("-diag-suppress=20283");
    pch_flags.push_back((create ? "--create-pch=" : "--use-pch=") + plan.path);
    nvrtcResult status = NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED;
    CompiledProgram result;
    try {
      result = compile_with_flags(program, target, pch_flags, &status);
    } catch (const Error& error) {
      // An error in the program's own code, after its includes: the same error as without
      // PCH once NVRTC's PCH line is out; anything else is found out by compiling without.
      // A failed compile that was to create the PCH is always compiled again without it: a
      // PCH NVRTC could not write (a full disk ends the compile with "Catastrophic error:
      // error while writing PCH file", its creating line before it) is not the program's
      // error, and the program's own error comes back the same from the compile without.
      const CompileFailure* failure = error.compile_failure();
      CompileFailure same = failure ? *failure : CompileFailure{};
      const bool confirmed = failure && take_pch_line(same.log, program.name, create, plan.path);
      if (create) pch_.finish_create(plan, confirmed && status == NVRTC_SUCCESS);
      if (!create && !confirmed) pch_.drop(plan);
      if (create || !confirmed) return compile_with_flags(program, target, flags, nullptr);
      same.options = flags;
      throw Error(error.what(), same);
    }
    const bool confirmed = take_pch_line(result.log, program.name, create, plan.path);
    if (create) pch_.finish_create(plan, confirmed && status == NVRTC_SUCCESS);
    if (!confirmed) {
      // NVRTC did not take the PCH (damaged, made with other options, or another heap):
      // its warnings are in the log, which must be the one a compile without PCH gives.
      if (!create) pch_.drop(plan);
      return compile_with_flags(program, target, flags, nullptr);
    }
    if (!create) pch_.count_use();
    result.flags = std::move(flags);  // the PCH flags shape no code; entries do not show them
    return result;
  }

  // flags(), -minimal when `minimal` (NOTE [ minimal built-ins ]) and the driver's cache
  // flag (NOTE [ the driver's compute cache ]): they shape no code and so are neither in
  // flags() nor the key, but are recorded with the compile.
  std::vector<std::string> compile_flags(const Program& program, const Target& target, bool minimal) const {
    auto flags = nvrtc_flags(program.options, target, identity_.include_dirs);
    if (minimal) flags.push_back("-minimal");
    if (driver_cache_exists_) flags.push_back(driver_cache_allowed_ ? "--enable-cache-trace" : "-no-cache");
    return flags;
  }

  // What a PCH is made of: the release and toolkit headers, every flag, the leading
  // #include lines and every in-memory header (NOTE [ precompiled headers ]).
  std::string pch_key(const Program& program, const std::vector<std::string>& flags, const std::string& prefix) const {
    platform::Sha256 hash;
    auto add = [&hash](std::string_view tag, std::string_view bytes) {
      hash.update(fmt::format("{}={}:", tag, bytes.size()));
      hash.update(bytes);
    };
    add("nvrtc", identity_.version);
    add("toolkit_headers", identity_.headers);
    for (const auto& flag : flags) add("flag", flag);
    add("prefix", prefix);
    for (const auto& [name, content] : program.options.headers) {
      add("header_name", name);
      add("header", content);
    }
    return hash.hex_digest();
  }

  CompiledProgram compile_with_flags(const Program& program, const Target& target, std::vector<std::string> flags,
                                     nvrtcResult* pch_status) const {
    try {
      bool driver_cache_hit = false;
      CompiledProgram result = rtc_compile(Calls{api_, identity_.version, &driver_cache_hit, target.binary_kind(), pch_status},
                                           program, target, std::move(flags), identity_.str());
      result.driver_cache_hit = driver_cache_hit;
      return result;
    } catch (const Error& error) {
      // NVRTC lists base architectures only, so a suffixed one it lacks (sm_80a) is found
      // out by the compile itself; say so as what it is, not as an error in the source.
      const auto* failure = error.compile_failure();
      if (failure && failure->log.find("--nv_arch") != std::string::npos) {
        throw Error(ErrorCode::unsupported_target,
                    fmt::format("NVRTC {} does not support {}: {}", identity_.version, target.str(),
                                first_error_line(failure->log)));
      }
      // A name expression is compiled in a map NVRTC appends ("__nv_name_map"): an error
      // there means the module defines no such name. Say which expression, not the map's line.
      if (failure && first_error_line(failure->log).rfind("__nv_name_map", 0) == 0) {
        throw Error(fmt::format("{}: {} not defined by the module ({})", program.name,
                                undefined_expressions(program.name_expressions, first_error_line(failure->log)),
                                first_error_line(failure->log)),
                    *failure);
      }
      throw;
    }
  }

  // Adapts NVRTC to rtc_compile; see rtc_compile.hpp.
  struct Calls {
    using Handle = nvrtcProgram;
    using Status = nvrtcResult;
    static constexpr Status kSuccess = NVRTC_SUCCESS;
    const platform::NvrtcApi& api;
    const std::string& version;
    bool* driver_cache_hit;  // set by tidy_log from the cache trace
    BinaryKind kind;
    nvrtcResult* pch_status = nullptr;  // receives nvrtcGetPCHCreateStatus when set

    Status create(Handle* p, const char* src, const char* name, int n, const char* const* h,
                  const char* const* hn) const {
      return api.nvrtcCreateProgram(p, src, name, n, h, hn);
    }
    void destroy(Handle* p) const { api.nvrtcDestroyProgram(p); }
    Status add_name_expression(Handle p, const char* e) const { return api.nvrtcAddNameExpression(p, e); }
    Status compile(Handle p, int n, const char* const* argv) const { return api.nvrtcCompileProgram(p, n, argv); }
    Status log_size(Handle p, size_t* size) const { return api.nvrtcGetProgramLogSize(p, size); }
    Status log(Handle p, char* out) const { return api.nvrtcGetProgramLog(p, out); }
    Status lowered_name(Handle p, const char* e, const char** out) const { return api.nvrtcGetLoweredName(p, e, out); }
    const char* error_string(Status s) const { return api.nvrtcGetErrorString(s); }
    static bool is_compilation_error(Status s) { return s == NVRTC_ERROR_COMPILATION; }
    // NVRTC already names the program; what is left to do is take out its cache trace,
    // reading from it whether the driver's cache served the binary.
    void tidy_log(std::string& log, const std::string&) const {
      if (log.find("[nvrtc cache]") == std::string::npos && log.find("driver cache") == std::string::npos) return;
      const char* hit = kind == BinaryKind::cubin ? "retrieved cached cubin" : "retrieved cached ptx";
      *driver_cache_hit = log.find(hit) != std::string::npos;
      std::string kept;
      for (size_t start = 0; start < log.size();) {
        size_t end = log.find('\n', start);
        if (end == std::string::npos) end = log.size();
        std::string line = log.substr(start, end - start);
        if (!is_cache_trace(line)) kept += (kept.empty() ? "" : "\n") + line;
        start = end + 1;
      }
      log = std::move(kept);
    }
    void compiled(Handle p) const {
      if (pch_status && api.nvrtcGetPCHCreateStatus) *pch_status = api.nvrtcGetPCHCreateStatus(p);
    }

    std::string binary(Handle p, const Target& target) const {
      size_t size = 0;
      std::string bytes;
      auto check = [this](Status s, const char* call) {
        if (s != kSuccess) throw Error(ErrorCode::compiler_api, fmt::format("{} failed: {}", call, error_string(s)));
      };
      if (target.binary_kind() == BinaryKind::cubin) {
        if (!api.nvrtcGetCUBIN || !api.nvrtcGetCUBINSize) {
          throw Error(ErrorCode::unsupported_target,
                      fmt::format("NVRTC {} cannot emit cubin (no nvrtcGetCUBIN); ask for compute_{} to get PTX",
                                  version, target.arch()));
        }
        check(api.nvrtcGetCUBINSize(p, &size), "nvrtcGetCUBINSize");
        bytes.resize(size);
        check(api.nvrtcGetCUBIN(p, bytes.data()), "nvrtcGetCUBIN");
      } else {
        check(api.nvrtcGetPTXSize(p, &size), "nvrtcGetPTXSize");
        bytes.resize(size);
        check(api.nvrtcGetPTX(p, bytes.data()), "nvrtcGetPTX");
        // PTX is text: keep the payload free of the C string's terminator.
        while (!bytes.empty() && bytes.back() == '\0') bytes.pop_back();
      }
      return bytes;
    }
  };

  platform::NvrtcApi api_;
  bool driver_cache_allowed_ = false;  // KERNC_DRIVER_COMPILE_CACHE
  bool driver_cache_exists_ = false;   // NVRTC 12.9+
  bool minimal_builtins_ = false;      // NVRTC 12.4+: -minimal (NOTE [ minimal built-ins ])
  CompilerIdentity identity_;
  std::vector<int> archs_;
  mutable PchSet pch_;
};

}  // namespace

std::shared_ptr<const Compiler> load_nvrtc(const CompilerLibraryPaths& paths) {
  return std::make_shared<NvrtcCompiler>(platform::NvrtcApi::load(paths.nvrtc_override, paths.cuda_home), paths);
}

}  // namespace kernc::compiler
