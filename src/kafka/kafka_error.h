// Turns librdkafka error codes and error objects into tokenfeed Status
// values whose messages say what failed, where (bootstrap servers, topic,
// partition, offset) and what to do. Internal to src/kafka (it includes
// librdkafka's header). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <librdkafka/rdkafka.h>

#include "tokenfeed/status.h"

namespace tokenfeed::kafka {

struct ErrorWhere {
  std::string_view bootstrap;
  std::string_view topic;
  int32_t partition = -1;  // -1: not about one partition
  int64_t offset = -1;     // -1: not about one offset
};

StatusCode StatusCodeForKafkaError(rd_kafka_resp_err_t err);

// "<what> (topic 't', partition 2, offset 17): <librdkafka text> [ERR_NAME];
// <advice>". `detail` (may be empty) replaces librdkafka's generic text.
Status KafkaErrorStatus(rd_kafka_resp_err_t err, std::string_view what, const ErrorWhere& where,
                        std::string_view detail = {});

// Same for an rd_kafka_error_t (transactions, newer APIs); destroys it.
Status ConsumeKafkaError(rd_kafka_error_t* error, std::string_view what, const ErrorWhere& where);

// " (topic 't', partition 2, offset 17)" or "".
std::string DescribeWhere(const ErrorWhere& where);

}  // namespace tokenfeed::kafka
