#include "serve/metrics_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace tokenfeed::serve {
namespace {

constexpr size_t kMaxRequestBytes = 8192;
constexpr int kPollMs = 200;
constexpr auto kRequestTimeout = std::chrono::seconds(2);

void SendAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      return;  // the scraper went away: nothing to do
    }
    sent += static_cast<size_t>(n);
  }
}

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
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::FromErrno(errno, "cannot create a socket for the", where);
  const int one = 1;
  (void)::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 16) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::FromErrno(err, "cannot listen on the", where + " (choose another --metrics-port)");
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

void MetricsHttpServer::Serve() {
  while (!stop_.load()) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, kPollMs) <= 0) continue;
    const int client = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    Answer(client);
    ::close(client);
  }
}

void MetricsHttpServer::Answer(int client) {
  std::string request;
  const auto deadline = std::chrono::steady_clock::now() + kRequestTimeout;
  char buf[1024];
  while (request.find("\r\n\r\n") == std::string::npos && request.find("\n\n") == std::string::npos) {
    if (request.size() > kMaxRequestBytes) {
      SendAll(client, Response(431, "Request Header Fields Too Large", "text/plain", "request too large\n"));
      return;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || stop_.load()) return;
    pollfd p{client, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), kPollMs))) <= 0) continue;
    const ssize_t n = ::recv(client, buf, sizeof buf, 0);
    if (n <= 0) return;
    request.append(buf, static_cast<size_t>(n));
  }
  const size_t line_end = request.find_first_of("\r\n");
  const std::string line = request.substr(0, line_end);
  const bool get = line.starts_with("GET ");
  const std::string target = get ? line.substr(4, line.find(' ', 4) == std::string::npos ? std::string::npos
                                                                                          : line.find(' ', 4) - 4)
                                 : std::string();
  if (get && (target == "/metrics" || target.starts_with("/metrics?"))) {
    SendAll(client, Response(200, "OK", "text/plain; version=0.0.4; charset=utf-8", render_()));
  } else if (!get) {
    SendAll(client, Response(405, "Method Not Allowed", "text/plain", "only GET /metrics is served\n"));
  } else {
    SendAll(client, Response(404, "Not Found", "text/plain", "not found: the metrics are at /metrics\n"));
  }
}

}  // namespace tokenfeed::serve
