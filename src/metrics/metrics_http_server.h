// MetricsHttpServer: a minimal HTTP/1.1 endpoint for Prometheus scrapes:
// GET /metrics answers with whatever `render` returns (text exposition
// format), anything else with 404; each connection is closed after its
// answer. Not a general web server: no keep-alive, no TLS, requests above
// 8 KiB are refused. The one HTTP endpoint of the project: `tokenfeed serve`
// and the training loader (LoaderOptions::metrics_port) both serve through
// it. Connections are served together without blocking, each within a
// deadline for reading its request and sending its answer, and at most
// kMaxConnections at once (a new one then displaces the oldest), so a
// stalled or slow client never holds up a scrape. Its own thread calls
// `render`, which must be thread-safe. Stop (or the destructor) ends the
// thread within ~200 ms.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "tokenfeed/status.h"

namespace tokenfeed::metrics {

class MetricsHttpServer {
 public:
  static constexpr size_t kMaxConnections = 32;
  // From accepting a connection to having sent its whole answer.
  static constexpr std::chrono::milliseconds kConnectionDeadline{2000};

  // Listens on address:port (port 0: any free port; see port()).
  static Result<std::unique_ptr<MetricsHttpServer>> Start(const std::string& address, uint16_t port,
                                                          std::function<std::string()> render);
  ~MetricsHttpServer();
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  uint16_t port() const { return port_; }
  void Stop();

  // The whole HTTP response to the bytes of one request received so far, or
  // empty while they do not yet hold a complete header. `render` gives the
  // metrics text. Pure (apart from `render`): the server calls it, and the
  // fuzz target fuzz/metrics/metrics_request_fuzz calls it on arbitrary bytes.
  static std::string Answer(const std::string& request, const std::function<std::string()>& render);

 private:
  struct Connection;
  MetricsHttpServer(int fd, uint16_t port, std::function<std::string()> render);
  void Serve();

  int listen_fd_;
  uint16_t port_;
  std::function<std::string()> render_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace tokenfeed::metrics
