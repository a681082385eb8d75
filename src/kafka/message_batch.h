// MessageBatch: the records one consumer Poll returned, with zero-copy views
// of their keys and values: each view points into librdkafka's fetch buffer,
// which the batch keeps alive until Release() or destruction. Not a copy,
// not thread-safe. Release every batch before destroying its consumer (a
// librdkafka handle waits for its outstanding messages when destroyed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

struct rd_kafka_message_s;

namespace tokenfeed::kafka {

struct ConsumedRecord {
  std::string_view topic;  // valid while the batch is
  int32_t partition = 0;
  int64_t offset = 0;
  int64_t timestamp_ms = -1;  // -1: not available
  std::span<const std::byte> key;
  std::span<const std::byte> value;
};

class MessageBatch {
 public:
  MessageBatch() = default;
  ~MessageBatch() { Release(); }
  MessageBatch(MessageBatch&& other) noexcept;
  MessageBatch& operator=(MessageBatch&& other) noexcept;
  MessageBatch(const MessageBatch&) = delete;
  MessageBatch& operator=(const MessageBatch&) = delete;

  size_t size() const { return records_.size(); }
  bool empty() const { return records_.empty(); }
  const ConsumedRecord& operator[](size_t i) const { return records_[i]; }
  std::vector<ConsumedRecord>::const_iterator begin() const { return records_.begin(); }
  std::vector<ConsumedRecord>::const_iterator end() const { return records_.end(); }
  // Sum of the value sizes.
  size_t value_bytes() const { return value_bytes_; }

  // The last value of header `name` on record i, if it has one.
  std::optional<std::span<const std::byte>> Header(size_t i, std::string_view name) const;

  // Gives the memory back to librdkafka; every view taken from this batch
  // becomes invalid and the batch is empty.
  void Release();

 private:
  friend class ConsumerCore;
  std::vector<ConsumedRecord> records_;
  std::vector<rd_kafka_message_s*> messages_;  // records_[i] views messages_[i]
  size_t value_bytes_ = 0;
};

}  // namespace tokenfeed::kafka
