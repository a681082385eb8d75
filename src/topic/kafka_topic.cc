#include "topic/kafka_topic.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <thread>

#include "kafka/admin_client.h"
#include "kafka/client_options.h"
#include "kafka/kafka_uri.h"
#include "kafka/partition_consumer.h"
#include "kafka/producer.h"

namespace tokenfeed::topic {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// What a record batch adds around one record (batch header 61 bytes, record
// header up to ~20): a record whose bytes plus this exceed the topic's
// max.message.bytes can never be written, whatever the compression.
constexpr size_t kBatchOverheadBytes = 128;
// Records a cursor hands out per Read at most.
constexpr size_t kCursorBatchRecords = 8192;
// The producer's default batch.size (src/kafka/producer.cc).
constexpr int64_t kDefaultBatchBytes = 1000000;

// The ingest's resume needs every partition to hold a prefix of what was
// appended to it. The idempotent producer keeps that while it retries; these
// two settings keep it when it gives up: no record ever times out locally
// (it is retried until acknowledged, and the writer's Flush bounds the wait
// instead), and any other failure that could leave a gap stops the producer
// (a fatal error) instead of bumping the epoch and writing the records after
// the gap. docs/kafka.md, "Exactly once".
struct WriterSetting {
  std::string key;
  std::string value;
};
const std::vector<WriterSetting>& WriterSettings() {
  static const std::vector<WriterSetting> s = {
      {"message.timeout.ms", "0"},
      {"enable.gapless.guarantee", "true"},
  };
  return s;
}

}  // namespace

Status ApplyWriterSettings(kafka::ClientConfig* config) {
  for (const auto& s : WriterSettings()) {
    const kafka::ConfigEntry* user = config->Find(s.key);
    if (user != nullptr && user->value != s.value) {
      return Status::InvalidArgument("Kafka client property '" + s.key + "=" + user->value + "' (" + user->origin +
                                     ") is not allowed for a topic writer: it would let a failed record leave a gap "
                                     "in its partition, which a resumed ingest cannot see; remove it");
    }
    config->Set(s.key, s.value, "tokenfeed topic writer");
  }
  return Status::OK();
}

namespace {

std::optional<int64_t> ParseInt(const std::string& v) {
  int64_t n = 0;
  if (std::from_chars(v.data(), v.data() + v.size(), n).ec != std::errc()) return std::nullopt;
  return n;
}

std::span<const uint8_t> AsBytes(std::span<const std::byte> b) {
  return {reinterpret_cast<const uint8_t*>(b.data()), b.size()};
}

class KafkaTopicWriter final : public TopicWriter {
 public:
  KafkaTopicWriter(std::string uri, kafka::KafkaUri parsed, kafka::ClientOptions client,
                   std::unique_ptr<kafka::AdminClient> admin, std::unique_ptr<kafka::Producer> producer,
                   uint32_t partition_count, std::set<uint32_t> owned, std::optional<int64_t> topic_limit)
      : uri_(std::move(uri)),
        parsed_(std::move(parsed)),
        client_(std::move(client)),
        admin_(std::move(admin)),
        producer_(std::move(producer)),
        partition_count_(partition_count),
        owned_(std::move(owned)),
        topic_limit_(topic_limit) {}
  ~KafkaTopicWriter() override { (void)Close(); }

  const std::string& uri() const override { return uri_; }
  uint32_t partition_count() const override { return partition_count_; }

