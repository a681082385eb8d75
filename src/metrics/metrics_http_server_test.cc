#include "metrics/metrics_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <new>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

namespace tokenfeed::metrics {
namespace {

std::string Request(uint16_t port, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return "connect failed";
  }
  timeval timeout{3, 0};  // a server that never answers fails the test instead of hanging it
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  ::send(fd, request.data(), request.size(), 0);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::recv(fd, buf, sizeof buf, 0)) > 0) out.append(buf, static_cast<size_t>(n));
  ::close(fd);
  return out;
}

TEST(MetricsHttpServerTest, ServesMetricsAndRefusesEverythingElse) {
  int calls = 0;
  auto server = MetricsHttpServer::Start("127.0.0.1", 0, [&calls] {
    ++calls;
    return std::string("tokenfeed_up 1\n");
  });
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const uint16_t port = (*server)->port();
  ASSERT_NE(port, 0);
  const std::string ok = Request(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(ok.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << ok;
  EXPECT_NE(ok.find("Content-Type: text/plain; version=0.0.4"), std::string::npos);
  EXPECT_NE(ok.find("Content-Length: 15\r\n"), std::string::npos);
  EXPECT_EQ(ok.substr(ok.size() - 15), "tokenfeed_up 1\n");
  EXPECT_EQ(Request(port, "GET /other HTTP/1.0\r\n\r\n").rfind("HTTP/1.1 404", 0), 0u);
  EXPECT_EQ(Request(port, "POST /metrics HTTP/1.0\r\n\r\n").rfind("HTTP/1.1 405", 0), 0u);
  EXPECT_EQ(calls, 1);
  (*server)->Stop();
  EXPECT_EQ(Request(port, "GET /metrics HTTP/1.1\r\n\r\n"), "connect failed");
}

TEST(MetricsHttpServerTest, ARenderThatThrowsIsA500AndTheServerGoesOn) {
  // Before, the exception left the server's thread and ended the process.
  int calls = 0;
  auto server = MetricsHttpServer::Start("127.0.0.1", 0, [&calls]() -> std::string {
    if (++calls == 1) throw std::bad_alloc();
    if (calls == 2) throw std::runtime_error("render failed");
    return "tokenfeed_up 1\n";
  });
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const uint16_t port = (*server)->port();
  const std::string request = "GET /metrics HTTP/1.1\r\n\r\n";
  EXPECT_EQ(Request(port, request).rfind("HTTP/1.1 500 Internal Server Error\r\n", 0), 0u);
  EXPECT_EQ(Request(port, request).rfind("HTTP/1.1 500 Internal Server Error\r\n", 0), 0u);
  const std::string ok = Request(port, request);
  EXPECT_EQ(ok.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << ok;
  EXPECT_EQ(calls, 3);
}

int Connect(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

double SecondsFor(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

TEST(MetricsHttpServerTest, StalledClientsDoNotHoldUpAScrape) {
  auto server = MetricsHttpServer::Start("127.0.0.1", 0, [] { return std::string("tokenfeed_up 1\n"); });
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const uint16_t port = (*server)->port();
  // Clients that connect and send half a request, then nothing.
  std::vector<int> stalled;
  for (int i = 0; i < 3; ++i) {
    const int fd = Connect(port);
    ASSERT_GE(fd, 0);
    ::send(fd, "GET /met", 8, 0);
    stalled.push_back(fd);
  }
  std::string ok;
  const double took = SecondsFor([&] { ok = Request(port, "GET /metrics HTTP/1.1\r\n\r\n"); });
  EXPECT_EQ(ok.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << ok;
  EXPECT_LT(took, 1.0) << "a scrape waited behind stalled connections";
  for (int fd : stalled) ::close(fd);
}

TEST(MetricsHttpServerTest, MoreStalledClientsThanSlotsStillLeaveRoomForAScrape) {
  auto server = MetricsHttpServer::Start("127.0.0.1", 0, [] { return std::string("tokenfeed_up 1\n"); });
  ASSERT_TRUE(server.ok());
  const uint16_t port = (*server)->port();
  std::vector<int> stalled;
  for (size_t i = 0; i < 2 * MetricsHttpServer::kMaxConnections; ++i) {
    const int fd = Connect(port);
    ASSERT_GE(fd, 0);
    stalled.push_back(fd);
  }
  std::string ok;
  const double took = SecondsFor([&] { ok = Request(port, "GET /metrics HTTP/1.1\r\n\r\n"); });
  EXPECT_EQ(ok.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << ok;
  EXPECT_LT(took, 1.5);
  for (int fd : stalled) ::close(fd);
}

TEST(MetricsHttpServerTest, AClientThatDoesNotReadItsAnswerDoesNotBlockTheServer) {
  const std::string big(32 << 20, 'x');  // far more than the socket buffers hold
  auto server = MetricsHttpServer::Start("127.0.0.1", 0, [&big] { return big; });
  ASSERT_TRUE(server.ok());
  const uint16_t port = (*server)->port();
  const int slow = Connect(port);
  ASSERT_GE(slow, 0);
  const std::string get = "GET /metrics HTTP/1.1\r\n\r\n";
  ::send(slow, get.data(), get.size(), 0);  // and never reads
  ::usleep(300 * 1000);
  std::string other;
  const double took = SecondsFor([&] { other = Request(port, "GET /other HTTP/1.1\r\n\r\n"); });
  EXPECT_EQ(other.rfind("HTTP/1.1 404", 0), 0u) << other.substr(0, 100);
  EXPECT_LT(took, 1.5) << "the server sat in a blocking send";
  ::close(slow);
}

TEST(MetricsHttpServerTest, BadAddressAndBusyPortAreClearErrors) {
  auto bad = MetricsHttpServer::Start("localhost-ish", 0, [] { return std::string(); });
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument) << bad.status().ToString();
  auto first = MetricsHttpServer::Start("127.0.0.1", 0, [] { return std::string(); });
  ASSERT_TRUE(first.ok());
  auto second = MetricsHttpServer::Start("127.0.0.1", (*first)->port(), [] { return std::string(); });
  EXPECT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("choose another metrics port"), std::string::npos) << second.status().ToString();
}

}  // namespace
}  // namespace tokenfeed::metrics
