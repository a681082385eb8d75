#include "kafka/admin_request.h"

#include "kafka/kafka_error.h"

namespace tokenfeed::kafka {

Result<EventPtr> RunAdminRequest(const Client& client, std::string_view what, std::string_view topic,
                                 const std::function<void(rd_kafka_AdminOptions_t*, rd_kafka_queue_t*)>& issue) {
  rd_kafka_t* rk = client.handle.get();
  std::unique_ptr<rd_kafka_queue_t, void (*)(rd_kafka_queue_t*)> queue(rd_kafka_queue_new(rk), rd_kafka_queue_destroy);
  std::unique_ptr<rd_kafka_AdminOptions_t, void (*)(rd_kafka_AdminOptions_t*)> opts(
      rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_ANY), rd_kafka_AdminOptions_destroy);
  char errstr[256];
  const int ms = TimeoutMs(client.timeout);
  if (rd_kafka_AdminOptions_set_request_timeout(opts.get(), ms, errstr, sizeof errstr) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::InvalidArgument(std::string(what) + ": bad timeout: " + errstr);
  }
  // Topic creation and deletion may wait this long for the controller.
  (void)rd_kafka_AdminOptions_set_operation_timeout(opts.get(), ms, errstr, sizeof errstr);
  issue(opts.get(), queue.get());
  // librdkafka answers every admin request by its request timeout; the
  // margin only guards against a lost event.
  rd_kafka_event_t* ev = rd_kafka_queue_poll(queue.get(), ms + 5000);
  if (ev == nullptr) {
    return Status::TimedOut(std::string(what) + DescribeWhere({client.bootstrap, topic}) + ": no answer within " +
                            std::to_string(ms) + " ms" + client.events->LastProblemSuffix() +
                            "; check that the brokers run and are reachable");
  }
  EventPtr event(ev);
  if (rd_kafka_resp_err_t err = rd_kafka_event_error(ev); err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    std::string detail = rd_kafka_event_error_string(ev);
    detail.append(client.events->LastProblemSuffix());
    return KafkaErrorStatus(err, what, {client.bootstrap, topic}, detail);
  }
  return event;
}

Result<std::vector<std::pair<std::string, std::string>>> DescribeTopicConfigs(const Client& client,
                                                                              const std::string& topic) {
  rd_kafka_ConfigResource_t* resource = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic.c_str());
  auto ev = RunAdminRequest(client, "describe Kafka topic configuration", topic,
                            [&](rd_kafka_AdminOptions_t* opts, rd_kafka_queue_t* q) {
                              rd_kafka_DescribeConfigs(client.handle.get(), &resource, 1, opts, q);
                            });
  rd_kafka_ConfigResource_destroy(resource);
  if (!ev.ok()) return ev.status();
  const rd_kafka_DescribeConfigs_result_t* res = rd_kafka_event_DescribeConfigs_result(ev->get());
  size_t count = 0;
  const rd_kafka_ConfigResource_t** resources = rd_kafka_DescribeConfigs_result_resources(res, &count);
  if (count != 1) return Status::Internal("DescribeConfigs answered " + std::to_string(count) + " resources");
  if (rd_kafka_resp_err_t err = rd_kafka_ConfigResource_error(resources[0]); err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    const char* text = rd_kafka_ConfigResource_error_string(resources[0]);
    return KafkaErrorStatus(err, "describe Kafka topic configuration", {client.bootstrap, topic},
                            text != nullptr ? text : "");
  }
  size_t n = 0;
  const rd_kafka_ConfigEntry_t** entries = rd_kafka_ConfigResource_configs(resources[0], &n);
  std::vector<std::pair<std::string, std::string>> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const char* value = rd_kafka_ConfigEntry_value(entries[i]);
    out.emplace_back(rd_kafka_ConfigEntry_name(entries[i]), value != nullptr ? value : "");
  }
  return out;
}

}  // namespace tokenfeed::kafka
