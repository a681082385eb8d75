#include "topic/log_topic.h"

#include <algorithm>
#include <map>

#include "topic/token_index_writer.h"

namespace tokenfeed::topic {
namespace {

// A partition opened for writing: its log writer, its token index writer
// (token_index_writer.h) and what repairing that index at open had to say.
struct OpenedPartition {
  std::unique_ptr<log::PartitionWriter> writer;
  std::unique_ptr<TokenIndexWriter> tokens;
  std::string tokens_note;
};

// Each partition has its own open batch, a BatchBuilder that Reserve fills in
// place and PartitionWriter::Append writes as it is; after the append, the
// partition's token index gets an entry per record of that batch.
class LogTopicWriter final : public TopicWriter {
 public:
  LogTopicWriter(std::unique_ptr<log::TopicDirectory> topic, std::map<PartitionId, OpenedPartition> opened)
      : topic_(std::move(topic)) {
    for (auto& [p, o] : opened) {
      // Kept at opening: Close() ends the writers.
      const log::RecoveryReport& r = o.writer->recovery();
      if (!r.clean()) notes_.push_back(uri() + " partition " + ToString(p) + ": " + r.ToString());
      if (!o.tokens_note.empty()) notes_.push_back(uri() + " partition " + ToString(p) + ": " + o.tokens_note);
      partitions_[p].writer = std::move(o.writer);
      partitions_[p].tokens = std::move(o.tokens);
    }
  }
  ~LogTopicWriter() override { (void)Close(); }

  const std::string& uri() const override { return topic_->uri(); }
  uint32_t partition_count() const override { return topic_->partition_count(); }

  // Hot path: a record is reserved once per document.
  Result<std::span<uint8_t>> Reserve(PartitionId partition, size_t size) override {
    TF_ASSIGN_OR_RETURN(Partition * p, Open(partition));
    const uint64_t stored = p->batch.size_bytes_with(size);
    if (stored > log::BatchBuilder::kMaxBytes) [[unlikely]] {
      const std::string where = uri() + " partition " + ToString(partition) + ": a record of " +
                                std::to_string(size) + " bytes";
      if (p->batch.empty()) {
        return Status::InvalidArgument(where + " is larger than a batch may be (1 GiB): store smaller records");
      }
      return Status::InvalidArgument(where + " after the " + std::to_string(p->batch.record_count()) +
                                     " records of the open batch would make it larger than a batch may be "
                                     "(1 GiB): commit smaller batches");
    }
    return std::span<uint8_t>(p->batch.AddUninitialized(size), size);
  }

  Status Commit(PartitionId partition) override {
    TF_ASSIGN_OR_RETURN(Partition * p, Open(partition));
    if (p->batch.empty()) return Status::OK();
    auto appended = p->writer->Append(&p->batch);
    if (!appended.ok()) return appended.status();  // the open batch is kept, as Commit promises
    // The records are stored: an index that stops here only leaves a note.
    if (Status s = p->tokens->Append(p->batch, appended->base_offset); !s.ok()) {
      notes_.push_back(uri() + " partition " + ToString(partition) + ": " + s.message());
    }
    p->batch.Clear();
    return Status::OK();
  }

  Status Abandon(PartitionId partition) override {
    TF_ASSIGN_OR_RETURN(Partition * p, Open(partition));
    p->batch.Clear();
    return Status::OK();
  }

  Status Flush() override {
    for (auto& [id, p] : partitions_) TF_RETURN_IF_ERROR(p.writer->Sync());
    return Status::OK();
  }

  Result<Offset> EndOffset(PartitionId partition) override {
    TF_ASSIGN_OR_RETURN(Partition * p, Open(partition));
    return p->writer->end_offset();
  }

  Result<std::optional<std::string>> LastRecord(PartitionId partition) override {
    TF_ASSIGN_OR_RETURN(Partition * p, Open(partition));
    TF_ASSIGN_OR_RETURN(std::optional<log::StoredRecord> last, p->writer->ReadLastRecord());
    if (!last) return std::optional<std::string>();
    return std::optional<std::string>(std::move(last->bytes));
  }

