// Client log: where the log lines of the libraries tokenfeed drives go (today
// librdkafka's, e.g. "connect to 127.0.0.1:9092 failed: Connection refused").
// It is not tokenfeed's own error reporting (a Status says what failed) and
// not the embedded log (log.h), which stores records.
//
// By default a line is written to stderr in librdkafka's format
// (`%3|FAIL|rdkafka#producer-1| ...`). A program that has its own log installs
// a sink: the CLI prints the lines as its own, the Python package forwards
// them to `logging.getLogger("tokenfeed.kafka")`.
//
// Threads: lines arrive on the library's internal threads, any number at once.
// SetClientLogSink may be called at any time from any thread; a line being
// delivered while the sink is replaced goes to the old or the new one. A sink
// must be thread-safe, must not block for long and must not call back into a
// Kafka client. It must outlive every client (install it once, at start).
#pragma once

#include <functional>
#include <string>

namespace tokenfeed {

struct ClientLogLine {
  int severity = 6;      // syslog levels: 0 emergency ... 3 error, 4 warning, 5 notice, 6 info, 7 debug
  std::string facility;  // librdkafka's facility, e.g. "FAIL", "CONFWARN"
  std::string client;    // the client's name, e.g. "rdkafka#producer-1"
  std::string message;
};

using ClientLogSink = std::function<void(const ClientLogLine&)>;

// Installs `sink` for every client of the process (an empty one restores
// stderr).
void SetClientLogSink(ClientLogSink sink);

// Hands `line` to the installed sink, or writes it to stderr.
void EmitClientLog(const ClientLogLine& line);

// "error", "warning", "notice", "info", "debug" ("critical" for 0-2).
const char* ClientLogSeverityName(int severity);

}  // namespace tokenfeed
