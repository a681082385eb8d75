#include "tokenfeed/client_log.h"

#include <cstdio>
#include <memory>
#include <mutex>
#include <utility>

namespace tokenfeed {
namespace {

// Leaked on purpose: a client thread may still log during static destruction.
struct SinkSlot {
  std::mutex mu;
  std::shared_ptr<const ClientLogSink> sink;
};

SinkSlot& Slot() {
  static SinkSlot* slot = new SinkSlot;
  return *slot;
}

}  // namespace

void SetClientLogSink(ClientLogSink sink) {
  auto next = sink ? std::make_shared<const ClientLogSink>(std::move(sink)) : nullptr;
  SinkSlot& slot = Slot();
  std::lock_guard lock(slot.mu);
  slot.sink = std::move(next);
}

void EmitClientLog(const ClientLogLine& line) {
  std::shared_ptr<const ClientLogSink> sink;
  {
    SinkSlot& slot = Slot();
    std::lock_guard lock(slot.mu);
    sink = slot.sink;
  }
  if (sink) {
    (*sink)(line);
    return;
  }
  std::fprintf(stderr, "%%%d|%s|%s| %s\n", line.severity, line.facility.c_str(), line.client.c_str(),
               line.message.c_str());
}

const char* ClientLogSeverityName(int severity) {
  if (severity <= 2) return "critical";
  switch (severity) {
    case 3: return "error";
    case 4: return "warning";
    case 5: return "notice";
    case 6: return "info";
    default: return "debug";
  }
}

}  // namespace tokenfeed
