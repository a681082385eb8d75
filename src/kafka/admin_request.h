// One librdkafka admin request (CreateTopics, DescribeConfigs, ...) issued
// on any client's handle and awaited on a private queue, bounded by the
// client's timeout: the plumbing shared by AdminClient and the producer's
// size-limit lookup. Internal to src/kafka; call from one thread per request.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <librdkafka/rdkafka.h>

#include "kafka/rdkafka_handle.h"
#include "tokenfeed/status.h"

namespace tokenfeed::kafka {

struct EventDeleter {
  void operator()(rd_kafka_event_t* ev) const { rd_kafka_event_destroy(ev); }
};
using EventPtr = std::unique_ptr<rd_kafka_event_t, EventDeleter>;

// `issue` starts the request with the given options and reply queue. The
// result event is checked for a request-level error; per-item errors are the
// caller's to read.
Result<EventPtr> RunAdminRequest(const Client& client, std::string_view what, std::string_view topic,
                                 const std::function<void(rd_kafka_AdminOptions_t*, rd_kafka_queue_t*)>& issue);

// The topic's configuration (every entry the broker reports, defaults too).
Result<std::vector<std::pair<std::string, std::string>>> DescribeTopicConfigs(const Client& client,
                                                                              const std::string& topic);

}  // namespace tokenfeed::kafka