  Status Close() override {
    Status first;
    for (auto& [id, p] : partitions_) {
      p.tokens->Close();
      Status s = p.writer->Close();
      if (first.ok() && !s.ok()) first = s;
    }
    partitions_.clear();  // open batches are dropped, as Abandon does
    return first;
  }

  std::vector<std::string> RecoveryNotes() const override { return notes_; }

 private:
  struct Partition {
    std::unique_ptr<log::PartitionWriter> writer;
    std::unique_ptr<TokenIndexWriter> tokens;
    log::BatchBuilder batch;  // the open batch
  };

  Result<Partition*> Open(PartitionId id) {
    auto it = partitions_.find(id);
    if (it == partitions_.end()) [[unlikely]] {
      return Status::InvalidArgument(uri() + ": partition " + ToString(id) + " is not open for writing here");
    }
    return &it->second;
  }

  std::unique_ptr<log::TopicDirectory> topic_;
  std::map<PartitionId, Partition> partitions_;
  std::vector<std::string> notes_;
};

class LogPartitionCursor final : public PartitionCursor {
 public:
  LogPartitionCursor(std::unique_ptr<log::TopicDirectory> topic, std::unique_ptr<log::PartitionReader> reader)
      : topic_(std::move(topic)), reader_(std::move(reader)) {}

  Status Seek(Offset offset) override {
    batch_ = log::BatchView();
    next_ = batch_.end();
    handed_ = 0;
    owner_.reset();
    return reader_->Seek(offset);
  }

  using PartitionCursor::Read;
  Result<std::span<const StoredRecordView>> Read(std::chrono::milliseconds wait, size_t max_records,
                                                 Offset before) override {
    records_.clear();
    if (position() >= before) return std::span<const StoredRecordView>(records_);
    // Offsets are dense here: no more than `before` allows is taken.
    max_records = std::min<uint64_t>(max_records, before - position());
    if (next_ == batch_.end()) {
      TF_ASSIGN_OR_RETURN(batch_, reader_->Read(wait));
      next_ = batch_.begin();
      handed_ = 0;
      owner_ = reader_->LastBatchOwner();
    }
    // The rest of the last batch is handed out first (its bytes stay valid
    // until the reader's next Read), walked only as far as asked: a loader
    // block often ends long before its batch does.
    for (; next_ != batch_.end() && records_.size() < max_records; ++next_, ++handed_) {
      const log::LogRecord r = *next_;
      records_.push_back({r.offset, r.bytes, batch_.append_time_unix_ms()});
    }
    return std::span<const StoredRecordView>(records_);
  }

  std::shared_ptr<const void> RecordsOwner() const override { return records_.empty() ? nullptr : owner_; }

  Status SetReadEnd(Offset) override { return Status::OK(); }  // the log reads nothing ahead

  Offset position() const override {
    return next_ != batch_.end() ? batch_.first_offset() + handed_ : reader_->position();
  }
  Result<Offset> EndOffset() override { return reader_->EndOffset(); }
  Result<Offset> StartOffset() override {
    TF_ASSIGN_OR_RETURN(log::TopicDescription d, topic_->Describe());
    return d.partitions.at(reader_->partition().value()).start_offset;
  }
  PartitionId partition() const override { return reader_->partition(); }

