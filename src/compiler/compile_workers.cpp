#include "compiler/compile_workers.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "base/log.hpp"
#include "compiler/pch_compiler.hpp"
#include "kernc/compiler.hpp"
#include "kernc/error.hpp"
#include "kernc/version.hpp"

extern char** environ;

namespace kernc {

// NOTE [ compile worker processes ]
// NVRTC runs part of every compile under one process-wide mutex: with NVRTC 13.0, about a
// quarter of a compile's CPU time (measured by interposing pthread_mutex_lock on libnvrtc,
// tools/bench/NOTES.md, jobs-v1), so threads of one process cannot go past about 4x however
// many cores there are; HIPRTC takes turns for the whole compile (NOTE [ HIPRTC threads ]).
// Processes share no such lock. compile_in_workers runs each compile in one of up to N
// worker processes, started on demand and kept for the next compile: a program (the kernc
// CLI re-executing itself) that calls serve_compile_requests on fd kWorkerFd, its end of a
// socket pair. The worker loads the same compiler from the same paths and says who it is
// first; a worker whose kernc version or compiler identity differs from the client's is
// refused, so keys and binaries are the same as in-process compiles (the driver's compute
// cache setting goes with the paths, a hit of it comes back as one). Requests and replies
// are frames (8-byte little-endian length, CBOR). A compile error comes back as the same kernc::Error; a worker
// that dies or breaks the protocol fails the compile it was running with a compiler_api
// error naming the program, the target, the worker's pid and how it ended (a crash of the
// compiler on one program does not take the caller down), and the next compile starts a
// fresh worker. The host backend is not wrapped: it already runs the C++ compiler as a process.

namespace compiler {
namespace {

using nlohmann::json;

void write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(ErrorCode::io, fmt::format("the compile worker's socket: {}", std::strerror(errno)));
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

// False at a clean end of stream before the first byte; throws on a short read.
bool read_all(int fd, char* data, std::size_t size) {
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::read(fd, data + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(ErrorCode::io, fmt::format("the compile worker's socket: {}", std::strerror(errno)));
    if (n == 0) {
      if (got == 0) return false;
      throw Error(ErrorCode::io, "the compile worker's socket closed in the middle of a message");
    }
    got += static_cast<std::size_t>(n);
  }
  return true;
}

void send_frame(int fd, const json& message) {
  const std::vector<std::uint8_t> bytes = json::to_cbor(message);
  char length[8];
  std::uint64_t size = bytes.size();
  for (int k = 0; k < 8; ++k) length[k] = static_cast<char>((size >> (8 * k)) & 0xff);
  write_all(fd, length, sizeof length);
  write_all(fd, reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// Nothing at a clean end of stream.
std::optional<json> receive_frame(int fd) {
  unsigned char length[8];
  if (!read_all(fd, reinterpret_cast<char*>(length), sizeof length)) return std::nullopt;
  std::uint64_t size = 0;
  for (int k = 7; k >= 0; --k) size = (size << 8) | length[k];
  if (size > kMaxFrameBytes) {
    throw Error(ErrorCode::io, fmt::format("a compile worker's message of {} bytes is over the limit", size));
  }
  std::vector<std::uint8_t> bytes(size);
  if (size > 0 && !read_all(fd, reinterpret_cast<char*>(bytes.data()), size)) {
    throw Error(ErrorCode::io, "the compile worker's socket closed in the middle of a message");
  }
  try {
    return json::from_cbor(bytes);
  } catch (const json::exception& error) {
    throw Error(ErrorCode::io, fmt::format("a compile worker's message is malformed: {}", error.what()));
  }
}

json paths_json(const CompilerLibraryPaths& paths) {
  return {{"nvrtc_override", paths.nvrtc_override}, {"hiprtc_override", paths.hiprtc_override},
          {"cuda_home", paths.cuda_home},           {"rocm_home", paths.rocm_home},
          {"host_cxx", paths.host_cxx},             {"cuda_include", paths.cuda_include ? json(*paths.cuda_include) : json()},
          {"rocm_include", paths.rocm_include ? json(*paths.rocm_include) : json()},
          {"driver_compile_cache", paths.driver_compile_cache}};
}

CompilerLibraryPaths paths_from(const json& j) {
  CompilerLibraryPaths paths;
  paths.nvrtc_override = j.at("nvrtc_override").get<std::string>();
  paths.hiprtc_override = j.at("hiprtc_override").get<std::string>();
  paths.cuda_home = j.at("cuda_home").get<std::string>();
  paths.rocm_home = j.at("rocm_home").get<std::string>();
  paths.host_cxx = j.at("host_cxx").get<std::string>();
  if (!j.at("cuda_include").is_null()) paths.cuda_include = j.at("cuda_include").get<std::string>();
  if (!j.at("rocm_include").is_null()) paths.rocm_include = j.at("rocm_include").get<std::string>();
  paths.driver_compile_cache = j.at("driver_compile_cache").get<bool>();
  return paths;
}

json program_json(const Program& program, const Target& target) {
  const CompileOptions& o = program.options;
  return {{"name", program.name},
          {"source", program.source},
          {"name_expressions", program.name_expressions},
          {"target", target.str()},
          {"try_minimal_builtins", program.try_minimal_builtins},
          {"options",
           {{"language_standard", o.language_standard},
            {"defines", o.defines},
            {"include_dirs", o.include_dirs},
            {"headers", o.headers},
            {"fast_math", o.fast_math},
            {"line_info", o.line_info},
            {"debug", o.debug},
            {"raw_flags", o.raw_flags}}}};
}

Program program_from(const json& j) {
  Program program;
  program.name = j.at("name").get<std::string>();
  program.source = j.at("source").get<std::string>();
  program.name_expressions = j.at("name_expressions").get<std::vector<std::string>>();
  program.try_minimal_builtins = j.at("try_minimal_builtins").get<bool>();
  const json& o = j.at("options");
  program.options.language_standard = o.at("language_standard").get<std::string>();
  program.options.defines = o.at("defines").get<std::map<std::string, std::string>>();
  program.options.include_dirs = o.at("include_dirs").get<std::vector<std::string>>();
  program.options.headers = o.at("headers").get<std::map<std::string, std::string>>();
  program.options.fast_math = o.at("fast_math").get<bool>();
  program.options.line_info = o.at("line_info").get<bool>();
  program.options.debug = o.at("debug").get<bool>();
  program.options.raw_flags = o.at("raw_flags").get<std::vector<std::string>>();
  return program;
}

json compiled_json(const CompiledProgram& compiled) {
  return {{"ok", true},
          {"target", compiled.target.str()},
          {"binary", json::binary(std::vector<std::uint8_t>(compiled.binary.begin(), compiled.binary.end()))},
          {"lowered_names", compiled.lowered_names},
          {"log", compiled.log},
          {"flags", compiled.flags},
          {"compiler", compiled.compiler},
          {"compile_ms", compiled.compile_ms},
          {"driver_cache_hit", compiled.driver_cache_hit}};
}

CompiledProgram compiled_from(const json& j) {
  CompiledProgram compiled;
  compiled.target = Target::parse(j.at("target").get<std::string>());
  const auto& binary = j.at("binary").get_binary();
  compiled.binary.assign(binary.begin(), binary.end());
  compiled.lowered_names = j.at("lowered_names").get<std::map<std::string, std::string>>();
  compiled.log = j.at("log").get<std::string>();
  compiled.flags = j.at("flags").get<std::vector<std::string>>();
  compiled.compiler = j.at("compiler").get<std::string>();
  compiled.compile_ms = j.at("compile_ms").get<double>();
  compiled.driver_cache_hit = j.at("driver_cache_hit").get<bool>();
  return compiled;
}

json error_json(const Error& error) {
  json reply = {{"ok", false}, {"code", to_string(error.code())}, {"message", error.what()}};
  if (const CompileFailure* failure = error.compile_failure()) {
    reply["failure"] = {{"program_name", failure->program_name},
                        {"target", failure->target},
                        {"log", failure->log},
                        {"source", failure->source},
                        {"options", failure->options}};
  }
  return reply;
}

Error error_from(const json& j) {
  const std::string message = j.at("message").get<std::string>();
  if (j.contains("failure")) {
    const json& f = j.at("failure");
    return Error(message, CompileFailure{f.at("program_name").get<std::string>(), f.at("target").get<std::string>(),
                                         f.at("log").get<std::string>(), f.at("source").get<std::string>(),
                                         f.at("options").get<std::vector<std::string>>()});
  }
  const std::string code = j.at("code").get<std::string>();
  for (int k = 0; k <= static_cast<int>(ErrorCode::device_fault); ++k) {
    if (code == to_string(static_cast<ErrorCode>(k))) return Error(static_cast<ErrorCode>(k), message);
  }
  return Error(ErrorCode::compiler_api, message);
}

// "exited with status 3", "was killed by signal 9 (Killed)".
std::string how_it_ended(pid_t pid) {
  int status = 0;
  pid_t done;
  do {
    done = ::waitpid(pid, &status, 0);
  } while (done < 0 && errno == EINTR);
  if (done < 0) return "ended";
  if (WIFSIGNALED(status)) {
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status), ::strsignal(WTERMSIG(status)));
  }
  return fmt::format("exited with status {}", WEXITSTATUS(status));
}

struct Worker {
  pid_t pid = -1;
  int fd = -1;
};

class WorkerCompiler final : public Compiler, public PchCompiler {
 public:
  WorkerCompiler(std::shared_ptr<const Compiler> inner, CompilerLibraryPaths paths, std::vector<std::string> command,
                 unsigned max_workers)
      : inner_(std::move(inner)),
        paths_(std::move(paths)),
        command_(std::move(command)),
        max_workers_(std::max(1u, max_workers)) {
    if (command_.empty()) throw Error(ErrorCode::invalid_argument, "the compile worker command is empty");
  }

