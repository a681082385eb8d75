// ConsumerGroupMetadata: the group, generation and member a GroupConsumer
// has at one moment, which a transactional Producer passes along with the
// consumed offsets (Producer::SendOffsetsToTransaction) so that the broker
// commits them atomically with the transaction and fences zombie members.
// Opaque, move-only; independent of the consumer's lifetime once taken.
#pragma once

#include <memory>

struct rd_kafka_consumer_group_metadata_s;

namespace tokenfeed::kafka {

class ConsumerGroupMetadata {
 public:
  struct Deleter {
    void operator()(rd_kafka_consumer_group_metadata_s* m) const;
  };
  explicit ConsumerGroupMetadata(rd_kafka_consumer_group_metadata_s* m) : m_(m) {}
  rd_kafka_consumer_group_metadata_s* get() const { return m_.get(); }

 private:
  std::unique_ptr<rd_kafka_consumer_group_metadata_s, Deleter> m_;
};

}  // namespace tokenfeed::kafka
