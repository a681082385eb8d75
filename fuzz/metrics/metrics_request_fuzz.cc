// Fuzzes the metrics endpoint's request handling
// (metrics::MetricsHttpServer::Answer) on arbitrary bytes, as a client could
// send them: the answer is empty (header incomplete, at most 8 KiB buffered)
// or one complete HTTP/1.1 response with a status line and a Content-Length
// that matches its body; the metrics are rendered only for GET /metrics.
// Aborts on a finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "metrics/metrics_http_server.h"

namespace {

[[noreturn]] void Finding(const char* what, const std::string& answer) {
  std::fprintf(stderr, "metrics_request_fuzz: %s; answer: '%.200s'\n", what, answer.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string request(reinterpret_cast<const char*>(data), size);
  bool rendered = false;
  const std::string metrics = "tokenfeed_fuzz_metric 1\n";
  const std::string answer = tokenfeed::metrics::MetricsHttpServer::Answer(request, [&] {
    rendered = true;
    return metrics;
  });
  const bool complete = request.find("\r\n\r\n") != std::string::npos || request.find("\n\n") != std::string::npos;
  if (answer.empty()) {
    if (complete || size > 8192) Finding("no answer to a complete or oversized request", answer);
    return 0;
  }
  if (!answer.starts_with("HTTP/1.1 ")) Finding("no status line", answer);
  const size_t head_end = answer.find("\r\n\r\n");
  if (head_end == std::string::npos) Finding("no end of the response header", answer);
  const size_t length_at = answer.find("Content-Length: ");
  if (length_at == std::string::npos || length_at > head_end) Finding("no Content-Length", answer);
  const unsigned long length = std::strtoul(answer.c_str() + length_at + 16, nullptr, 10);
  if (length != answer.size() - head_end - 4) Finding("Content-Length does not match the body", answer);
  if (rendered != answer.starts_with("HTTP/1.1 200")) Finding("metrics rendered for a request that is refused", answer);
  if (rendered && answer.compare(head_end + 4, std::string::npos, metrics) != 0) Finding("a body that is not the metrics", answer);
  return 0;
}
