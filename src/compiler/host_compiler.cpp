#include "compiler/host_compiler.hpp"

#include <stdlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compiler/compile_log.hpp"
#include "compiler/host_entries.hpp"
#include "compiler/host_pch.hpp"
#include "compiler/host_source.hpp"
#include "compiler/pch_compiler.hpp"
#include "base/log.hpp"
#include "core/templates.hpp"
#include "host_abi.cuh"
#include "kernc/error.hpp"
#include "platform/files.hpp"
#include "platform/process.hpp"
#include "platform/sha256.hpp"

namespace kernc::compiler {

// NOTE [ host compiler ]
// The host backend (Backend::cpu) compiles a program's CUDA C++ with the system C++
// compiler into a shared object, as NVRTC compiles it into a cubin:
//  - the compiler is a separate program (g++ or clang++), found at run time and never
//    linked; what it reports (`--version`'s first line, `-dumpmachine`'s triple), the
//    fixed flags and the digest of the host headers below are its identity, so part of
//    every cache key it writes;
//  - a program is written to a fresh private directory with its headers, preceded by
//    templates/host_cuda.cuh (CUDA's builtins, barriers, atomics and warp functions on the
//    host) and followed by the tables that templates/host_abi.cuh defines (written by
//    src/compiler/host_entries.cpp), and compiled there; the directory is removed afterwards, and the log names the program's
//    own file name (a #line directive), never the directory;
//  - the target is an ISA level (cpu-x86-64-v3 → -march=x86-64-v3): the binary assumes
//    that level and no more, and the runtime never loads it on a CPU below it.
// The header files of the host environment every program is compiled with.
namespace {

const char* const kHostHeaders[] = {"host_abi.cuh", "host_cuda.cuh", "host_cooperative_groups.cuh"};

// Where each host header is served from, relative to the include directory.
std::string served_name(const std::string& name) {
  if (name == "host_cooperative_groups.cuh") return "cooperative_groups.h";
  return "kernc/" + name;
}

// Fixed flags: every host program gets them; part of the compiler's identity.
std::vector<std::string> fixed_flags() {
  // -ffp-contract=off: every float operation rounds once, whatever shape the optimizer
  // gives the loop. With contraction on, g++ fused a * b + c in one kernel of a reduction
  // and not in its other (a vectorized in-order reduction computes the products apart from
  // the adds), so the columns kernel and the one-output kernel disagreed in the last bit,
  // against NOTE [ host reduction ]. NVRTC's --fmad=true fuses on the GPU; the host and the
  // GPU agree within a rounding of the product (NOTE [ host and GPU results ], tests/gpu/
  // test_gpu_host_compare.cpp). -fno-math-errno: device math never sets errno, and
  // without it sqrt cannot be vectorized. -Bsymbolic: a program's references to its own
  // globals bind to them, not to a same-named symbol of the host process.
  return {"-fPIC", "-shared", "-Wl,-Bsymbolic", "-fno-math-errno", "-ffp-contract=off", "-fno-plt"};
}

// Whether a program's blocks need per-thread state (NOTE [ host fibers ],
// src/runtime/host_threads.hpp): its source or a header of its own uses a barrier or a
// warp function. kernc's own headers are left out: they define the warp functions the
// templates use, and a template that calls one says so in its own source.
bool program_needs_threads(const Program& program) {
  if (needs_threads(program.source)) return true;
  for (const auto& [name, content] : program.options.headers) {
    if (name.rfind("kernc/", 0) != 0 && needs_threads(content)) return true;
  }
  return false;
}

struct TempDir {
  std::string path;
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/kernc-host-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw Error(ErrorCode::io, fmt::format("cannot create a directory for a host compile under {}: {}",
                                             base && *base ? base : "/tmp", std::strerror(errno)));
    }
    path = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

void check_header_name(const std::string& program, const std::string& name) {
  if (name.empty() || name.front() == '/' || name.find("..") != std::string::npos) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: header name \"{}\" cannot be written for the host compiler (it must be a "
                            "relative path without \"..\")", program, name));
  }
}

