// MetricsHttpServer: a minimal HTTP/1.1 endpoint for Prometheus scrapes:
// GET /metrics answers with whatever `render` returns (text exposition
// format), anything else with 404; one connection at a time, closed after
// each answer. Not a general web server: no keep-alive, no TLS, requests
// above 8 KiB are refused. Its own thread calls `render`, which must be
// thread-safe. Stop (or the destructor) ends the thread within ~200 ms.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "tokenfeed/status.h"

namespace tokenfeed::serve {

class MetricsHttpServer {
 public:
  // Listens on address:port (port 0: any free port; see port()).
  static Result<std::unique_ptr<MetricsHttpServer>> Start(const std::string& address, uint16_t port,
                                                          std::function<std::string()> render);
  ~MetricsHttpServer();
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  uint16_t port() const { return port_; }
  void Stop();

 private:
  MetricsHttpServer(int fd, uint16_t port, std::function<std::string()> render);
  void Serve();
  void Answer(int client);

  int listen_fd_;
  uint16_t port_;
  std::function<std::string()> render_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace tokenfeed::serve
