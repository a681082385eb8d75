#include "topic/kafka_token_index.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

#include "kafka/admin_client.h"
#include "kafka/kafka_uri.h"
#include "kafka/producer.h"
#include "topic/kafka_index_chunk.h"
#include "topic/kafka_topic.h"
#include "topic/token_index_file.h"

namespace tokenfeed::topic {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Records a build lists in one chunk (at most ~80 KB of entries).
constexpr uint32_t kChunkRecords = 4096;

std::string Num(uint64_t v) { return std::to_string(v); }

std::span<const uint8_t> Bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// Reads a partition through `cursor` from `from` up to `before`, handing
// each record to `take`; TimedOut when no offset is passed for `timeout`.
template <typename Take>
Status ReadRange(PartitionCursor& cursor, uint64_t from, uint64_t before, milliseconds timeout,
                 const std::string& label, Take&& take) {
  if (from >= before) return Status::OK();
  TF_RETURN_IF_ERROR(cursor.Seek(Offset(from)));
  auto last_progress = Clock::now();
  uint64_t at = from;
  while (cursor.position().value() < before) {
    TF_ASSIGN_OR_RETURN(std::span<const StoredRecordView> got, cursor.Read(milliseconds(100), 8192, Offset(before)));
    for (const StoredRecordView& r : got) TF_RETURN_IF_ERROR(take(r));
    if (cursor.position().value() > at) {
      at = cursor.position().value();
      last_progress = Clock::now();
    } else if (Clock::now() - last_progress >= timeout) {
      return Status::TimedOut(label + ": could not read past offset " + Num(at) + " towards " + Num(before) +
                              " within " + Num(static_cast<uint64_t>(timeout.count())) + " ms (--kafka-timeout-ms): " +
                              "check the brokers, and that no transaction on the topic is left open (a "
                              "read_committed reader waits for it)");
    }
  }
  return Status::OK();
}

// One chunk kept in memory: where its offsets lie, the records and ids
// before it in the chain, and its bytes (parsed again, cheaply, to walk).
struct Chunk {
  uint64_t first = 0, end = 0;
  uint64_t records_before = 0, tokens_before = 0;
  std::string bytes;
};

IndexChunkView ViewOf(const Chunk& c) {
  // Parsed when loaded: cannot fail now.
  return ParseIndexChunk(Bytes(c.bytes)).value();
}

// A partition's index: its chunks, chained (each starts where the one
// before ends), from `start` to `end`.
struct IndexChain {
  bool topic_exists = false;
  std::vector<Chunk> chunks;
  uint64_t start = 0, end = 0;
  uint64_t records = 0, tokens = 0;  // over the whole chain
};

Result<std::string> IndexUri(std::string_view uri) {
  TF_ASSIGN_OR_RETURN(kafka::KafkaUri parsed, kafka::ParseKafkaUri(uri));
  parsed.topic = KafkaIndexTopicName(parsed.topic);
  TF_RETURN_IF_ERROR(kafka::ValidateTopicName(parsed.topic)
                         .WithContext("the token index topic of " + std::string(uri) + " would be named '" +
                                      parsed.topic + "'"));
  return parsed.ToString();
}

// Reads index partition `p` of `index_uri` whole and chains its chunks.
// Not an error: the index topic missing (topic_exists false).
// wait_for_new_topic: a reader passes false (an index is made by a build
// that has finished before anyone reads it: not worth Kafka's 1.5 s grace
// for new topics at every open); a build passes true, since it has just
// made sure the topic exists and must not take a broker's passing
// "unknown topic" for an empty index (it would write the chunks again).
Result<IndexChain> LoadIndexChain(const std::string& index_uri, PartitionId p, const TopicConfig& config,
                                  bool wait_for_new_topic) {
  IndexChain chain;
  const std::string label = index_uri + " partition " + ToString(p);
  Result<std::unique_ptr<PartitionCursor>> opened = OpenKafkaPartitionCursor(index_uri, p, config, wait_for_new_topic);
  if (opened.status().IsNotFound()) return chain;
  if (opened.status().code() == StatusCode::kOutOfRange) {
    return Status::Corruption(label + ": the token index topic lacks this partition, which the data topic has " +
                              "(its partition counts differ): delete the index topic and run `tokenfeed index` "
                              "again");
  }
  TF_RETURN_IF_ERROR(opened.status());
  chain.topic_exists = true;
  std::unique_ptr<PartitionCursor> cursor = std::move(opened).value();
  TF_ASSIGN_OR_RETURN(Offset low, cursor->StartOffset());
  TF_ASSIGN_OR_RETURN(Offset high, cursor->EndOffset());
  TF_RETURN_IF_ERROR(ReadRange(*cursor, low.value(), high.value(), config.kafka_timeout, label,
                               [&](const StoredRecordView& r) -> Status {
    const std::string where = label + " offset " + ToString(r.offset);
    Result<IndexChunkView> parsed = ParseIndexChunk(r.bytes);
    if (!parsed.ok()) return parsed.status().WithContext(where);
    const IndexChunkView& c = *parsed;
    if (c.partition != p.value()) {
      return Status::Corruption(where + ": the chunk describes data partition " + Num(c.partition) +
                                ", not " + ToString(p));
    }
    if (!chain.chunks.empty() && c.first != chain.end) {
      if (c.first < chain.end && c.end <= chain.end) return Status::OK();  // written again: already covered
      return Status::Corruption(where + ": the chunk covers offsets [" + Num(c.first) + ", " + Num(c.end) +
                                ") but the chunks before it end at offset " + Num(chain.end) +
                                " (two builds ran at once?): delete the index topic and run `tokenfeed index` again");
    }
    if (chain.chunks.empty()) chain.start = c.first;
    Chunk k;
    k.first = c.first;
    k.end = c.end;
    k.records_before = chain.records;
    k.tokens_before = chain.tokens;
    k.bytes.assign(reinterpret_cast<const char*>(r.bytes.data()), r.bytes.size());
    if (__builtin_add_overflow(chain.tokens, c.tokens, &chain.tokens)) {
      return Status::Corruption(where + ": the chunks' token ids pass 2^64");
    }
    chain.records += c.records;
    chain.end = c.end;
    chain.chunks.push_back(std::move(k));
    return Status::OK();
  }));
  return chain;
}

class KafkaTokenIndexReader final : public TokenIndexReader {
 public:
  static Result<std::unique_ptr<TokenIndexReader>> Open(std::string_view uri, PartitionId partition,
                                                        const TopicConfig& config) {
    auto r = std::unique_ptr<KafkaTokenIndexReader>(new KafkaTokenIndexReader());
    r->uri_ = std::string(uri);
    r->config_ = config;
    r->config_.read_pattern = ReadPattern::kSequential;
    r->partition_ = partition;
    TF_ASSIGN_OR_RETURN(r->cursor_, OpenKafkaPartitionCursor(uri, partition, r->config_));
    r->label_ = r->uri_ + " partition " + ToString(partition);
    TF_ASSIGN_OR_RETURN(Offset start, r->cursor_->StartOffset());
    TF_ASSIGN_OR_RETURN(Offset end, r->cursor_->EndOffset());
    r->start_ = start.value();
    r->end_ = end.value();
    // A topic whose name leaves no room for the suffix has no index.
    Result<std::string> index_uri = IndexUri(uri);
    if (!index_uri.ok()) return std::unique_ptr<TokenIndexReader>(std::move(r));
    Result<IndexChain> chain = LoadIndexChain(*index_uri, partition, r->config_, /*wait_for_new_topic=*/false);
    if (!chain.ok()) {
      r->index_error_ = chain.status();  // reported by Read, after the offsets are checked
      return std::unique_ptr<TokenIndexReader>(std::move(r));
    }
    r->chain_ = std::move(chain).value();
    if (!r->chain_.chunks.empty() && r->chain_.end > r->end_) {
      // Offsets the partition does not hold: the topic was deleted and made
      // again (offsets start over), and the index kept.
      r->index_error_ = Status::Corruption(
          *index_uri + " partition " + ToString(partition) + ": the token index describes offsets up to " +
          Num(r->chain_.end) + ", past the partition's end offset " + Num(r->end_) + " (was " + r->uri_ +
          " deleted and created again?): delete the index topic and run `tokenfeed index` again");
      return std::unique_ptr<TokenIndexReader>(std::move(r));
    }
    // An index that starts after the partition's start says nothing of the
    // records before it, and one that ends before it (retention removed the
    // records it covers) nothing of those after: count them all.
    if (r->chain_.chunks.empty() || r->chain_.start > r->start_ || r->chain_.end < r->start_) r->chain_ = IndexChain{};
    return std::unique_ptr<TokenIndexReader>(std::move(r));
  }