// What the log of a failed host compile says first. A construct the host cannot run
// (templates/host_cuda.cuh refuses inline asm, textures and surfaces) fails inside that
// header, with the user's line only in a note; the headline then names the construct at
// the user's line ("k.cu:3:3: inline PTX asm cannot run on the host backend ..."), so
// that the first thing a user reads says what and where.
std::string host_failure_headline(const std::string& log, const std::string& program_name) {
  const std::string first = first_error_line(log);
  std::string construct;
  if (const auto at = log.find("static assertion failed: "); at != std::string::npos) {
    const auto end = log.find('\n', at);
    const std::string text = log.substr(at + 25, end == std::string::npos ? std::string::npos : end - at - 25);
    if (text.find("cannot run on the host backend") != std::string::npos) construct = text;
  }
  for (const char* kind : {"texture", "surface"}) {
    if (construct.empty() && log.find(std::string("__") + kind + "_objects_cannot_run_on_the_host_backend") != std::string::npos) {
      construct = fmt::format("{} objects cannot run on the host backend (Backend::cpu)", kind);
    }
  }
  if (construct.empty()) return first;
  // The user's place: the first log line that starts with the program's own file name.
  size_t start = 0;
  while (start < log.size()) {
    const size_t end = log.find('\n', start);
    const std::string line = log.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (line.rfind(program_name + ":", 0) == 0 && line.size() > program_name.size() + 1 &&
        std::isdigit(static_cast<unsigned char>(line[program_name.size() + 1]))) {
      size_t place = program_name.size() + 1;
      while (place < line.size() && (std::isdigit(static_cast<unsigned char>(line[place])) || line[place] == ':')) ++place;
      return fmt::format("{} {}", line.substr(0, place), construct);
    }
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return construct;
}

class HostCompiler final : public Compiler, public PchCompiler {
 public:
  HostCompiler(std::string command, std::string version, std::string triple)
      : command_(std::move(command)), triple_(std::move(triple)) {
    identity_.backend = Backend::cpu;
    identity_.library_path = command_;
    identity_.version = fmt::format("{} ({})", version, triple_);
    identity_.targets = supported_targets();
    platform::Sha256 hash;
    for (const char* name : kHostHeaders) hash.update(codegen::template_file(name));
    identity_.headers = fmt::format("host abi {}, flags {}, headers sha256:{}", KERNC_HOST_ABI_VERSION,
                                    fmt::join(fixed_flags(), " "), hash.hex_digest().substr(0, 16));
    identity_.include_source = "templates/host_cuda.cuh (built in)";
  }

  Backend backend() const noexcept override { return Backend::cpu; }
  const CompilerIdentity& identity() const noexcept override { return identity_; }

  std::vector<std::string> supported_targets() const override {
    if (triple_.rfind("aarch64", 0) == 0) return {"cpu-armv8-a"};
    if (triple_.rfind("x86_64", 0) == 0) return {"cpu-x86-64", "cpu-x86-64-v2", "cpu-x86-64-v3", "cpu-x86-64-v4"};
    return {};
  }

  void check_target(const Target& target) const override {
    const auto names = supported_targets();
    if (target.backend() != Backend::cpu || std::find(names.begin(), names.end(), target.str()) == names.end()) {
      throw Error(ErrorCode::unsupported_target,
                  fmt::format("the host compiler {} ({}) cannot compile for {}; it compiles for {}", command_,
                              triple_, target.str(), names.empty() ? "nothing kernc knows" : fmt::format("{}", fmt::join(names, ", "))));
    }
  }

  std::vector<std::string> flags(const CompileOptions& options, const Target& target) const override {
    return host_flags(options, target);
  }

  CompiledProgram compile(const Program& program, const Target& target) const override {
    check_target(target);
    validate(program.options);
    return compile_in(program, target, {});
  }

  // NOTE [ host precompiled headers ] (src/compiler/host_pch.hpp).
  CompiledProgram compile_with_pch(const Program& program, const Target& target,
                                   const std::string& directory) const override {
    check_target(target);
    validate(program.options);
    if (directory.empty() || !program.options.include_dirs.empty()) return compile_in(program, target, {});
    const std::string key = pch_key(program, target);
    const std::string header = pch_.header(key, directory, [&](const std::string& prefix, const std::string& gch) {
      return create_pch(program, target, prefix, gch);
    });
    if (header.empty()) return compile_in(program, target, {});
    try {
      CompiledProgram result = compile_in(program, target, header);
      pch_.count_use();
      return result;
    } catch (const Error& error) {
      if (!error.compile_failure()) throw;
      CompiledProgram result = compile_in(program, target, {});  // the program's own error, if it is one
      pch_.refuse(key);
      return result;
    }
  }

  size_t precompiled_headers() const override { return pch_.ready(); }
  size_t precompiled_header_uses() const override { return pch_.uses(); }

 private:
  // The files of a compile's include directory: the host headers, then the program's own
  // (which may replace one).
  static std::map<std::string, std::string> include_files(const Program& program) {
    std::map<std::string, std::string> files;
    for (const char* name : kHostHeaders) files[served_name(name)] = std::string(codegen::template_file(name));
    for (const auto& [name, content] : program.options.headers) {
      check_header_name(program.name, name);
      files[name] = content;
    }
    return files;
  }

  static void write_includes(const std::string& directory, const Program& program) {
    for (const auto& [name, content] : include_files(program)) write_file(directory + "/include/" + name, content);
  }

  // What a host PCH is made of (NOTE [ host precompiled headers ]).
  std::string pch_key(const Program& program, const Target& target) const {
    platform::Sha256 hash;
    auto add = [&hash](std::string_view tag, std::string_view bytes) {
      hash.update(fmt::format("{}={}:", tag, bytes.size()));
      hash.update(bytes);
    };
    add("compiler", identity_.str());
    for (const auto& flag : host_flags(program.options, target)) add("flag", flag);
    add("prefix", kHostPrefix);
    for (const auto& [name, content] : include_files(program)) {
      add("header_name", name);
      add("header", content);
    }
    return hash.hex_digest();
  }

  // Compiles `prefix` (kHostPrefix) into the GCC PCH `gch`, with the flags and headers of
  // `program`'s compiles.
  bool create_pch(const Program& program, const Target& target, const std::string& prefix, const std::string& gch) const {
    TempDir dir;
    write_includes(dir.path, program);
    std::vector<std::string> argv{command_};
    // The compile's flags but the link's: with -shared, g++ would link an empty shared
    // object under the .gch name (which GCC then reports as "not a PCH file").
    for (const auto& flag : host_flags(program.options, target)) {
      if (flag != "-shared" && flag.rfind("-Wl,", 0) != 0) argv.push_back(flag);
    }
    for (const auto& arg : {std::string("-Iinclude"), std::string("-x"), std::string("c++-header"), prefix,
                            std::string("-o"), gch}) {
      argv.push_back(arg);
    }
    const platform::ProcessResult run = platform::run_process(argv, dir.path);
    if (run.exit_status != 0) detail::logger().debug("no host PCH for {}: {}", program.name, first_error_line(run.output));
    return run.exit_status == 0;
  }

  // A compile, with `-include pch_header` when it is not empty.
  CompiledProgram compile_in(const Program& program, const Target& target, const std::string& pch_header) const {
    const auto start = std::chrono::steady_clock::now();
    TempDir dir;
    write_includes(dir.path, program);
    std::string source = kHostPrefix;
    source += fmt::format("#line 1 \"{}\"\n", program.name);
    source += rewrite_dynamic_shared(program.source);
    source += host_entries(extern_c_kernels(program.source), program.name_expressions, program_needs_threads(program),
                           target.str());
    write_file(dir.path + "/program.cpp", source);

    CompiledProgram result;
    result.target = target;
    result.flags = host_flags(program.options, target);
    result.compiler = identity_.str();
    std::vector<std::string> argv{command_};
    argv.insert(argv.end(), result.flags.begin(), result.flags.end());
    argv.emplace_back("-Iinclude");
    if (!pch_header.empty()) {
      argv.emplace_back("-include");
      argv.push_back(pch_header);
    }
    for (const auto& flag : {"-o", "program.so", "program.cpp"}) argv.emplace_back(flag);
    platform::ProcessResult run = platform::run_process(argv, dir.path);
    result.log = std::move(run.output);
    while (!result.log.empty() && result.log.back() == '\n') result.log.pop_back();
    if (run.exit_status != 0) {
      std::string why = host_failure_headline(result.log, program.name);
      if (why.empty()) why = fmt::format("{} exited with status {}", command_, run.exit_status);
      throw Error(fmt::format("{} failed to compile for {}: {}", program.name, target.str(), why),
                  CompileFailure{program.name, target.str(), result.log, program.source, result.flags});
    }
    result.binary = platform::read_file(dir.path + "/program.so");
    for (size_t k = 0; k < program.name_expressions.size(); ++k) {
      result.lowered_names[program.name_expressions[k]] = host_lowered_name(k);
    }
    result.compile_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return result;
  }

  static void write_file(const std::string& path, std::string_view content) {
    platform::make_directories(std::filesystem::path(path).parent_path().string());
    platform::write_file_atomic(path, content);
  }

  std::string command_;
  std::string triple_;
  CompilerIdentity identity_;
  mutable HostPchSet pch_;
};

std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

}  // namespace

