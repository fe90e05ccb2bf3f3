#pragma once
// A real redis-server for the remote cache tests: started on loopback on a free port,
// with its own directory (socket, log; no persistence), stopped with the fixture. Tests
// pause it (SIGSTOP), kill it, and talk to it directly through platform::RedisConnection
// to configure it or plant entries.

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "platform/redis_connection.hpp"
#include "temp_dir.hpp"

extern char** environ;

namespace kernc::test {

class RedisServer {
 public:
  /// Starts redis-server with `extra` arguments (e.g. {"--requirepass", "pw"}).
  explicit RedisServer(const std::vector<std::string>& extra = {}) {
#ifndef KERNC_REDIS_SERVER
    throw std::runtime_error("redis-server was not found when the tests were configured: install Debian's "
                             "redis-server (tools/install-deps does) and re-run cmake");
#else
    for (int attempt = 0; attempt < 5 && pid_ <= 0; ++attempt) {
      port_ = free_port();
      std::vector<std::string> args = {KERNC_REDIS_SERVER, "--port", std::to_string(port_), "--bind", "127.0.0.1",
                                       "--save", "", "--appendonly", "no", "--dir", dir_.path(),
                                       "--logfile", dir_.path() + "/redis.log", "--unixsocket", socket_path(),
                                       "--unixsocketperm", "700", "--daemonize", "no"};
      args.insert(args.end(), extra.begin(), extra.end());
      std::vector<char*> argv;
      for (auto& arg : args) argv.push_back(arg.data());
      argv.push_back(nullptr);
      if (::posix_spawn(&pid_, argv[0], nullptr, nullptr, argv.data(), environ) != 0) {
        throw std::runtime_error("cannot start " + args[0]);
      }
      if (!wait_until_up()) stop();  // lost the port to someone else: try another
    }
    if (pid_ <= 0) throw std::runtime_error("redis-server did not come up; see " + dir_.path() + "/redis.log");
#endif
  }
  ~RedisServer() { stop(); }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  int port() const { return port_; }
  std::string socket_path() const { return dir_.path() + "/redis.sock"; }
  std::string url(const std::string& options = "") const {
    return fmt::format("redis://127.0.0.1:{}{}", port_, options.empty() ? "" : "?" + options);
  }

  /// A direct connection, for configuring the server and planting data.
  platform::RedisConnection connect() const {
    return platform::RedisConnection(platform::RedisEndpoint{"127.0.0.1", port_, ""}, std::chrono::seconds(2),
                                     std::chrono::seconds(5));
  }
  platform::RedisReply command(const std::vector<std::string_view>& args, const std::string& password = "") const {
    auto connection = connect();
    if (!password.empty()) connection.command({"AUTH", password});
    return connection.command(args);
  }

  void pause() { ::kill(pid_, SIGSTOP); }
  void resume() { ::kill(pid_, SIGCONT); }
  /// SIGKILL, as a crash or an OOM killer would.
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGCONT);
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }

 private:
  static int free_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    socklen_t size = sizeof address;
    if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
      if (fd >= 0) ::close(fd);
      throw std::runtime_error("cannot find a free port");
    }
    ::close(fd);
    return ntohs(address.sin_port);
  }

  bool wait_until_up() {
    for (int i = 0; i < 200; ++i) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      try {
        // Any answer will do: a server with requirepass answers NOAUTH.
        auto reply = command({"PING"});
        if (reply.str == "PONG" || reply.type == platform::RedisReply::Type::error) return true;
      } catch (const platform::RedisFailure&) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return false;
  }

  TempDir dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace kernc::test
