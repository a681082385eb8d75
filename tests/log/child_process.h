// ChildProcess: fork+exec of a helper program with a pipe from its ACK_FD
// back to the test, for the crash tests. The test reads the child's lines,
// kills it with SIGKILL at a moment of its choosing, and reaps it.
// Test-only; one thread uses an object. Destroying it kills and reaps a
// child that is still running, so no process outlives its test.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace tokenfeed::log::testing {

class ChildProcess {
 public:
  // Starts `program` with `args`; the literal argument "{fd}" is replaced by
  // the number of the pipe's write end in the child.
  bool Start(const std::string& program, const std::vector<std::string>& args) {
    int fds[2];
    if (::pipe(fds) != 0) return false;
    ::fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    std::vector<std::string> argv_strings = {program};
    for (const std::string& a : args) argv_strings.push_back(a == "{fd}" ? std::to_string(fds[1]) : a);
    std::vector<char*> argv;
    for (std::string& s : argv_strings) argv.push_back(s.data());
    argv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ < 0) return false;
    if (pid_ == 0) {
      ::execv(program.c_str(), argv.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    read_fd_ = fds[0];
    return true;
  }

  ~ChildProcess() {
    if (pid_ > 0) {
      Kill();
      Wait();
    }
    if (read_fd_ >= 0) ::close(read_fd_);
  }

  pid_t pid() const { return pid_; }

  // The next line from the child, waiting at most `timeout`; nullopt on
  // timeout or when the child closed the pipe.
  std::optional<std::string> ReadLine(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      const size_t nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || eof_) return std::nullopt;
      pollfd p{read_fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char buf[4096];
      const ssize_t n = ::read(read_fd_, buf, sizeof(buf));
      if (n <= 0) {
        eof_ = true;
      } else {
        buffer_.append(buf, static_cast<size_t>(n));
      }
    }
  }

  void Kill() {
    if (pid_ > 0) ::kill(pid_, SIGKILL);
  }

  // Reaps the child; returns its wait status.
  int Wait() {
    int status = 0;
    if (pid_ > 0) ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }

 private:
  pid_t pid_ = -1;
  int read_fd_ = -1;
  std::string buffer_;
  bool eof_ = false;
};

}  // namespace tokenfeed::log::testing