std::vector<std::string> host_flags(const CompileOptions& options, const Target& target) {
  std::vector<std::string> flags;
  flags.push_back("-std=" + options.language_standard);
  flags.push_back(options.debug ? "-O0" : "-O3");
  flags.push_back("-march=" + target.arch());
  const auto fixed = fixed_flags();
  flags.insert(flags.end(), fixed.begin(), fixed.end());
  for (const auto& [name, value] : options.defines) {
    flags.push_back(value.empty() ? "-D" + name : "-D" + name + "=" + value);
  }
  for (const auto& dir : options.include_dirs) flags.push_back("-I" + dir);
  if (options.fast_math) flags.push_back("-ffast-math");
  if (options.line_info) flags.push_back("-g1");
  if (options.debug) flags.push_back("-g");
  flags.insert(flags.end(), options.raw_flags.begin(), options.raw_flags.end());
  return flags;
}

std::shared_ptr<const Compiler> load_host_compiler(const CompilerLibraryPaths& paths) {
  std::vector<std::string> candidates;
  if (!paths.host_cxx.empty()) {
    candidates.push_back(paths.host_cxx);
  } else {
    candidates = {"g++", "clang++", "c++"};
  }
  std::string tried;
  for (const auto& candidate : candidates) {
    const std::string found = platform::find_program(candidate);
    if (found.empty()) {
      tried += fmt::format("{}{} (not found{})", tried.empty() ? "" : ", ", candidate,
                           candidate.find('/') == std::string::npos ? " on PATH" : "");
      continue;
    }
    const auto version = platform::run_process({found, "--version"}, "");
    const auto machine = platform::run_process({found, "-dumpmachine"}, "");
    if (version.exit_status != 0 || machine.exit_status != 0) {
      tried += fmt::format("{}{} (does not answer --version and -dumpmachine)", tried.empty() ? "" : ", ", found);
      continue;
    }
    return std::make_shared<HostCompiler>(found, first_line(version.output), first_line(machine.output));
  }
  throw Error(ErrorCode::library_not_found,
              fmt::format("no host C++ compiler for the cpu backend: tried {}{}", tried,
                          paths.host_cxx.empty() ? "; install g++ (apt-get install g++) or set KERNC_HOST_CXX"
                                                 : " (from KERNC_HOST_CXX)"));
}

}  // namespace kernc::compiler