  // The open batch is a plain buffer: the producer copies every record
  // anyway, so building it in librdkafka's memory would save nothing.
  Result<std::span<uint8_t>> Reserve(PartitionId partition, size_t size) override {
    TF_RETURN_IF_ERROR(first_error_);
    TF_RETURN_IF_ERROR(CheckOwned(partition));
    // Refused before it is queued, and still the end of the writer, as any
    // failure is (docs/kafka.md).
    if (topic_limit_ && size + kBatchOverheadBytes > static_cast<size_t>(*topic_limit_)) {
      return Fail(Status::ResourceExhausted(
          uri_ + " partition " + ToString(partition) + ": a record of " + std::to_string(size) +
          " bytes does not fit the topic's max.message.bytes = " + std::to_string(*topic_limit_) +
          " (a record needs its size plus " + std::to_string(kBatchOverheadBytes) +
          " bytes of batch framing): raise max.message.bytes on topic '" + parsed_.topic +
          "' (kafka-configs.sh --alter --entity-type topics --entity-name " + parsed_.topic +
          " --add-config max.message.bytes=N), and the producer's message.max.bytes (-X message.max.bytes=N) "
          "if the record is above 1000000 bytes"));
    }
    OpenBatch& b = open_[partition.value()];
    const size_t at = b.bytes.size();
    b.bytes.resize(at + size);
    b.ends.push_back(at + size);
    return std::span<uint8_t>(b.bytes.data() + at, size);
  }

  Status Commit(PartitionId partition) override {
    TF_RETURN_IF_ERROR(first_error_);
    TF_RETURN_IF_ERROR(CheckOwned(partition));
    OpenBatch& b = open_[partition.value()];
    if (b.ends.empty()) return Status::OK();
    const auto p = static_cast<int32_t>(partition.value());
    size_t begin = 0;
    for (size_t end : b.ends) {
      const std::span<const uint8_t> r(b.bytes.data() + begin, end - begin);
      begin = end;
      Status s = producer_->Produce(p, std::span<const std::byte>(), std::as_bytes(r), next_token_++);
      if (!s.ok()) return Fail(s);  // records after it must not follow (Fail)
    }
    b.bytes.clear();
    b.ends.clear();
    // Serves the delivery reports so that they do not pile up, and finds a
    // failed record early.
    Status polled = producer_->PollDeliveries(milliseconds(0), &deliveries_);
    Absorb();
    if (!polled.ok()) return Fail(polled);
    return first_error_;
  }

  Status Abandon(PartitionId partition) override {
    TF_RETURN_IF_ERROR(CheckOwned(partition));
    OpenBatch& b = open_[partition.value()];
    b.bytes.clear();
    b.ends.clear();
    return Status::OK();
  }

  Status Flush() override {
    TF_RETURN_IF_ERROR(first_error_);
    size_t in_flight = producer_->InFlight();
    auto last_progress = Clock::now();
    while (producer_->InFlight() > 0) {
      Status s = producer_->Flush(std::min(client_.timeout, milliseconds(500)), &deliveries_);
      Absorb();
      TF_RETURN_IF_ERROR(first_error_);
      if (s.ok()) break;
      if (s.code() != StatusCode::kTimedOut) return Fail(s);
      const size_t now_in_flight = producer_->InFlight();
      if (now_in_flight < in_flight) {
        in_flight = now_in_flight;
        last_progress = Clock::now();
      } else if (Clock::now() - last_progress >= client_.timeout) {
        return Fail(Status::TimedOut(
            uri_ + ": " + std::to_string(now_in_flight) + " records not acknowledged, and none for " +
            std::to_string(client_.timeout.count()) + " ms (--kafka-timeout-ms); check that brokers " +
            client_.bootstrap + " run and that the topic's partitions have leaders and enough in-sync replicas. "
            "Librdkafka said: " + s.message()));
      }
    }
    return Status::OK();
  }

  Result<Offset> EndOffset(PartitionId partition) override {
    TF_RETURN_IF_ERROR(CheckOwned(partition));
    if (producer_ && producer_->InFlight() > 0) TF_RETURN_IF_ERROR(Flush());
    TF_ASSIGN_OR_RETURN(kafka::Watermarks w, admin_->QueryWatermarks(parsed_.topic, partition.value()));
    return Offset(static_cast<uint64_t>(w.high));
  }