  ~WorkerCompiler() override {
    // Every compile has returned its worker by now: closing a worker's socket ends its loop.
    // All sockets first, then the waits: the workers end side by side. Closing and waiting
    // one at a time made a -j 16 precompile wait about 100 ms after its last compile, 16
    // workers' exits in a row (tools/bench/NOTES.md, jobs-v3).
    for (Worker& worker : idle_) ::close(worker.fd);
    for (Worker& worker : idle_) how_it_ended(worker.pid);
  }

  Backend backend() const noexcept override { return inner_->backend(); }
  const CompilerIdentity& identity() const noexcept override { return inner_->identity(); }
  std::vector<std::string> supported_targets() const override { return inner_->supported_targets(); }
  void check_target(const Target& target) const override { inner_->check_target(target); }
  std::vector<std::string> flags(const CompileOptions& options, const Target& target) const override {
    return inner_->flags(options, target);
  }

  CompiledProgram compile(const Program& program, const Target& target) const override {
    return compile_in_worker(program, target, nullptr);
  }

  // Each worker keeps its own precompiled headers (they cannot cross processes, NOTE
  // [ precompiled headers ] in nvrtc_pch.hpp), created in the caller's private directory.
  CompiledProgram compile_with_pch(const Program& program, const Target& target,
                                   const std::string& directory) const override {
    return compile_in_worker(program, target, &directory);
  }
  // Those of the workers are theirs: none is held in this process.
  size_t precompiled_headers() const override { return 0; }
  // The workers' own counts, as each last reported it.
  size_t precompiled_header_uses() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t uses = 0;
    for (const auto& [pid, count] : pch_uses_) uses += count;
    return uses;
  }