  uint64_t covered() const override { return chain_.chunks.empty() ? 0 : chain_.end; }

  Result<TokenIndexRead> Read(std::span<const Offset> offsets) override {
    for (size_t i = 0; i < offsets.size(); ++i) {
      if (i > 0 && offsets[i] < offsets[i - 1]) {
        return Status::InvalidArgument(label_ + ": the offsets asked of its token index must not decrease, but " +
                                       "offset " + ToString(offsets[i]) + " (at index " + Num(i) +
                                       ") comes after " + ToString(offsets[i - 1]));
      }
      if (offsets[i].value() < start_ || offsets[i].value() > end_) {
        return Status::OutOfRange(label_ + ": offset " + ToString(offsets[i]) + " was asked of its token index, " +
                                  "but the partition holds offsets [" + Num(start_) + ", " + Num(end_) +
                                  ") (offsets " + Num(start_) + " to " + Num(end_) + " may be asked). Offsets " +
                                  "taken from an earlier state of the topic no longer fit it if records were " +
                                  "removed (retention) or the topic recreated since");
      }
    }
    TokenIndexRead out;
    out.points.reserve(offsets.size());
    if (offsets.empty()) return out;
    if (!index_error_.ok()) return index_error_;

    // The chain's count at the partition's start, subtracted from every point.
    Walk walk;
    IndexPoint base;
    if (covered() > 0) {
      TF_ASSIGN_OR_RETURN(base, At(start_, &walk));
    }
    std::optional<Counter> counter;
    for (const Offset asked : offsets) {
      const uint64_t o = asked.value();
      IndexPoint at;
      if (o <= covered()) {
        TF_ASSIGN_OR_RETURN(at, At(o, &walk));
      } else {
        if (!counter) {
          counter.emplace();
          if (covered() > 0) {
            TF_ASSIGN_OR_RETURN(counter->point, At(covered(), &walk));
            counter->position = covered();
          } else {
            counter->position = start_;
          }
        }
        TF_RETURN_IF_ERROR(CountTo(o, &*counter, &out));
        at = counter->point;
      }
      out.points.push_back({at.records - base.records, at.tokens - base.tokens});
    }
    return out;
  }