  Result<std::optional<std::string>> LastRecord(PartitionId partition) override {
    TF_RETURN_IF_ERROR(CheckOwned(partition));
    if (producer_ && producer_->InFlight() > 0) TF_RETURN_IF_ERROR(Flush());
    const auto p = static_cast<int32_t>(partition.value());
    TF_ASSIGN_OR_RETURN(kafka::Watermarks w, admin_->QueryWatermarks(parsed_.topic, p));
    if (w.high <= w.low) return std::optional<std::string>();
    if (!reader_) {
      kafka::PartitionConsumerOptions o;
      static_cast<kafka::ClientOptions&>(o) = client_;
      o.topic = parsed_.topic;
      TF_ASSIGN_OR_RETURN(reader_, kafka::PartitionConsumer::Open(o, {}));
    }
    // The last offset holds the last record unless it is a transaction
    // marker (the ingest writes none; other writers may): then look further
    // back, 16 times as far each round.
    for (int64_t back = 1;; back *= 16) {
      const int64_t start = std::max(w.low, w.high - back);
      TF_RETURN_IF_ERROR(reader_->Assign({{p, start}}));
      std::optional<std::string> last;
      const auto deadline = Clock::now() + client_.timeout;
      while (!reader_->AtEnd(p)) {
        if (Clock::now() >= deadline) {
          return Status::TimedOut(uri_ + " partition " + ToString(partition) + ": could not read up to offset " +
                                  std::to_string(w.high) + " within " + std::to_string(client_.timeout.count()) +
                                  " ms (--kafka-timeout-ms); check brokers " + client_.bootstrap);
        }
        TF_ASSIGN_OR_RETURN(kafka::MessageBatch batch, reader_->Poll(1024, milliseconds(100)));
        for (const auto& r : batch) {
          if (r.offset < w.high) last.emplace(reinterpret_cast<const char*>(r.value.data()), r.value.size());
        }
      }
      if (last || start == w.low) return last;
    }
  }

  Status Close() override {
    if (!producer_) return first_error_;
    Status s = first_error_.ok() ? Flush() : first_error_;
    producer_.reset();  // drops what is still queued after a failure
    reader_.reset();
    open_.clear();  // open batches are dropped, as Abandon does
    return s;
  }

  std::vector<std::string> RecoveryNotes() const override { return {}; }

 private:
  Status CheckOwned(PartitionId p) const {
    if (owned_.count(p.value()) == 0) {
      return Status::InvalidArgument(uri_ + ": partition " + ToString(p) + " is not open for writing here");
    }
    if (!producer_) return Status::InvalidArgument(uri_ + ": the writer is closed");
    return Status::OK();
  }

  void Absorb() {
    for (const kafka::Delivery& d : deliveries_) {
      if (!d.status.ok() && first_error_.ok()) first_error_ = d.status;
    }
    deliveries_.clear();
  }

  // Any failure ends the writer: records queued after a failed one must not
  // be written (the partition would no longer be a prefix of the appends).
  Status Fail(Status s) {
    if (first_error_.ok()) first_error_ = std::move(s);
    return first_error_;
  }

  std::string uri_;
  kafka::KafkaUri parsed_;
  kafka::ClientOptions client_;
  std::unique_ptr<kafka::AdminClient> admin_;
  std::unique_ptr<kafka::Producer> producer_;
  std::unique_ptr<kafka::PartitionConsumer> reader_;
  uint32_t partition_count_;
  std::set<uint32_t> owned_;
  std::optional<int64_t> topic_limit_;
  std::vector<kafka::Delivery> deliveries_;
  struct OpenBatch {
    std::vector<uint8_t> bytes;  // the records, one after the other
    std::vector<size_t> ends;    // where each record ends in `bytes`
  };
  std::map<uint32_t, OpenBatch> open_;  // by partition
  uint64_t next_token_ = 0;
  Status first_error_;
};

// Assigns lazily: the first Read assigns the partition at the position, so
// an inspect that seeks at once costs one fetch start. Later Seeks move the
// assigned partition (a seek is cheaper than a new assignment, and it can
// be made while the partition is paused).
//
// The read end (SetReadEnd) is what makes block reads cheap: librdkafka
// goes on fetching a partition after a seek until its queue holds
// queued.min.messages records, so a reader that takes one block and seeks
// elsewhere had the fetcher decompress many batches past the block for
// nothing. Once the record before the end is handed out, the partition is
// paused; the next Seek moves it while paused and resumes it there.
class KafkaPartitionCursor final : public PartitionCursor {
 public:
  KafkaPartitionCursor(std::string uri, std::unique_ptr<kafka::PartitionConsumer> consumer, PartitionId partition,
                       Offset start)
      : uri_(std::move(uri)), consumer_(std::move(consumer)), partition_(partition), position_(start) {}
  ~KafkaPartitionCursor() override {
    batch_.Release();  // before the consumer, which waits for outstanding messages
    consumer_.reset();
  }