 private:
  std::unique_ptr<log::TopicDirectory> topic_;
  std::unique_ptr<log::PartitionReader> reader_;
  log::BatchView batch_;                   // the reader's last batch
  log::BatchView::Iterator next_ = batch_.end();  // its first record not handed out
  uint32_t handed_ = 0;                    // records of batch_ handed out
  std::shared_ptr<const void> owner_;      // of batch_'s bytes, if they outlive the next read
  std::vector<StoredRecordView> records_;  // returned by the last Read
};

}  // namespace

Result<std::unique_ptr<TopicWriter>> OpenLogTopicWriter(std::string_view uri, const WriterConfig& config,
                                                        std::vector<PartitionId> partitions) {
  auto opened = log::TopicDirectory::Open(uri, config.log_file_system);
  std::unique_ptr<log::TopicDirectory> topic;
  if (opened.ok()) {
    topic = std::move(opened).value();
    if (config.partitions != 0 && topic->partition_count() != config.partitions) {
      return Status::InvalidArgument(topic->uri() + " has " + std::to_string(topic->partition_count()) +
                                     " partitions, not the " + std::to_string(config.partitions) +
                                     " asked for: pass --partitions " + std::to_string(topic->partition_count()) +
                                     " or use a new topic");
    }
  } else if (opened.status().IsNotFound()) {
    if (!config.create_if_missing) {
      return opened.status().WithContext("the topic does not exist and creating it is not allowed");
    }
    log::TopicOptions options = config.log_topic;
    options.partitions = config.partitions == 0 ? 1 : config.partitions;
    auto created = log::TopicDirectory::Create(uri, options, config.log_file_system);
    if (!created.ok() && created.status().code() == StatusCode::kAlreadyExists) {
      created = log::TopicDirectory::Open(uri, config.log_file_system);  // another process created it just now
    }
    if (!created.ok()) return created.status();
    topic = std::move(created).value();
  } else {
    return opened.status();
  }
  if (partitions.empty()) {
    for (uint32_t p = 0; p < topic->partition_count(); ++p) partitions.emplace_back(p);
  }
  std::map<PartitionId, OpenedPartition> writers;
  for (PartitionId p : partitions) {
    if (p.value() >= topic->partition_count()) {
      return Status::InvalidArgument(topic->uri() + " has no partition " + ToString(p));
    }
    OpenedPartition o;
    TF_ASSIGN_OR_RETURN(o.writer, topic->OpenWriter(p, config.log));
    // After the log's recovery, so that the index is made to match what it
    // kept. Only a newer index version or a link fails this: a repair that
    // fails leaves the index off, with a note.
    TF_ASSIGN_OR_RETURN(o.tokens, TokenIndexWriter::Open(topic.get(), p, o.writer->end_offset(), &o.tokens_note));
    writers.emplace(p, std::move(o));
  }
  return std::unique_ptr<TopicWriter>(std::make_unique<LogTopicWriter>(std::move(topic), std::move(writers)));
}

Result<TopicSummary> DescribeLogTopic(std::string_view uri) {
  TF_ASSIGN_OR_RETURN(auto topic, log::TopicDirectory::Open(uri));
  TF_ASSIGN_OR_RETURN(log::TopicDescription d, topic->Describe());
  TopicSummary s;
  s.uri = d.uri;
  for (const auto& p : d.partitions) s.partitions.push_back({p.partition, p.start_offset, p.end_offset, p.bytes});
  s.details = "embedded log, format " + std::to_string(d.format_version) + ", created by " + d.created_by;
  for (const auto& p : d.partitions) {
    if (!p.problem.empty()) s.details += "; partition " + ToString(p.partition) + ": " + p.problem;
  }
  return s;
}

Result<std::unique_ptr<PartitionCursor>> OpenLogPartitionCursor(std::string_view uri, PartitionId partition,
                                                                const TopicConfig& config) {
  TF_ASSIGN_OR_RETURN(auto topic, log::TopicDirectory::Open(uri));
  if (partition.value() >= topic->partition_count()) {
    return Status::OutOfRange(topic->uri() + " has " + std::to_string(topic->partition_count()) +
                              " partitions; there is no partition " + ToString(partition));
  }
  log::ReaderOptions ro;
  // How much of the active segment one read takes (ReadPattern).
  ro.buffer_bytes = config.read_pattern == ReadPattern::kBlocks ? size_t{1} << 20 : size_t{8} << 20;
  TF_ASSIGN_OR_RETURN(auto reader, topic->OpenReader(partition, ro));
  return std::unique_ptr<PartitionCursor>(std::make_unique<LogPartitionCursor>(std::move(topic), std::move(reader)));
}

}  // namespace tokenfeed::topic
