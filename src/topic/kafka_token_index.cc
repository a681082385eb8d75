#include "topic/kafka_token_index.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

#include "kafka/admin_client.h"
#include "kafka/kafka_uri.h"
#include "kafka/producer.h"
#include "topic/kafka_index_chunk.h"
#include "topic/kafka_index_summary.h"
#include "topic/kafka_topic.h"
#include "topic/token_index_file.h"

namespace tokenfeed::topic {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

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

// The two kinds of index record: per-record chunks, and the summaries of
// groups of offsets (kafka_index_summary.h), each in its own topic.
enum class IndexKind { kChunks, kSummaries };

const char* KindName(IndexKind kind) { return kind == IndexKind::kChunks ? "chunk" : "summary"; }

constexpr const char* kRemedyBoth =
    "delete both index topics (TOPIC-token-index and TOPIC-token-summary) and run `tokenfeed index` again";

// What to do about index topic `index_uri` of `kind` that cannot be used.
// Summaries are made again from the chunks without reading a record; chunks
// only from the records, and their summaries go with them.
std::string Remedy(IndexKind kind, const std::string& index_uri) {
  if (kind == IndexKind::kSummaries) {
    return "delete " + index_uri + " and run `tokenfeed index` again (it writes the summaries again from the " +
           "chunks, reading no record)";
  }
  return kRemedyBoth;
}

// What the chain needs of a record of either kind.
struct RecordHeader {
  uint32_t partition = 0;
  uint32_t group = 0;  // a summary's
  uint64_t first = 0, end = 0;
  uint64_t records = 0, tokens = 0;
};

Result<RecordHeader> ParseHeader(IndexKind kind, std::span<const uint8_t> bytes) {
  if (kind == IndexKind::kChunks) {
    TF_ASSIGN_OR_RETURN(IndexChunkView c, ParseIndexChunk(bytes));
    return RecordHeader{c.partition, 0, c.first, c.end, c.records, c.tokens};
  }
  TF_ASSIGN_OR_RETURN(IndexSummaryView v, ParseIndexSummary(bytes));
  return RecordHeader{v.partition, v.group, v.first, v.end, v.records, v.tokens};
}

// One index record kept in memory: where its offsets lie, the records and
// ids before it in the chain, and its bytes (parsed again, cheaply, to walk).
struct Chunk {
  uint32_t group = 0;  // a summary's group
  uint64_t first = 0, end = 0;
  uint64_t records_before = 0, tokens_before = 0;
  std::string bytes;
};

IndexChunkView ViewOf(const Chunk& c) {
  // Parsed when loaded: cannot fail now.
  return ParseIndexChunk(Bytes(c.bytes)).value();
}

IndexSummaryView SummaryOf(const Chunk& c) {
  // Parsed when loaded: cannot fail now.
  return ParseIndexSummary(Bytes(c.bytes)).value();
}

// A partition's index of one kind: its records, chained (each starts where
// the one before ends), from `start` to `end`.
struct IndexChain {
  bool topic_exists = false;
  uint64_t index_records = 0;  // records of the index partition read, copies included
  std::vector<Chunk> chunks;
  uint64_t start = 0, end = 0;
  uint64_t records = 0, tokens = 0;  // over the whole chain
};

// The topic that holds a topic's index records of `kind`.
Result<std::string> IndexUri(std::string_view uri, IndexKind kind) {
  TF_ASSIGN_OR_RETURN(kafka::KafkaUri parsed, kafka::ParseKafkaUri(uri));
  parsed.topic = kind == IndexKind::kChunks ? KafkaIndexTopicName(parsed.topic) : KafkaSummaryTopicName(parsed.topic);
  TF_RETURN_IF_ERROR(kafka::ValidateTopicName(parsed.topic)
                         .WithContext("the token index topic of " + std::string(uri) + " would be named '" +
                                      parsed.topic + "'"));
  return parsed.ToString();
}

// Reads index partition `p` of `index_uri` whole and chains its records.
// Not an error: the index topic missing (topic_exists false).
// wait_for_new_topic: a reader passes false (an index is made by a build
// that has finished before anyone reads it: not worth Kafka's 1.5 s grace
// for new topics at every open); a build passes true, since it has just
// made sure the topic exists and must not take a broker's passing
// "unknown topic" for an empty index (it would write the chunks again).
Result<IndexChain> LoadIndexChain(const std::string& index_uri, PartitionId p, const TopicConfig& config,
                                  bool wait_for_new_topic, IndexKind kind) {
  IndexChain chain;
  const std::string label = index_uri + " partition " + ToString(p);
  Result<std::unique_ptr<PartitionCursor>> opened = OpenKafkaPartitionCursor(index_uri, p, config, wait_for_new_topic);
  if (opened.status().IsNotFound()) return chain;
  if (opened.status().code() == StatusCode::kOutOfRange) {
    return Status::Corruption(label + ": the token index topic lacks this partition, which the data topic has " +
                              "(its partition counts differ): " + Remedy(kind, index_uri));
  }
  TF_RETURN_IF_ERROR(opened.status());
  chain.topic_exists = true;
  std::unique_ptr<PartitionCursor> cursor = std::move(opened).value();
  TF_ASSIGN_OR_RETURN(Offset low, cursor->StartOffset());
  TF_ASSIGN_OR_RETURN(Offset high, cursor->EndOffset());
  const char* what = KindName(kind);
  TF_RETURN_IF_ERROR(ReadRange(*cursor, low.value(), high.value(), config.kafka_timeout, label,
                               [&](const StoredRecordView& r) -> Status {
    const std::string where = label + " offset " + ToString(r.offset);
    chain.index_records += 1;
    Result<RecordHeader> parsed = ParseHeader(kind, r.bytes);
    if (!parsed.ok()) {
      if (parsed.status().code() != StatusCode::kCorruption) return parsed.status().WithContext(where);
      return Status::Corruption(where + ": " + parsed.status().message() + ": " +
                                Remedy(kind, index_uri));
    }
    const RecordHeader& c = *parsed;
    if (c.partition != p.value()) {
      return Status::Corruption(where + ": the " + what + " describes data partition " + Num(c.partition) +
                                ", not " + ToString(p));
    }
    if (!chain.chunks.empty() && c.first != chain.end) {
      if (c.first < chain.end && c.end <= chain.end) return Status::OK();  // written again: already covered
      return Status::Corruption(where + ": the " + what + " covers offsets [" + Num(c.first) + ", " + Num(c.end) +
                                ") but the " + what + "s before it end at offset " + Num(chain.end) +
                                " (two builds ran at once?): " + Remedy(kind, index_uri));
    }
    if (chain.chunks.empty()) chain.start = c.first;
    Chunk k;
    k.group = c.group;
    k.first = c.first;
    k.end = c.end;
    k.records_before = chain.records;
    k.tokens_before = chain.tokens;
    k.bytes.assign(reinterpret_cast<const char*>(r.bytes.data()), r.bytes.size());
    if (__builtin_add_overflow(chain.tokens, c.tokens, &chain.tokens)) {
      return Status::Corruption(where + ": the " + what + "s' token ids pass 2^64");
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
  // Opens the data partition and loads its index of `kind`.
  static Result<std::unique_ptr<KafkaTokenIndexReader>> Open(std::string_view uri, PartitionId partition,
                                                             const TopicConfig& config, IndexKind kind) {
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
    r->Load(kind);
    return r;
  }

  // Loads the index of `kind` in place of the one loaded before. What
  // cannot be read is kept in index_error_ (reported by Read, after the
  // offsets are checked).
  void Load(IndexKind kind) {
    kind_ = kind;
    chain_ = IndexChain{};
    index_error_ = Status::OK();
    // A topic whose name leaves no room for the suffix has no index.
    Result<std::string> index_uri = IndexUri(uri_, kind);
    if (!index_uri.ok()) return;
    Result<IndexChain> chain = LoadIndexChain(*index_uri, partition_, config_, /*wait_for_new_topic=*/false, kind);
    if (!chain.ok()) {
      index_error_ = chain.status();
      return;
    }
    chain_ = std::move(chain).value();
    if (!chain_.chunks.empty() && chain_.end > end_) {
      // Offsets the partition does not hold: the topic was deleted and made
      // again (offsets start over), and the index kept.
      index_error_ = Status::Corruption(
          *index_uri + " partition " + ToString(partition_) + ": the token index describes offsets up to " +
          Num(chain_.end) + ", past the partition's end offset " + Num(end_) + " (was " + uri_ +
          " deleted and created again?): " + kRemedyBoth);
      return;
    }
    // An index that starts after the partition's start says nothing of the
    // records before it, and one that ends before it (retention removed the
    // records it covers) nothing of those after: count them all.
    if (chain_.chunks.empty() || chain_.start > start_ || chain_.end < start_) chain_ = IndexChain{};
  }

  // Whether the summaries loaded answer every offset of `offsets` (and the
  // partition's start) without the chunks: each is past what they cover
  // (counted from the records), or a multiple of a summary's group, or a
  // summary's first or end offset. False where summaries are not loaded or
  // there are none. True for summaries that cannot be read (damaged, of a
  // topic made again): Read reports why, as it does for chunks.
  bool SummariesAnswer(std::span<const Offset> offsets) const {
    if (kind_ != IndexKind::kSummaries) return false;
    if (!index_error_.ok()) return true;
    if (chain_.chunks.empty()) return false;
    auto answers = [&](uint64_t o) {
      if (o >= chain_.end) return true;
      if (o < chain_.start) return false;
      const Chunk& c = chain_.chunks[Holding(o)];
      return o == c.first || o % c.group == 0;
    };
    if (!answers(start_)) return false;
    for (const Offset o : offsets) {
      if (o.value() < start_ || o.value() > end_ || !answers(o.value())) return false;
    }
    return true;
  }

  // Whether the chunks, where `offsets` pass the loaded summaries' end, end
  // there too (so that what lies past it must be counted from the records
  // either way), told by their index partition holding as many records as
  // the summary partition (one summary a chunk). False where the summaries
  // lag the chunks (a build stopped between the two, or one that wrote no
  // summaries extended the chunks), or this cannot be told: the chunks
  // then answer.
  bool SummariesAsFarAsChunks(std::span<const Offset> offsets) const {
    if (!index_error_.ok() || offsets.empty() || offsets.back().value() <= chain_.end) return true;
    Result<std::string> chunks_uri = IndexUri(uri_, IndexKind::kChunks);
    if (!chunks_uri.ok()) return true;  // no chunks can be named either
    Result<std::unique_ptr<PartitionCursor>> chunks =
        OpenKafkaPartitionCursor(*chunks_uri, partition_, config_, /*wait_for_new_topic=*/false);
    if (!chunks.ok()) return chunks.status().IsNotFound();
    Result<Offset> low = (*chunks)->StartOffset();
    Result<Offset> high = (*chunks)->EndOffset();
    return low.ok() && high.ok() && high->value() - low->value() == chain_.index_records;
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
    std::optional<IndexSummaryView> summary;  // the same for summaries
    std::optional<IndexSummaryWalker> groups;
    std::optional<IndexSummaryGroup> pending_group;
    IndexPoint point;                        // the chain's count before the walker's position
  };

  // The chain's records and ids at offsets [chain start, o), for o within it
  // (and, for summaries, an offset SummariesAnswer accepts).
  Result<IndexPoint> At(uint64_t o, Walk* w) {
    if (o == chain_.end) return IndexPoint{chain_.records, chain_.tokens};
    if (kind_ == IndexKind::kSummaries) return SummaryAt(o, w);
    const size_t k = Holding(o);
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

  // The index record holding offset o (within the chain, before its end):
  // the last that starts at or before it.
  size_t Holding(uint64_t o) const {
    auto it = std::upper_bound(chain_.chunks.begin(), chain_.chunks.end(), o,
                               [](uint64_t v, const Chunk& c) { return v < c.first; });
    return static_cast<size_t>(it - chain_.chunks.begin()) - 1;  // o >= chain start
  }

  // At() over summaries: the groups before o, o being a group boundary.
  Result<IndexPoint> SummaryAt(uint64_t o, Walk* w) {
    const size_t k = Holding(o);
    const Chunk& c = chain_.chunks[k];
    if (w->chunk != k) {
      w->chunk = k;
      w->summary = SummaryOf(c);
      w->groups.emplace(*w->summary);
      w->pending_group.reset();
      w->point = {c.records_before, c.tokens_before};
    }
    while (true) {
      if (!w->pending_group) {
        IndexSummaryGroup g;
        if (!w->groups->Next(&g)) break;
        w->pending_group = g;
      }
      if (w->pending_group->end > o) {
        if (w->pending_group->first < o) {
          return Status::Internal(label_ + ": offset " + Num(o) + " lies inside a group of the token index's " +
                                  "summary [" + Num(w->pending_group->first) + ", " + Num(w->pending_group->end) +
                                  ")");
        }
        break;
      }
      w->point.records += w->pending_group->records;
      w->point.tokens += w->pending_group->tokens;
      w->pending_group.reset();
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
                                  " passes 2^64 token ids: the token index is damaged; " + kRemedyBoth);
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
  IndexKind kind_ = IndexKind::kChunks;
  IndexChain chain_;
  Status index_error_;
};

}  // namespace

std::string KafkaIndexTopicName(std::string_view topic) { return std::string(topic) + "-token-index"; }

std::string KafkaSummaryTopicName(std::string_view topic) { return std::string(topic) + "-token-summary"; }

Result<std::unique_ptr<TokenIndexReader>> OpenKafkaTokenIndexReader(std::string_view uri, PartitionId partition,
                                                                    const TopicConfig& config) {
  TF_ASSIGN_OR_RETURN(std::unique_ptr<KafkaTokenIndexReader> r,
                      KafkaTokenIndexReader::Open(uri, partition, config, IndexKind::kChunks));
  return std::unique_ptr<TokenIndexReader>(std::move(r));
}

Result<TokenIndexRead> ReadKafkaTokenIndex(std::string_view uri, PartitionId partition,
                                           std::span<const Offset> offsets, const TopicConfig& config) {
  TF_ASSIGN_OR_RETURN(std::unique_ptr<KafkaTokenIndexReader> r,
                      KafkaTokenIndexReader::Open(uri, partition, config, IndexKind::kSummaries));
  if (!r->SummariesAnswer(offsets) || !r->SummariesAsFarAsChunks(offsets)) r->Load(IndexKind::kChunks);
  return r->Read(offsets);
}

namespace {

// Makes sure the index topic of `kind` exists, with `partitions`
// partitions, and returns a producer for it.
Result<std::unique_ptr<kafka::Producer>> OpenIndexTopic(kafka::AdminClient& admin, const kafka::ClientOptions& client,
                                                         const std::string& topic, const std::string& label,
                                                         int32_t partitions, size_t replicas,
                                                         const std::string& data_uri, IndexKind kind) {
  // As many partitions, kept as long as the data (records are never
  // deleted by time or size; deleting the topic drops the index).
  kafka::TopicSpec spec;
  spec.name = topic;
  spec.partitions = partitions;
  spec.replication_factor = static_cast<int16_t>(replicas);
  spec.configs = {{"retention.ms", "-1"}, {"retention.bytes", "-1"}, {"cleanup.policy", "delete"}};
  Status created = admin.CreateTopic(spec);
  if (!created.ok() && created.code() != StatusCode::kAlreadyExists) {
    return created.WithContext("creating the token index topic " + label);
  }
  TF_ASSIGN_OR_RETURN(kafka::TopicInfo info, admin.DescribeTopic(topic));
  if (static_cast<int32_t>(info.partitions.size()) != partitions) {
    return Status::InvalidArgument(label + " has " + Num(info.partitions.size()) + " partitions but " + data_uri +
                                   " has " + Num(static_cast<uint64_t>(partitions)) + ": " + Remedy(kind, label));
  }
  kafka::ProducerOptions po;
  static_cast<kafka::ClientOptions&>(po) = client;
  po.topic = topic;
  TF_RETURN_IF_ERROR(ApplyWriterSettings(&po.config));
  return kafka::Producer::Open(po);
}

// Waits for what `producer` was given and reports the first failure.
Status FlushIndex(kafka::Producer& producer, const TopicConfig& config, const std::string& label) {
  std::vector<kafka::Delivery> deliveries;
  TF_RETURN_IF_ERROR(producer.Flush(config.kafka_timeout, &deliveries));
  for (const kafka::Delivery& d : deliveries) {
    if (!d.status.ok()) return d.status.WithContext(label);
  }
  return Status::OK();
}

// The summaries the chunks of `chain` from offset `from` on lack.
Result<std::vector<std::string>> SummariesOf(const IndexChain& chain, uint64_t from, PartitionId p, uint32_t group) {
  std::vector<std::string> out;
  std::vector<IndexChunkEntry> entries;
  for (const Chunk& c : chain.chunks) {
    if (c.first < from) continue;
    const IndexChunkView view = ViewOf(c);
    IndexChunkWalker walker(view);
    entries.clear();
    IndexChunkEntry e;
    while (walker.Next(&e)) entries.push_back(e);
    TF_ASSIGN_OR_RETURN(std::string bytes, EncodeIndexSummary(p.value(), group, c.first, c.end, entries));
    out.push_back(std::move(bytes));
  }
  return out;
}

}  // namespace

Result<std::vector<TokenIndexBuild>> BuildKafkaIndexTopic(std::string_view uri, const TopicConfig& config,
                                                          const TokenIndexBuildOptions& options) {
  if (options.chunk_records == 0 || options.chunk_records > kMaxIndexChunkRecords) {
    return Status::InvalidArgument("records a token index chunk lists must be 1 to " + Num(kMaxIndexChunkRecords) +
                                   "; got " + Num(options.chunk_records));
  }
  if (options.summary_group == 0 || options.summary_group > kMaxIndexSummaryGroup) {
    return Status::InvalidArgument("the offsets of a token index summary's group must be 1 to " +
                                   Num(kMaxIndexSummaryGroup) + "; got " + Num(options.summary_group));
  }
  kafka::KafkaUri parsed;
  TF_ASSIGN_OR_RETURN(kafka::ClientOptions client, KafkaClientOptionsFor(uri, config, &parsed));
  TF_ASSIGN_OR_RETURN(std::string index_uri, IndexUri(uri, IndexKind::kChunks));
  // A data topic whose name leaves room for "-token-index" but not for
  // "-token-summary" (Kafka's 249 characters) gets chunks only.
  Result<std::string> summary_name = IndexUri(uri, IndexKind::kSummaries);
  const bool with_summaries = summary_name.ok();
  const std::string summary_uri = with_summaries ? *summary_name : std::string();
  TF_ASSIGN_OR_RETURN(auto admin, kafka::AdminClient::Open(client));
  TF_ASSIGN_OR_RETURN(kafka::TopicInfo data, admin->DescribeTopic(parsed.topic));
  const auto partitions = static_cast<int32_t>(data.partitions.size());
  size_t replicas = 1;
  for (const kafka::PartitionInfo& p : data.partitions) replicas = std::max(replicas, p.replicas.size());
  TF_ASSIGN_OR_RETURN(auto producer, OpenIndexTopic(*admin, client, KafkaIndexTopicName(parsed.topic), index_uri,
                                                    partitions, replicas, parsed.ToString(), IndexKind::kChunks));
  std::unique_ptr<kafka::Producer> summary_producer;
  if (with_summaries) {
    TF_ASSIGN_OR_RETURN(summary_producer,
                        OpenIndexTopic(*admin, client, KafkaSummaryTopicName(parsed.topic), summary_uri, partitions,
                                       replicas, parsed.ToString(), IndexKind::kSummaries));
  }
  TopicConfig read_config = config;
  read_config.read_pattern = ReadPattern::kSequential;

  std::vector<TokenIndexBuild> out;
  uint64_t token = 0;
  for (int32_t pi = 0; pi < partitions; ++pi) {
    const PartitionId p(static_cast<uint32_t>(pi));
    const std::string label = parsed.ToString() + " partition " + ToString(p);
    TF_ASSIGN_OR_RETURN(IndexChain chain,
                        LoadIndexChain(index_uri, p, read_config, /*wait_for_new_topic=*/true, IndexKind::kChunks));
    IndexChain summaries;
    summaries.topic_exists = true;
    if (with_summaries) {
      TF_ASSIGN_OR_RETURN(summaries, LoadIndexChain(summary_uri, p, read_config, /*wait_for_new_topic=*/true,
                                                    IndexKind::kSummaries));
    }
    if (!chain.topic_exists || !summaries.topic_exists) {
      return Status::Unavailable(parsed.ToString() + " partition " + ToString(p) + ": an index topic, just " +
                                 "described, cannot be read: try again");
    }
    TF_ASSIGN_OR_RETURN(std::unique_ptr<PartitionCursor> cursor, OpenKafkaPartitionCursor(uri, p, read_config));
    TF_ASSIGN_OR_RETURN(Offset low, cursor->StartOffset());
    TF_ASSIGN_OR_RETURN(Offset high, cursor->EndOffset());
    uint64_t from = low.value();
    if (!chain.chunks.empty()) {
      if (chain.end > high.value()) {
        return Status::Corruption(label + ": its token index describes offsets up to " + Num(chain.end) +
                                  ", past the partition's end offset " + ToString(high) + " (was the topic " +
                                  "deleted and created again?): delete " + index_uri + " and " + summary_uri +
                                  " and run `tokenfeed index` again");
      }
      if (chain.start > low.value()) {
        return Status::InvalidArgument(label + ": its token index starts at offset " + Num(chain.start) +
                                       ", after the partition's first offset " + ToString(low) +
                                       ": delete " + index_uri + " and " + summary_uri +
                                       " and run `tokenfeed index` again");
      }
      from = chain.end;
    }
    // The summaries follow the chunks one for one and are written after
    // them: they may lack the last chunks' (a build that stopped between
    // the two), never describe more.
    const bool summaries_fit =
        summaries.chunks.empty() ||
        (!chain.chunks.empty() && summaries.start == chain.start && summaries.end <= chain.end &&
         std::any_of(chain.chunks.begin(), chain.chunks.end(), [&](const Chunk& c) { return c.end == summaries.end; }));
    if (!summaries_fit) {
      return Status::Corruption(summary_uri + " partition " + ToString(p) + ": its summaries cover offsets [" +
                                Num(summaries.start) + ", " + Num(summaries.end) + "), which do not follow the " +
                                "chunks of " + index_uri + " (" + Num(chain.start) + " to " + Num(chain.end) +
                                "): " + Remedy(IndexKind::kSummaries, summary_uri));
    }
    std::vector<std::string> pending_summaries;
    if (with_summaries) {
      TF_ASSIGN_OR_RETURN(pending_summaries, SummariesOf(chain, summaries.chunks.empty() ? 0 : summaries.end, p,
                                                         options.summary_group));
    }
    TokenIndexBuild built;
    built.partition = p;
    std::vector<IndexChunkEntry> entries;
    uint64_t chunk_first = from;
    auto emit = [&](uint64_t end) -> Status {
      TF_ASSIGN_OR_RETURN(std::string bytes, EncodeIndexChunk(p.value(), chunk_first, end, entries));
      TF_RETURN_IF_ERROR(producer->Produce(pi, std::string_view(), bytes, token++));
      if (with_summaries) {
        TF_ASSIGN_OR_RETURN(std::string summary,
                            EncodeIndexSummary(p.value(), options.summary_group, chunk_first, end, entries));
        pending_summaries.push_back(std::move(summary));
      }
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
      if (entries.size() == options.chunk_records && r.offset.value() + 1 < high.value()) return emit(r.offset.value() + 1);
      return Status::OK();
    }));
    if (chunk_first < high.value()) TF_RETURN_IF_ERROR(emit(high.value()));
    built.covered = std::max(chain.end, high.value());
    TF_RETURN_IF_ERROR(FlushIndex(*producer, config, index_uri + " partition " + ToString(p) + ": writing a chunk"));
    // Only now, with the chunks written: a summary never describes offsets
    // the chunks do not.
    if (with_summaries) {
      for (const std::string& summary : pending_summaries) {
        TF_RETURN_IF_ERROR(summary_producer->Produce(pi, std::string_view(), summary, token++));
        built.summaries_written += 1;
      }
      TF_RETURN_IF_ERROR(
          FlushIndex(*summary_producer, config, summary_uri + " partition " + ToString(p) + ": writing a summary"));
    }
    out.push_back(built);
  }
  return out;
}

}  // namespace tokenfeed::topic