  Status Seek(Offset offset) override {
    read_end_.reset();
    if (assigned_ && offset == position_ && !paused_) return Status::OK();  // already there: keep the fetch going
    // The watermarks are asked for only when the offset is outside the range
    // seen last (a round trip to the broker each time would dominate a
    // reader that jumps between blocks, like the loader).
    if (!known_ || offset.value() < known_low_ || offset.value() > known_high_) {
      TF_ASSIGN_OR_RETURN(kafka::Watermarks fresh, Watermarks());
      known_ = true;
      known_low_ = static_cast<uint64_t>(fresh.low);
      known_high_ = static_cast<uint64_t>(fresh.high);
    }
    const kafka::Watermarks w{static_cast<int64_t>(known_low_), static_cast<int64_t>(known_high_)};
    if (offset.value() < static_cast<uint64_t>(w.low) || offset.value() > static_cast<uint64_t>(w.high)) {
      return Status::OutOfRange(uri_ + " partition " + ToString(partition_) + ": offset " + ToString(offset) +
                                " is outside the stored range " + std::to_string(w.low) + ".." +
                                std::to_string(w.high) + " (retention may have removed older records)");
    }
    batch_.Release();
    taken_ = 0;
    position_ = offset;
    if (assigned_) {
      TF_RETURN_IF_ERROR(Restart());
    }
    return Status::OK();
  }

  Status SetReadEnd(Offset end) override {
    read_end_ = end;
    return Status::OK();
  }

  using PartitionCursor::Read;
  Result<std::span<const StoredRecordView>> Read(std::chrono::milliseconds wait, size_t max_records,
                                                 Offset before) override {
    views_.clear();
    const auto p = static_cast<int32_t>(partition_.value());
    if (position_ >= before) return std::span<const StoredRecordView>(views_);
    if (!assigned_) {
      TF_RETURN_IF_ERROR(consumer_->Assign({{p, static_cast<int64_t>(position_.value())}}));
      assigned_ = true;
    }
    if (taken_ == batch_.size()) {  // nothing kept from the last poll: poll again
      batch_.Release();
      taken_ = 0;
      // The partition's end, once found, is past every offset below it:
      // no need to wait for records there (a tail of markers or aborted
      // records longer than a block).
      if (consumer_->AtEnd(p)) {
        if (auto at = consumer_->Position(p); at && static_cast<uint64_t>(*at) >= before.value()) {
          position_ = before;
          return std::span<const StoredRecordView>(views_);
        }
      }
      if (paused_) {  // reading on from the read end, or from a new one further on
        if (read_end_ && position_ >= *read_end_) read_end_.reset();
        TF_RETURN_IF_ERROR(Restart());
      }
      // What is not taken stays queued in the consumer, in order.
      TF_ASSIGN_OR_RETURN(batch_, consumer_->Poll(std::min(max_records, kCursorBatchRecords), wait));
      if (batch_.empty() && consumer_->AtEnd(p)) {
        // Offsets after the last record may hold transaction markers or
        // aborted records: the end of the partition is then past the last
        // record's offset.
        if (auto at = consumer_->Position(p); at && static_cast<uint64_t>(*at) > position_.value()) {
          position_ = Offset(std::min(static_cast<uint64_t>(*at), before.value()));
        }
      }
    }
    // Offsets between two records hold none to read (markers, aborted or
    // compacted records); a record at or past `before` stays for the next
    // Read, and tells that the offsets up to `before` are passed.
    while (taken_ < batch_.size() && views_.size() < max_records) {
      const Offset at(static_cast<uint64_t>(batch_[taken_].offset));
      if (at >= before) {
        position_ = before;
        break;
      }
      views_.push_back({at, AsBytes(batch_[taken_].value), batch_[taken_].timestamp_ms});
      position_ = at + 1;
      ++taken_;
    }
    if (read_end_ && position_ >= *read_end_ && !paused_) {
      TF_RETURN_IF_ERROR(consumer_->Pause(p));
      paused_ = true;
    }
    return std::span<const StoredRecordView>(views_);
  }