 private:
  KafkaTokenIndexReader() = default;

  // Where the last At() left off, so that non-decreasing offsets walk each
  // chunk once.
  struct Walk {
    size_t chunk = SIZE_MAX;
    std::optional<IndexChunkView> view;
    std::optional<IndexChunkWalker> walker;
    std::optional<IndexChunkEntry> pending;  // read from the walker, at or past the last offset asked
    IndexPoint point;                        // the chain's count before the walker's position
  };

  // The chain's records and ids at offsets [chain start, o), for o within it.
  Result<IndexPoint> At(uint64_t o, Walk* w) {
    if (o == chain_.end) return IndexPoint{chain_.records, chain_.tokens};
    // The chunk holding o: the last that starts at or before it.
    auto it = std::upper_bound(chain_.chunks.begin(), chain_.chunks.end(), o,
                               [](uint64_t v, const Chunk& c) { return v < c.first; });
    const size_t k = static_cast<size_t>(it - chain_.chunks.begin()) - 1;  // o >= chain start
    const Chunk& c = chain_.chunks[k];
    if (w->chunk != k) {
      w->chunk = k;
      w->view = ViewOf(c);
      w->walker.emplace(*w->view);
      w->pending.reset();
      w->point = {c.records_before, c.tokens_before};
    }
    while (true) {
      if (!w->pending) {
        IndexChunkEntry e;
        if (!w->walker->Next(&e)) break;
        w->pending = e;
      }
      if (w->pending->offset >= o) break;
      w->point.records += 1;
      w->point.tokens += w->pending->tokens;
      w->pending.reset();
    }
    return w->point;
  }

