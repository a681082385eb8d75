#include "tokenfeed/token_index.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "log/log.h"
#ifdef TOKENFEED_HAS_KAFKA
#include "topic/kafka_token_index.h"
#endif
#include "topic/token_index_file.h"

namespace tokenfeed::topic {

namespace {

std::string Num(uint64_t v) { return std::to_string(v); }

// The most entries read at once for dense offsets (8 MiB), and what dense
// means: on average no more than kDenseGap entries apart.
constexpr uint64_t kBulkEntries = uint64_t{1} << 20;
constexpr uint64_t kDenseGap = 64;

// Counts the token ids of a partition's records by reading them, forward
// only: for the offsets past what the index holds.
class RecordCounter {
 public:
  RecordCounter(log::PartitionReader* reader, std::string label, uint64_t position, uint64_t tokens)
      : reader_(reader), label_(std::move(label)), position_(position), tokens_(tokens) {}

  Status Start() { return reader_->Seek(Offset(position_)); }

  // The token ids at offsets [start, target): those counted so far plus the
  // records from here to target.
  Result<uint64_t> TokensBefore(uint64_t target, TokenIndexRead* out) {
    while (position_ < target) {
      if (next_ == batch_.end()) {
        TF_ASSIGN_OR_RETURN(batch_, reader_->Read(std::chrono::milliseconds(0)));
        next_ = batch_.begin();
        if (batch_.empty()) {
          return Status::Corruption(label_ + ": its records end at offset " + Num(position_) + ", before offset " +
                                    Num(target) + " that was within the partition a moment ago");
        }
      }
      const log::LogRecord r = *next_;
      if (__builtin_add_overflow(tokens_, RecordTokenCount(r.bytes), &tokens_)) {
        return Status::Corruption(label_ + ": its token index's last entry leaves no room to count the record at "
                                           "offset " + Num(position_) + " on from (more than 2^64 ids): the index is "
                                           "damaged; the next open of the partition's writer rebuilds it");
      }
      out->records_read += 1;
      out->bytes_read += r.bytes.size();
      ++next_;
      ++position_;
    }
    return tokens_;
  }

 private:
  log::PartitionReader* reader_;
  std::string label_;
  uint64_t position_;
  uint64_t tokens_;
  log::BatchView batch_;
  log::BatchView::Iterator next_ = batch_.end();
};

// The log's: the topic, the partition's range (through a record reader,
// which also counts the records past the index) and its index file, opened
// once; each Read answers from them.
class LogTokenIndexReader final : public TokenIndexReader {
 public:
  static Result<std::unique_ptr<TokenIndexReader>> Open(std::string_view uri, PartitionId partition) {
    auto r = std::unique_ptr<LogTokenIndexReader>(new LogTokenIndexReader());
    TF_ASSIGN_OR_RETURN(r->topic_, log::TopicDirectory::Open(uri));
    r->partition_ = partition;
    r->label_ = r->topic_->uri() + " partition " + ToString(partition);
    if (partition.value() >= r->topic_->partition_count()) {
      return Status::OutOfRange(r->topic_->uri() + " has " + Num(r->topic_->partition_count()) +
                                " partitions; there is no partition " + ToString(partition));
    }
    TF_RETURN_IF_ERROR(r->OpenRecordReader());
    r->start_ = r->reader_->position().value();
    TF_ASSIGN_OR_RETURN(Offset end_offset, r->reader_->EndOffset());
    r->end_ = end_offset.value();
    Result<TokenIndexFile> opened =
        TokenIndexFile::Open(r->topic_->file_system(), r->topic_->TokenIndexPath(partition));
    if (opened.ok()) {
      r->index_ = std::move(opened).value();
    } else if (!opened.status().IsNotFound()) {
      // Reported by Read, after the offsets asked are checked.
      r->index_error_ = opened.status().WithContext(r->label_);
    }
    return std::unique_ptr<TokenIndexReader>(std::move(r));
  }

  Result<TokenIndexRead> Read(std::span<const Offset> offsets) override;
  uint64_t covered() const override { return index_ ? index_->entry_count() : 0; }

