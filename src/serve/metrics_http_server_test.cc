#include "serve/metrics_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace tokenfeed::serve {
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

TEST(MetricsHttpServerTest, BadAddressAndBusyPortAreClearErrors) {
  auto bad = MetricsHttpServer::Start("localhost-ish", 0, [] { return std::string(); });
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument) << bad.status().ToString();
  auto first = MetricsHttpServer::Start("127.0.0.1", 0, [] { return std::string(); });
  ASSERT_TRUE(first.ok());
  auto second = MetricsHttpServer::Start("127.0.0.1", (*first)->port(), [] { return std::string(); });
  EXPECT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("--metrics-port"), std::string::npos) << second.status().ToString();
}

}  // namespace
}  // namespace tokenfeed::serve
