#pragma once
// Running test code in other processes: the test binary itself, started again with a
// doctest filter and environment variables that switch on one helper test case (for
// what must be checked across processes), and a forked child that may drop root (for
// what depends on who owns a directory). Helper test cases are marked doctest::skip(): a
// normal run reports them skipped, never passed; ChildProcess runs them with --no-skip.

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <system_error>
#include <vector>

extern char** environ;

namespace kernc::test {

/// The value of an environment variable, or "" when unset. Only helper test cases read
/// the environment: it is how a parent test hands them their instructions.
inline std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

/// A started copy of the test binary.
class ChildProcess {
 public:
  /// Starts KERNC_UNIT_TEST_BINARY running only the test cases matching `test_case`, with
  /// `extra_env` added to this process's environment and stdout/stderr sent to `output_path`.
  ChildProcess(const std::string& test_case, const std::map<std::string, std::string>& extra_env,
               const std::string& output_path) {
    std::vector<std::string> args = {KERNC_UNIT_TEST_BINARY, "--test-case=" + test_case, "--no-skip=true", "--no-intro=true",
                                     "--no-version=true"};
    std::vector<std::string> vars;
    for (char** entry = environ; *entry; ++entry) {
      std::string var = *entry;
      if (!extra_env.count(var.substr(0, var.find('=')))) vars.push_back(var);
    }
    for (const auto& [name, value] : extra_env) vars.push_back(name + "=" + value);
    std::vector<char*> argv, envp;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    for (auto& var : vars) envp.push_back(var.data());
    envp.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0600);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
    int error = ::posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (error != 0) throw std::system_error(error, std::generic_category(), "posix_spawn " + args[0]);
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ChildProcess(ChildProcess&& other) noexcept : pid_(other.pid_) { other.pid_ = -1; }
  ~ChildProcess() {
    if (pid_ > 0) wait();
  }

  /// Waits for the child; returns its exit status, or 128 + signal number if it was killed.
  int wait() {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
};

/// Runs `body` in a forked child; with `uid` >= 0 the child first switches to that user
/// and group (needs root). `body` returns "" on success or what went wrong; the child
/// never returns into doctest and never runs this process's exit handlers.
inline std::string run_forked(const std::function<std::string()>& body, int uid = -1) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return "pipe failed";
  pid_t pid = ::fork();
  if (pid < 0) return "fork failed";
  if (pid == 0) {
    ::close(pipe_fds[0]);
    std::string failure;
    if (uid >= 0 && (::setgid(static_cast<gid_t>(uid)) != 0 || ::setuid(static_cast<uid_t>(uid)) != 0)) {
      failure = "cannot switch to uid " + std::to_string(uid);
    } else {
      try {
        failure = body();
      } catch (const std::exception& error) {
        failure = std::string("exception: ") + error.what();
      }
    }
    ssize_t ignored = ::write(pipe_fds[1], failure.data(), failure.size());
    (void)ignored;
    ::_exit(failure.empty() ? 0 : 1);
  }
  ::close(pipe_fds[1]);
  std::string failure;
  char buffer[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    failure.append(buffer, static_cast<size_t>(n));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (failure.empty() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) failure = "child died";
  return failure;
}

}  // namespace kernc::test