 private:
  CompiledProgram compile_in_worker(const Program& program, const Target& target, const std::string* pch_directory) const {
    check_target(target);
    validate(program.options);
    json request = {{"compile", program_json(program, target)}};
    if (pch_directory) request["pch_directory"] = *pch_directory;
    Worker worker = acquire();
    std::optional<json> reply;
    try {
      send_frame(worker.fd, request);
      reply = receive_frame(worker.fd);
      if (!reply) throw Error(ErrorCode::io, "no reply");
    } catch (const Error& error) {
      ::close(worker.fd);
      const std::string ended = how_it_ended(worker.pid);
      release(std::nullopt);
      throw Error(ErrorCode::compiler_api,
                  fmt::format("the compile worker process (pid {}, {}) {} while compiling {} for {} ({}); compile "
                              "this program in one process to see whether the compiler itself crashes on it",
                              worker.pid, command_.front(), ended, program.name, target.str(), error.what()));
    }
    release(worker);
    try {
      if (reply->contains("pch_uses")) {
        std::lock_guard<std::mutex> lock(mutex_);
        pch_uses_[worker.pid] = reply->at("pch_uses").get<size_t>();
      }
      if (reply->at("ok").get<bool>()) return compiled_from(*reply);
    } catch (const json::exception& error) {
      throw Error(ErrorCode::compiler_api,
                  fmt::format("a compile worker's reply for {} is malformed: {}", program.name, error.what()));
    }
    throw error_from(*reply);
  }