  Offset position() const override { return position_; }
  Result<Offset> EndOffset() override {
    TF_ASSIGN_OR_RETURN(kafka::Watermarks w, Watermarks());
    return Offset(static_cast<uint64_t>(w.high));
  }
  Result<Offset> StartOffset() override {
    TF_ASSIGN_OR_RETURN(kafka::Watermarks w, Watermarks());
    return Offset(static_cast<uint64_t>(w.low));
  }
  PartitionId partition() const override { return partition_; }

 private:
  Result<kafka::Watermarks> Watermarks() { return consumer_->QueryWatermarks(static_cast<int32_t>(partition_.value())); }

  // Fetches from position_ on, resuming a paused partition. The resume
  // comes first and the seek after it: librdkafka 2.0.2 does not wake the
  // fetcher on a resume (it would start a second later), a seek does; and
  // a seek after the resume also keeps it from fetching at the old place.
  // A partition the consumer cannot seek (one stopped by an error, say) is
  // assigned afresh by the next Read.
  Status Restart() {
    const auto p = static_cast<int32_t>(partition_.value());
    if (paused_) {
      TF_RETURN_IF_ERROR(consumer_->Resume(p));
      paused_ = false;
    }
    if (!consumer_->Seek(p, static_cast<int64_t>(position_.value())).ok()) assigned_ = false;
    return Status::OK();
  }

  std::string uri_;
  std::unique_ptr<kafka::PartitionConsumer> consumer_;
  PartitionId partition_;
  Offset position_;
  bool assigned_ = false;
  bool paused_ = false;  // at the read end: no fetching until the next Seek or Read
  std::optional<Offset> read_end_;
  bool known_ = false;
  uint64_t known_low_ = 0, known_high_ = 0;
  // The last poll's records; those from taken_ on are not handed out yet
  // (they lie at or past a Read's `before`). The consumer fetches on from
  // after the last of them.
  kafka::MessageBatch batch_;
  size_t taken_ = 0;
  std::vector<StoredRecordView> views_;
};

// A killed writer's last batches may sit on the leader beyond the high
// watermark until the followers fetch them (milliseconds, normally). A
// resumed ingest that read the last record before they arrive would write
// them again; so on a replicated topic wait until the ends stop moving.
Status WaitForSettledEnds(kafka::AdminClient& admin, const kafka::TopicInfo& info, const std::set<uint32_t>& owned) {
  const bool replicated = std::any_of(info.partitions.begin(), info.partitions.end(),
                                      [](const kafka::PartitionInfo& p) { return p.replicas.size() > 1; });
  if (!replicated) return Status::OK();
  auto ends = [&]() -> Result<std::vector<int64_t>> {
    std::vector<int64_t> out;
    for (uint32_t p : owned) {
      TF_ASSIGN_OR_RETURN(kafka::Watermarks w, admin.QueryWatermarks(info.name, static_cast<int32_t>(p)));
      out.push_back(w.high);
    }
    return out;
  };
  TF_ASSIGN_OR_RETURN(std::vector<int64_t> before, ends());
  for (int round = 0; round < 8; ++round) {
    std::this_thread::sleep_for(milliseconds(300));
    TF_ASSIGN_OR_RETURN(std::vector<int64_t> now, ends());
    if (now == before) return Status::OK();
    before = std::move(now);
  }
  return Status::OK();  // still growing: another writer is active, which the caller's rule forbids
}

}  // namespace

