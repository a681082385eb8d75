#include "metrics/metrics_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

namespace tokenfeed::metrics {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxRequestBytes = 8192;
constexpr int kPollMs = 200;

std::string Response(int code, std::string_view reason, std::string_view content_type, const std::string& body) {
  std::string r = "HTTP/1.1 " + std::to_string(code) + " " + std::string(reason) + "\r\n";
  r += "Content-Type: " + std::string(content_type) + "\r\n";
  r += "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  r += body;
  return r;
}

}  // namespace

Result<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(const std::string& address, uint16_t port,
                                                                    std::function<std::string()> render) {
  const std::string where = "metrics endpoint " + address + ":" + std::to_string(port);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  if (::inet_pton(AF_INET, address.c_str(), &addr.sin_addr) != 1) {
    return Status::InvalidArgument(where + ": '" + address + "' is not an IPv4 address (e.g. 127.0.0.1, 0.0.0.0)");
  }
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Status::FromErrno(errno, "cannot create a socket for the", where);
  const int one = 1;
  (void)::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 64) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::FromErrno(err, "cannot listen on the",
                             where + " (choose another metrics port, or 0 for any free one)");
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  return std::unique_ptr<MetricsHttpServer>(new MetricsHttpServer(fd, ntohs(addr.sin_port), std::move(render)));
}

MetricsHttpServer::MetricsHttpServer(int fd, uint16_t port, std::function<std::string()> render)
    : listen_fd_(fd), port_(port), render_(std::move(render)) {
  thread_ = std::thread([this] { Serve(); });
}

MetricsHttpServer::~MetricsHttpServer() { Stop(); }

void MetricsHttpServer::Stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  if (listen_fd_ >= 0) {
    ::close(listen_fd_);
    listen_fd_ = -1;
  }
}

struct MetricsHttpServer::Connection {
  int fd = -1;
  Clock::time_point deadline;
  std::string request;
  std::string response;  // non-empty once answered
  size_t sent = 0;
};

// A static answer, so that making it cannot fail.
constexpr std::string_view kInternalError =
    "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\nContent-Length: 0\r\n"
    "Connection: close\r\n\r\n";

void MetricsHttpServer::Serve() {
  std::vector<Connection> conns;
  std::vector<pollfd> fds;
  auto close_at = [&](size_t i) {
    ::close(conns[i].fd);
    conns.erase(conns.begin() + static_cast<std::ptrdiff_t>(i));
  };
  while (!stop_.load()) {
    fds.clear();
    fds.push_back({listen_fd_, POLLIN, 0});
    for (const Connection& c : conns) {
      fds.push_back({c.fd, static_cast<short>(c.response.empty() ? POLLIN : POLLOUT), 0});
    }
    if (::poll(fds.data(), fds.size(), kPollMs) < 0 && errno != EINTR) continue;
    const auto now = Clock::now();
    // Work on the connections first (fds[1 + i] is conns[i]), from the back
    // so that closing one leaves the indexes of the rest.
    for (size_t i = conns.size(); i-- > 0;) {
      Connection& c = conns[i];
      const short got = fds[1 + i].revents;
      if (got & (POLLERR | POLLNVAL)) {
        close_at(i);
        continue;
      }
      if (c.response.empty() && (got & (POLLIN | POLLHUP))) {
        char buf[2048];
        const ssize_t n = ::recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
          close_at(i);
          continue;
        }
        // Nothing may leave this thread (it would end the process): a request
        // whose answer cannot be made (out of memory, a render callback that
        // throws) is answered with a bare error, or dropped.
        try {
          if (n > 0) c.request.append(buf, static_cast<size_t>(n));
          c.response = Answer(c.request, render_);
        } catch (...) {
          c.response = kInternalError;
        }
      }
      if (!c.response.empty() && c.sent < c.response.size()) {
        const ssize_t n =
            ::send(c.fd, c.response.data() + c.sent, c.response.size() - c.sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) c.sent += static_cast<size_t>(n);
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
          close_at(i);
          continue;
        }
      }
      if ((!c.response.empty() && c.sent == c.response.size()) || now >= c.deadline) close_at(i);
    }
    // Everything waiting in the backlog, so that none waits for a SYN retry.
    while (fds[0].revents & POLLIN) {
      const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (client < 0) break;
      if (conns.size() >= kMaxConnections) {
        // The oldest connection gives way: a crowd of stalled clients cannot
        // lock the endpoint, only make each other wait less.
        auto oldest = std::min_element(conns.begin(), conns.end(), [](const Connection& a, const Connection& b) {
          return a.deadline < b.deadline;
        });
        close_at(static_cast<size_t>(oldest - conns.begin()));
      }
      Connection c;
      c.fd = client;
      c.deadline = now + kConnectionDeadline;
      try {
        conns.push_back(std::move(c));
      } catch (...) {
        ::close(client);
      }
    }
  }
  for (const Connection& c : conns) ::close(c.fd);
}

std::string MetricsHttpServer::Answer(const std::string& request, const std::function<std::string()>& render) {
  if (request.find("\r\n\r\n") == std::string::npos && request.find("\n\n") == std::string::npos) {
    if (request.size() > kMaxRequestBytes) {
      return Response(431, "Request Header Fields Too Large", "text/plain", "request too large\n");
    }
    return std::string();
  }
  const size_t line_end = request.find_first_of("\r\n");
  const std::string line = request.substr(0, line_end);
  const bool get = line.starts_with("GET ");
  const std::string target = get ? line.substr(4, line.find(' ', 4) == std::string::npos ? std::string::npos
                                                                                          : line.find(' ', 4) - 4)
                                 : std::string();
  if (get && (target == "/metrics" || target.starts_with("/metrics?"))) {
    return Response(200, "OK", "text/plain; version=0.0.4; charset=utf-8", render());
  }
  if (!get) return Response(405, "Method Not Allowed", "text/plain", "only GET /metrics is served\n");
  return Response(404, "Not Found", "text/plain", "not found: the metrics are at /metrics\n");
}

}  // namespace tokenfeed::metrics