  // An idle worker, or a new one while fewer than max_workers_ run; else waits for one.
  Worker acquire() const {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [this] { return !idle_.empty() || started_ < max_workers_; });
      if (!idle_.empty()) {
        Worker worker = idle_.back();
        idle_.pop_back();
        return worker;
      }
      ++started_;
    }
    try {
      return start();
    } catch (...) {
      release(std::nullopt);
      throw;
    }
  }

  // Gives a worker back for the next compile; nothing: the caller's worker is gone.
  void release(std::optional<Worker> worker) const {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (worker) {
        idle_.push_back(*worker);
      } else {
        --started_;
      }
    }
    cv_.notify_one();
  }

  Worker start() const {
    int sockets[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
      throw Error(ErrorCode::io, fmt::format("cannot make a socket pair for a compile worker: {}", std::strerror(errno)));
    }
    // dup2 onto itself would keep close-on-exec: move the worker's end off kWorkerFd first.
    if (sockets[1] == kWorkerFd) {
      const int moved = ::fcntl(sockets[1], F_DUPFD_CLOEXEC, kWorkerFd + 1);
      ::close(sockets[1]);
      sockets[1] = moved;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);  // stdout is the caller's
    posix_spawn_file_actions_adddup2(&actions, sockets[1], kWorkerFd);
    std::vector<char*> argv;
    for (const auto& arg : command_) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    pid_t pid = -1;
    const int failed = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(sockets[1]);
    if (failed != 0) {
      ::close(sockets[0]);
      throw Error(ErrorCode::io, fmt::format("cannot start the compile worker {}: {}", command_.front(),
                                             std::strerror(failed)));
    }
    Worker worker{pid, sockets[0]};
    try {
      send_frame(worker.fd, {{"hello", {{"backend", to_string(backend())}, {"paths", paths_json(paths_)}}}});
      const std::optional<json> reply = receive_frame(worker.fd);
      if (!reply) throw Error(ErrorCode::io, "it closed its socket");
      if (!reply->at("ok").get<bool>()) throw error_from(*reply);
      // Another version of kernc may compile the same key with other flags or headers: only
      // a worker of this version serves this process.
      const std::string worker_version = reply->contains("kernc") ? reply->at("kernc").get<std::string>() : "before 0.2";
      if (worker_version != version()) {
        throw Error(ErrorCode::compiler_api, fmt::format("it is kernc {}, this process kernc {}; run the kernc "
                                                         "executable of this build as the worker",
                                                         worker_version, version()));
      }
      const std::string tag = reply->at("tag").get<std::string>();
      if (tag != identity().tag()) {
        throw Error(ErrorCode::compiler_api,
                    fmt::format("it loaded {} ({}, tag {}), this process {} ({}, tag {})",
                                reply->at("compiler").get<std::string>(), reply->at("library").get<std::string>(), tag,
                                identity().str(), identity().library_path, identity().tag()));
      }
    } catch (const std::exception& error) {
      ::close(worker.fd);
      const std::string ended = how_it_ended(pid);
      throw Error(ErrorCode::compiler_api, fmt::format("the compile worker process {} (pid {}) did not start: {} (it {})",
                                                       command_.front(), pid, error.what(), ended));
    }
    detail::logger().info("started compile worker process {} for {}", pid, identity().str());
    return worker;
  }

  std::shared_ptr<const Compiler> inner_;
  CompilerLibraryPaths paths_;
  std::vector<std::string> command_;
  unsigned max_workers_;
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  mutable std::vector<Worker> idle_;  // under mutex_
  mutable unsigned started_ = 0;      // workers alive, idle or busy; under mutex_
  mutable std::map<pid_t, size_t> pch_uses_;  // each worker's last reported count; under mutex_
};

}  // namespace
}  // namespace compiler