 private:
  LogTokenIndexReader() = default;
  Status OpenRecordReader() {
    // Records are read only to count what the index lacks, front to back.
    log::ReaderOptions ro;
    ro.buffer_bytes = size_t{1} << 20;
    TF_ASSIGN_OR_RETURN(reader_, topic_->OpenReader(partition_, ro));
    return Status::OK();
  }

  std::unique_ptr<log::TopicDirectory> topic_;
  PartitionId partition_{0};
  std::string label_;
  uint64_t start_ = 0, end_ = 0;
  std::optional<TokenIndexFile> index_;
  Status index_error_;  // the index file could not be opened (not its absence)
  std::unique_ptr<log::PartitionReader> reader_;
};

Result<TokenIndexRead> LogTokenIndexReader::Read(std::span<const Offset> offsets) {
  const std::string& label = label_;
  const uint64_t start = start_, end = end_;
  std::optional<TokenIndexFile>& index = index_;
  std::unique_ptr<log::PartitionReader>& reader = reader_;
  for (size_t i = 0; i < offsets.size(); ++i) {
    if (i > 0 && offsets[i] < offsets[i - 1]) {
      return Status::InvalidArgument(label + ": the offsets asked of its token index must not decrease, but offset " +
                                     ToString(offsets[i]) + " (at index " + Num(i) + ") comes after " +
                                     ToString(offsets[i - 1]));
    }
    if (offsets[i].value() < start || offsets[i].value() > end) {
      return Status::OutOfRange(label + ": offset " + ToString(offsets[i]) + " was asked of its token index, but " +
                                "the partition holds offsets [" + Num(start) + ", " + Num(end) + ") (start offset " +
                                Num(start) + ", end offset " + Num(end) + "; offsets " + Num(start) + " to " +
                                Num(end) + " may be asked). Offsets taken from an earlier state of the topic (a " +
                                "snapshot or checkpoint) no longer fit it if the topic was cut back, deleted or " +
                                "recreated since: use the topic they were taken from, or start afresh");
    }
  }

  TokenIndexRead out;
  out.points.reserve(offsets.size());
  if (offsets.empty()) return out;
  if (!index_error_.ok()) return index_error_;

  // Entries the index held at open (0 without one); entry i counts offsets [0, i + 1).
  uint64_t entries = index ? index->entry_count() : 0;

  // The ids at offsets [0, x), from the index, for x <= entries; nullopt when
  // the file is shorter than it was at open (a writer's open cut it back).
  // Entries read must not decrease; `damaged` reports two that do.
  auto damaged = [&](uint64_t before, uint64_t before_value, uint64_t i, uint64_t value) {
    return Status::Corruption(label + ": " + index->Decrease(before, before_value, i, value).message() +
                              ". The next writer to open the partition rebuilds the index from its records");
  };
  uint64_t last_entry = 0, last_value = 0;
  bool read_any = false;
  auto cumulative = [&](uint64_t x) -> Result<std::optional<uint64_t>> {
    if (x == 0) return std::optional<uint64_t>(0);
    TF_ASSIGN_OR_RETURN(std::optional<uint64_t> v, index->Entry(x - 1));
    if (!v) return v;
    if (read_any && x - 1 >= last_entry && *v < last_value) return damaged(last_entry, last_value, x - 1, *v);
    read_any = true;
    last_entry = x - 1;
    last_value = *v;
    return v;
  };

  // Offsets [start, x) from the index while it covers them.
  uint64_t before_start = 0;
  if (start > entries) {
    entries = 0;  // the index says nothing of the records from the start on
  } else {
    TF_ASSIGN_OR_RETURN(std::optional<uint64_t> s, cumulative(start));
    if (!s) entries = 0;
    before_start = s.value_or(0);
  }
  // Offsets the index covers, dense (a block's records): their entries in
  // one read, checked to never decrease. Sparse ones (block boundaries)
  // are read one by one below.
  const uint64_t lo = offsets.front().value(), hi = offsets.back().value();
  if (index && hi <= entries && hi - lo <= kBulkEntries && hi - lo <= kDenseGap * offsets.size()) {
    const uint64_t first = lo == 0 ? 0 : lo - 1;  // entry x - 1 answers offset x
    std::vector<uint64_t> values(hi - first);
    TF_ASSIGN_OR_RETURN(bool whole, index->Entries(first, values));
    if (whole) {
      // Offset start's count (entry start - 1) was read above: the entries
      // from here on must not fall below it, nor below one another.
      if (!values.empty() && values.front() < before_start) {
        return damaged(start - 1, before_start, first, values.front());
      }
      for (size_t k = 1; k < values.size(); ++k) {
        if (values[k] < values[k - 1]) return damaged(first + k - 1, values[k - 1], first + k, values[k]);
      }
      for (const Offset asked : offsets) {
        const uint64_t o = asked.value();
        out.points.push_back({o - start, (o == 0 ? 0 : values[o - 1 - first]) - before_start});
      }
      return out;
    }
  }
  std::optional<RecordCounter> counter;
  for (const Offset asked : offsets) {
    const uint64_t o = asked.value();
    IndexPoint point;
    point.records = o - start;
    if (o <= entries && !counter) {
      TF_ASSIGN_OR_RETURN(std::optional<uint64_t> v, cumulative(o));
      if (v) {
        point.tokens = *v - before_start;
        out.points.push_back(point);
        continue;
      }
      entries = 0;  // cut back under us: count from the start
    }
    if (!counter) {
      // From the index's last entry (or the start) on, through the records.
      uint64_t from = start, tokens = 0;
      if (entries > start) {
        TF_ASSIGN_OR_RETURN(std::optional<uint64_t> v, cumulative(entries));
        if (v) {
          from = entries;
          tokens = *v - before_start;
        }
      }
      counter.emplace(reader.get(), label, from, tokens);
      TF_RETURN_IF_ERROR(counter->Start());
    }
    TF_ASSIGN_OR_RETURN(point.tokens, counter->TokensBefore(o, &out));
    out.points.push_back(point);
  }
  return out;
}

}  // namespace

Result<TokenIndexRead> ReadTokenIndex(std::string_view uri, PartitionId partition, std::span<const Offset> offsets,
                                      const TopicConfig& config) {
#ifdef TOKENFEED_HAS_KAFKA
  TF_ASSIGN_OR_RETURN(TopicKind kind, KindOf(uri));
  if (kind == TopicKind::kKafka) return ReadKafkaTokenIndex(uri, partition, offsets, config);
#endif
  TF_ASSIGN_OR_RETURN(std::unique_ptr<TokenIndexReader> reader, OpenTokenIndexReader(uri, partition, config));
  return reader->Read(offsets);
}

Result<std::unique_ptr<TokenIndexReader>> OpenTokenIndexReader(std::string_view uri, PartitionId partition,
                                                               const TopicConfig& config) {
  TF_ASSIGN_OR_RETURN(TopicKind kind, KindOf(uri));
  if (kind == TopicKind::kKafka) {
#ifdef TOKENFEED_HAS_KAFKA
    return OpenKafkaTokenIndexReader(uri, partition, config);
#else
    return Status::Unsupported("'" + std::string(uri) + "': this build has no Kafka support");
#endif
  }
  return LogTokenIndexReader::Open(uri, partition);
}

Result<std::vector<TokenIndexBuild>> BuildKafkaTokenIndex(std::string_view uri, const TopicConfig& config,
                                                          const TokenIndexBuildOptions& options) {
  TF_ASSIGN_OR_RETURN(TopicKind kind, KindOf(uri));
  if (kind != TopicKind::kKafka) {
    return Status::Unsupported("'" + std::string(uri) + "' is not a Kafka topic: an embedded log topic's token " +
                               "index (TOKENS) is kept by its writer, and opening one repairs it");
  }
#ifdef TOKENFEED_HAS_KAFKA
  return BuildKafkaIndexTopic(uri, config, options);
#else
  (void)config;
  (void)options;
  return Status::Unsupported("'" + std::string(uri) + "': this build has no Kafka support");
#endif
}

bool HasTokenIndex(std::string_view uri) {
  Result<TopicKind> kind = KindOf(uri);
#ifdef TOKENFEED_HAS_KAFKA
  return kind.ok() && (*kind == TopicKind::kLog || *kind == TopicKind::kKafka);
#else
  return kind.ok() && *kind == TopicKind::kLog;
#endif
}

}  // namespace tokenfeed::topic