  struct Counter {
    uint64_t position = 0;
    IndexPoint point;
  };

  // Reads the records at [counter position, o) to count them.
  Status CountTo(uint64_t o, Counter* c, TokenIndexRead* out) {
    TF_RETURN_IF_ERROR(ReadRange(*cursor_, c->position, o, config_.kafka_timeout, label_,
                                 [&](const StoredRecordView& r) -> Status {
      c->point.records += 1;
      if (__builtin_add_overflow(c->point.tokens, RecordTokenCount(r.bytes), &c->point.tokens)) {
        return Status::Corruption(label_ + ": counting the record at offset " + ToString(r.offset) +
                                  " passes 2^64 token ids: the token index is damaged; delete the index topic " +
                                  "and run `tokenfeed index` again");
      }
      out->records_read += 1;
      out->bytes_read += r.bytes.size();
      return Status::OK();
    }));
    c->position = o;
    return Status::OK();
  }

  std::string uri_;
  TopicConfig config_;
  PartitionId partition_{0};
  std::string label_;
  std::unique_ptr<PartitionCursor> cursor_;  // the data partition: its range, and the records past the index
  uint64_t start_ = 0, end_ = 0;
  IndexChain chain_;
  Status index_error_;
};

}  // namespace

std::string KafkaIndexTopicName(std::string_view topic) { return std::string(topic) + "-token-index"; }

Result<std::unique_ptr<TokenIndexReader>> OpenKafkaTokenIndexReader(std::string_view uri, PartitionId partition,
                                                                    const TopicConfig& config) {
  return KafkaTokenIndexReader::Open(uri, partition, config);
}