std::shared_ptr<const Compiler> compile_in_workers(Backend backend, const CompilerLibraryPaths& paths,
                                                   std::vector<std::string> worker_command, unsigned max_workers) {
  std::shared_ptr<const Compiler> inner = load_compiler(backend, paths);
  if (backend == Backend::cpu) return inner;  // the host compiler already runs as a process
  return std::make_shared<compiler::WorkerCompiler>(std::move(inner), paths, std::move(worker_command), max_workers);
}

int serve_compile_requests(int fd) {
  using compiler::receive_frame;
  using compiler::send_frame;
  std::shared_ptr<const Compiler> compiler;
  try {
    while (std::optional<nlohmann::json> request = receive_frame(fd)) {
      try {
        if (request->contains("hello")) {
          const auto& hello = request->at("hello");
          const std::string name = hello.at("backend").get<std::string>();
          Backend backend = Backend::cuda;
          for (Backend known : {Backend::cuda, Backend::hip, Backend::cpu}) backend = name == to_string(known) ? known : backend;
          compiler = load_compiler(backend, compiler::paths_from(hello.at("paths")));
          send_frame(fd, {{"ok", true},
                          {"kernc", version()},
                          {"tag", compiler->identity().tag()},
                          {"compiler", compiler->identity().str()},
                          {"library", compiler->identity().library_path}});
          continue;
        }
        if (!compiler) throw Error(ErrorCode::invalid_argument, "a compile request came before the hello");
        const auto& compile = request->at("compile");
        const Program program = compiler::program_from(compile);
        const Target target = Target::parse(compile.at("target").get<std::string>());
        const auto* pch = dynamic_cast<const compiler::PchCompiler*>(compiler.get());
        if (pch && request->contains("pch_directory")) {
          nlohmann::json reply =
              compiler::compiled_json(pch->compile_with_pch(program, target, request->at("pch_directory").get<std::string>()));
          reply["pch_uses"] = pch->precompiled_header_uses();  // the client's precompiled_header_uses()
          send_frame(fd, reply);
        } else {
          send_frame(fd, compiler::compiled_json(compiler->compile(program, target)));
        }
      } catch (const Error& error) {
        send_frame(fd, compiler::error_json(error));
      } catch (const nlohmann::json::exception& error) {
        send_frame(fd, compiler::error_json(Error(ErrorCode::invalid_argument,
                                                  fmt::format("a malformed compile request: {}", error.what()))));
      }
    }
  } catch (const Error& error) {
    detail::logger().error("compile worker: {}", error.what());
    return 1;
  }
  return 0;
}

}  // namespace kernc