Result<kafka::ClientOptions> KafkaClientOptionsFor(std::string_view uri, const TopicConfig& config,
                                                   kafka::KafkaUri* parsed, const std::vector<std::string>& defaults) {
  return kafka::ClientOptionsForUri(uri, defaults, config.kafka_config_file, config.kafka_properties,
                                    config.kafka_timeout, parsed);
}

namespace {

// A cursor read in blocks (ReadPattern::kBlocks) jumps between them: a
// reassigned partition waits for the fetch in flight, so broker-side fetch
// waits stay short. And small fetches: a fetch returns at least one whole
// producer batch (ingest batches are up to 1 MB, about 500 KB compressed),
// and the one still in flight when a block ends is decompressed for
// nothing. 256 KiB used ~7 % less CPU per token than 1 MiB, shuffled
// (unshuffled the same); 4 MiB halved the shuffled rate.
std::vector<std::string> CursorDefaults(ReadPattern pattern) {
  if (pattern == ReadPattern::kBlocks) return {"fetch.wait.max.ms=10", "max.partition.fetch.bytes=262144"};
  return {};
}

}  // namespace

Result<std::unique_ptr<TopicWriter>> OpenKafkaTopicWriter(std::string_view uri, const WriterConfig& config,
                                                          std::vector<PartitionId> partitions) {
  kafka::KafkaUri parsed;
  TF_ASSIGN_OR_RETURN(kafka::ClientOptions client, KafkaClientOptionsFor(uri, config, &parsed));
  const std::string name = parsed.ToString();
  TF_ASSIGN_OR_RETURN(kafka::Compression compression, kafka::ParseCompression(config.compression));
  if (config.replication_factor < 1 || config.replication_factor > 32767) {
    return Status::InvalidArgument(name + ": replication factor must be 1..32767, got " +
                                   std::to_string(config.replication_factor));
  }
  TF_ASSIGN_OR_RETURN(auto admin, kafka::AdminClient::Open(client));
  kafka::TopicSpec spec;
  spec.name = parsed.topic;
  spec.partitions = static_cast<int32_t>(config.partitions == 0 ? 1 : config.partitions);
  spec.replication_factor = static_cast<int16_t>(config.replication_factor);
  Result<kafka::TopicInfo> ensured = Status::Internal("unset");
  if (config.create_if_missing) {
    // Create first and accept "already exists": asking whether a topic is
    // missing waits out the propagation grace (rdkafka_handle.h) first.
    Status created = admin->CreateTopic(spec);
    ensured = admin->DescribeTopic(parsed.topic);
    if (!ensured.ok() && !created.ok() && created.code() != StatusCode::kAlreadyExists) return created;
  } else {
    ensured = admin->EnsureTopic(spec, kafka::MissingTopic::kError);
    if (ensured.status().IsNotFound()) {
      return ensured.status().WithContext("the topic does not exist and creating it is not allowed");
    }
  }
  if (!ensured.ok()) return ensured.status();
  const kafka::TopicInfo& info = *ensured;
  const auto count = static_cast<uint32_t>(info.partitions.size());
  if (config.partitions != 0 && count != config.partitions) {
    return Status::InvalidArgument(name + " has " + std::to_string(count) + " partitions, not the " +
                                   std::to_string(config.partitions) + " asked for: pass --partitions " +
                                   std::to_string(count) + " or use a new topic");
  }
  std::set<uint32_t> owned;
  if (partitions.empty()) {
    for (uint32_t p = 0; p < count; ++p) owned.insert(p);
  }
  for (PartitionId p : partitions) {
    if (p.value() >= count) return Status::InvalidArgument(name + " has no partition " + ToString(p));
    owned.insert(p.value());
  }

  std::optional<int64_t> limit;
  if (auto configs = admin->DescribeTopicConfigs(parsed.topic); configs.ok()) {
    for (const auto& [k, v] : *configs) {
      if (k == "max.message.bytes") limit = ParseInt(v);
    }
  }
  kafka::ProducerOptions po;
  static_cast<kafka::ClientOptions&>(po) = client;
  po.topic = parsed.topic;
  po.compression = compression;
  TF_RETURN_IF_ERROR(ApplyWriterSettings(&po.config));
  // A batch the topic refuses fails every record in it; librdkafka does not
  // split it. Keep batches below a topic limit lower than the default size.
  if (limit && *limit < kDefaultBatchBytes + static_cast<int64_t>(kBatchOverheadBytes) &&
      po.config.Find("batch.size") == nullptr) {
    const int64_t batch = std::max<int64_t>(*limit - static_cast<int64_t>(kBatchOverheadBytes), 1);
    po.config.Set("batch.size", std::to_string(batch), "the topic's max.message.bytes");
  }
  TF_ASSIGN_OR_RETURN(auto producer, kafka::Producer::Open(po));
  TF_RETURN_IF_ERROR(WaitForSettledEnds(*admin, info, owned));
  return std::unique_ptr<TopicWriter>(std::make_unique<KafkaTopicWriter>(
      name, std::move(parsed), std::move(client), std::move(admin), std::move(producer), count, std::move(owned),
      limit));
}

