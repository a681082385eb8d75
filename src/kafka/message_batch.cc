#include "kafka/message_batch.h"

#include <string>

#include <librdkafka/rdkafka.h>

namespace tokenfeed::kafka {

MessageBatch::MessageBatch(MessageBatch&& other) noexcept
    : records_(std::move(other.records_)), messages_(std::move(other.messages_)), value_bytes_(other.value_bytes_) {
  other.records_.clear();
  other.messages_.clear();
  other.value_bytes_ = 0;
}

MessageBatch& MessageBatch::operator=(MessageBatch&& other) noexcept {
  if (this != &other) {
    Release();
    records_ = std::move(other.records_);
    messages_ = std::move(other.messages_);
    value_bytes_ = other.value_bytes_;
    other.records_.clear();
    other.messages_.clear();
    other.value_bytes_ = 0;
  }
  return *this;
}

std::optional<std::span<const std::byte>> MessageBatch::Header(size_t i, std::string_view name) const {
  if (i >= messages_.size()) return std::nullopt;
  rd_kafka_headers_t* headers = nullptr;
  if (rd_kafka_message_headers(messages_[i], &headers) != RD_KAFKA_RESP_ERR_NO_ERROR) return std::nullopt;
  const void* value = nullptr;
  size_t size = 0;
  const std::string key(name);
  if (rd_kafka_header_get_last(headers, key.c_str(), &value, &size) != RD_KAFKA_RESP_ERR_NO_ERROR) return std::nullopt;
  return std::span<const std::byte>(static_cast<const std::byte*>(value), size);
}

void MessageBatch::Release() {
  for (rd_kafka_message_t* m : messages_) rd_kafka_message_destroy(m);
  messages_.clear();
  records_.clear();
  value_bytes_ = 0;
}

}  // namespace tokenfeed::kafka