Result<std::vector<TokenIndexBuild>> BuildKafkaIndexTopic(std::string_view uri, const TopicConfig& config) {
  kafka::KafkaUri parsed;
  TF_ASSIGN_OR_RETURN(kafka::ClientOptions client, KafkaClientOptionsFor(uri, config, &parsed));
  TF_ASSIGN_OR_RETURN(std::string index_uri, IndexUri(uri));
  const std::string index_topic = KafkaIndexTopicName(parsed.topic);
  TF_ASSIGN_OR_RETURN(auto admin, kafka::AdminClient::Open(client));
  TF_ASSIGN_OR_RETURN(kafka::TopicInfo data, admin->DescribeTopic(parsed.topic));
  const auto partitions = static_cast<int32_t>(data.partitions.size());
  size_t replicas = 1;
  for (const kafka::PartitionInfo& p : data.partitions) replicas = std::max(replicas, p.replicas.size());

  // The index topic: as many partitions, kept as long as the data (chunks
  // are never deleted by time or size; deleting the topic drops the index).
  kafka::TopicSpec spec;
  spec.name = index_topic;
  spec.partitions = partitions;
  spec.replication_factor = static_cast<int16_t>(replicas);
  spec.configs = {{"retention.ms", "-1"}, {"retention.bytes", "-1"}, {"cleanup.policy", "delete"}};
  Status created = admin->CreateTopic(spec);
  if (!created.ok() && created.code() != StatusCode::kAlreadyExists) {
    return created.WithContext("creating the token index topic " + index_uri);
  }
  TF_ASSIGN_OR_RETURN(kafka::TopicInfo index_info, admin->DescribeTopic(index_topic));
  if (static_cast<int32_t>(index_info.partitions.size()) != partitions) {
    return Status::InvalidArgument(index_uri + " has " + Num(index_info.partitions.size()) + " partitions but " +
                                   parsed.ToString() + " has " + Num(static_cast<uint64_t>(partitions)) +
                                   ": delete the index topic and run `tokenfeed index` again");
  }

  kafka::ProducerOptions po;
  static_cast<kafka::ClientOptions&>(po) = client;
  po.topic = index_topic;
  TF_RETURN_IF_ERROR(ApplyWriterSettings(&po.config));
  TF_ASSIGN_OR_RETURN(auto producer, kafka::Producer::Open(po));
  TopicConfig read_config = config;
  read_config.read_pattern = ReadPattern::kSequential;

  std::vector<TokenIndexBuild> out;
  uint64_t token = 0;
  for (int32_t pi = 0; pi < partitions; ++pi) {
    const PartitionId p(static_cast<uint32_t>(pi));
    const std::string label = parsed.ToString() + " partition " + ToString(p);
    TF_ASSIGN_OR_RETURN(IndexChain chain, LoadIndexChain(index_uri, p, read_config, /*wait_for_new_topic=*/true));
    if (!chain.topic_exists) {
      return Status::Unavailable(index_uri + " partition " + ToString(p) + ": the index topic, just described, "
                                 "cannot be read: try again");
    }
    TF_ASSIGN_OR_RETURN(std::unique_ptr<PartitionCursor> cursor, OpenKafkaPartitionCursor(uri, p, read_config));
    TF_ASSIGN_OR_RETURN(Offset low, cursor->StartOffset());
    TF_ASSIGN_OR_RETURN(Offset high, cursor->EndOffset());
    uint64_t from = low.value();
    if (!chain.chunks.empty()) {
      if (chain.end > high.value()) {
        return Status::Corruption(label + ": its token index describes offsets up to " + Num(chain.end) +
                                  ", past the partition's end offset " + ToString(high) + " (was the topic " +
                                  "deleted and created again?): delete " + index_uri + " and run `tokenfeed index` "
                                  "again");
      }
      if (chain.start > low.value()) {
        return Status::InvalidArgument(label + ": its token index starts at offset " + Num(chain.start) +
                                       ", after the partition's first offset " + ToString(low) +
                                       ": delete " + index_uri + " and run `tokenfeed index` again");
      }
      from = chain.end;
    }
    TokenIndexBuild built;
    built.partition = p;
    std::vector<IndexChunkEntry> entries;
    uint64_t chunk_first = from;
    auto emit = [&](uint64_t end) -> Status {
      TF_ASSIGN_OR_RETURN(std::string bytes, EncodeIndexChunk(p.value(), chunk_first, end, entries));
      TF_RETURN_IF_ERROR(producer->Produce(pi, std::string_view(), bytes, token++));
      built.chunks_written += 1;
      entries.clear();
      chunk_first = end;
      return Status::OK();
    };
    if (!chain.chunks.empty() && chain.end < low.value()) {
      // Retention removed the records after the index's end: the offsets
      // up to the start hold none to read now, which one empty chunk says.
      TF_RETURN_IF_ERROR(emit(low.value()));
      from = low.value();
    }
    TF_RETURN_IF_ERROR(ReadRange(*cursor, from, high.value(), config.kafka_timeout, label,
                                 [&](const StoredRecordView& r) -> Status {
      entries.push_back({r.offset.value(), RecordTokenCount(r.bytes)});
      built.records_read += 1;
      if (entries.size() == kChunkRecords && r.offset.value() + 1 < high.value()) return emit(r.offset.value() + 1);
      return Status::OK();
    }));
    if (chunk_first < high.value()) TF_RETURN_IF_ERROR(emit(high.value()));
    built.covered = std::max(chain.end, high.value());
    std::vector<kafka::Delivery> deliveries;
    TF_RETURN_IF_ERROR(producer->Flush(config.kafka_timeout, &deliveries));
    for (const kafka::Delivery& d : deliveries) {
      if (!d.status.ok()) return d.status.WithContext(index_uri + " partition " + ToString(p) + ": writing a chunk");
    }
    out.push_back(built);
  }
  return out;
}

}  // namespace tokenfeed::topic