Result<TopicSummary> DescribeKafkaTopic(std::string_view uri, const TopicConfig& config) {
  kafka::KafkaUri parsed;
  TF_ASSIGN_OR_RETURN(kafka::ClientOptions client, KafkaClientOptionsFor(uri, config, &parsed));
  TF_ASSIGN_OR_RETURN(auto admin, kafka::AdminClient::Open(client));
  TF_ASSIGN_OR_RETURN(kafka::TopicInfo info, admin->DescribeTopic(parsed.topic));
  TopicSummary s;
  s.uri = parsed.ToString();
  size_t replicas = 0;
  for (const kafka::PartitionInfo& p : info.partitions) {
    TF_ASSIGN_OR_RETURN(kafka::Watermarks w, admin->QueryWatermarks(parsed.topic, p.id));
    s.partitions.push_back({PartitionId(static_cast<uint32_t>(p.id)), Offset(static_cast<uint64_t>(w.low)),
                            Offset(static_cast<uint64_t>(w.high)), 0});
    replicas = std::max(replicas, p.replicas.size());
  }
  s.details = "Kafka topic on brokers " + client.bootstrap + ", replication factor " + std::to_string(replicas) +
              "; records counts offsets (transaction markers included), bytes unknown";
  return s;
}

Result<std::unique_ptr<PartitionCursor>> OpenKafkaPartitionCursor(std::string_view uri, PartitionId partition,
                                                                  const TopicConfig& config, bool wait_for_new_topic) {
  kafka::KafkaUri parsed;
  TF_ASSIGN_OR_RETURN(kafka::ClientOptions client,
                      KafkaClientOptionsFor(uri, config, &parsed, CursorDefaults(config.read_pattern)));
  kafka::PartitionConsumerOptions o;
  static_cast<kafka::ClientOptions&>(o) = client;
  o.topic = parsed.topic;
  o.wait_for_new_topic = wait_for_new_topic;
  TF_ASSIGN_OR_RETURN(auto consumer, kafka::PartitionConsumer::Open(o, {}));
  if (partition.value() >= static_cast<uint32_t>(consumer->partition_count())) {
    return Status::OutOfRange(parsed.ToString() + " has " + std::to_string(consumer->partition_count()) +
                              " partitions; there is no partition " + ToString(partition));
  }
  TF_ASSIGN_OR_RETURN(kafka::Watermarks w, consumer->QueryWatermarks(static_cast<int32_t>(partition.value())));
  return std::unique_ptr<PartitionCursor>(std::make_unique<KafkaPartitionCursor>(
      parsed.ToString(), std::move(consumer), partition, Offset(static_cast<uint64_t>(w.low))));
}

}  // namespace tokenfeed::topic
