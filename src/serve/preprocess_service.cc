// The service loop (preprocess_service.h):
//
//   poll RAW -> decode -> clean -> tokenize -> encode -> produce to TOKENS
//   ... until the transaction is full, old or the input idle ...
//   send the consumed offsets to the transaction -> commit
//
// Any failure inside a transaction, and any change of the group's
// assignment, aborts it and rewinds the consumer to the committed offsets,
// so the same messages are processed again in a new transaction, after a
// back-off that grows while aborts repeat. A message whose record the broker
// refuses for good (too large for the output topic) is remembered as
// poisoned: the next time round it is skipped as a counted reject, so one
// message can never make the service loop.
//
// A producer that fails fatally (librdkafka's "invalid transaction state"
// after a rebalance, for one) is replaced by a new one with the same
// transactional id, whose InitTransactions aborts what the old one left
// open; only a producer fenced by another instance with the same id stops
// the service, and so do kMaxReopens reopenings without a commit between
// them. A rewind the consumer refuses (a partition just assigned that is not
// fetching yet) is tried again at the next steps for up to kRewindRetryFor,
// processing nothing until it succeeds.
#include "serve/preprocess_service.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <thread>
#include <utility>

#include "document/document_encoder.h"
#include "kafka/admin_client.h"
#include "kafka/client_options.h"
#include "kafka/group_consumer.h"
#include "kafka/producer.h"
#include "metrics/metrics_http_server.h"
#include "serve/serve_metrics.h"
#include "tokenfeed/record.h"
#include "tokenfeed/tokenizer.h"

namespace tokenfeed::serve {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr size_t kPollRecords = 2000;
constexpr milliseconds kPollWait{100};
// Rejects logged one by one; after that only every kRejectLogEvery-th.
constexpr uint64_t kRejectsLoggedInFull = 20;
constexpr uint64_t kRejectLogEvery = 1000;
// What a record batch adds around one record (as topic/kafka_topic.cc).
constexpr size_t kBatchOverheadBytes = 128;
// Pause after an aborted transaction: doubles while aborts repeat, up to
// the maximum, and starts again after a commit.
constexpr milliseconds kFirstBackoff{100};
constexpr milliseconds kMaxBackoff{10000};
// Producers opened again after fatal errors with no commit between them.
constexpr int kMaxReopens = 5;
// How long a refused rewind is retried (at each step, a poll of up to
// kPollWait) before the service stops.
constexpr milliseconds kRewindRetryFor{30000};
// How long opening a replacement producer is retried before the service stops.
constexpr milliseconds kReopenRetryFor{60000};

std::optional<uint64_t> ParseBytes(std::string_view v) {
  uint64_t n = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || ptr != v.data() + v.size()) return std::nullopt;
  return n;
}

std::string RandomId() {
  std::random_device rd;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%08x%08x", rd(), rd());
  return buf;
}

std::string SortedBrokers(const kafka::KafkaUri& u) {
  std::vector<std::string> b = u.brokers;
  std::sort(b.begin(), b.end());
  std::string out;
  for (const auto& s : b) out += s + ",";
  return out;
}

class Service {
 public:
  Service(const ServeOptions& o, const std::atomic<bool>* stop) : o_(o), stop_(stop), decoder_(o.format, o.json_field) {}

  Status Run() {
    TF_RETURN_IF_ERROR(Setup());
    auto next_log = Clock::now() + o_.log_interval;
    auto next_tick = Clock::now();
    while (!(stop_ && stop_->load())) {
      TF_RETURN_IF_ERROR(Step());
      const auto now = Clock::now();
      if (now >= next_tick) {
        UpdateLag();
        metrics_->Tick(now);
        next_tick = now + std::chrono::seconds(1);
      }
      if (now >= next_log) {
        Log("serve: " + metrics_->Summary());
        next_log = now + o_.log_interval;
      }
    }
    // Stopping: what was consumed so far commits, or (if that fails) aborts.
    Status last;
    if (txn_open_) last = Commit();
    Status closed = consumer_->Close();
    UpdateLag();
    Log("serve: stopped: " + metrics_->Summary());
    if (metrics_server_) metrics_server_->Stop();
    TF_RETURN_IF_ERROR(last);
    return closed;
  }

 private:
  Status Setup() {
    kafka::KafkaUri from, to;
    const topic::WriterConfig& c = o_.output;
    TF_ASSIGN_OR_RETURN(kafka::ClientOptions client, kafka::ClientOptionsForUri(o_.from_uri, {}, c.kafka_config_file,
                                                                                c.kafka_properties, c.kafka_timeout,
                                                                                &from));
    TF_ASSIGN_OR_RETURN(kafka::ClientOptions to_client,
                        kafka::ClientOptionsForUri(o_.to_uri, {}, c.kafka_config_file, c.kafka_properties,
                                                   c.kafka_timeout, &to));
    source_ = from.ToString();
    TF_ASSIGN_OR_RETURN(std::shared_ptr<const Tokenizer> tokenizer, Tokenizer::FromFile(o_.tokenizer_path));
    TF_ASSIGN_OR_RETURN(document::DocumentEncoder encoder,
                        document::DocumentEncoder::Create(std::move(tokenizer), o_.document, o_.tokenizer_path));
    documents_.emplace(std::move(encoder));
    // Which of BOS/EOS the records carry (a loader told to add them too refuses).
    if (auto ends = documents_->ends_attribute()) attributes_.push_back(*ends);
    TF_ASSIGN_OR_RETURN(cleaner_, text::Cleaner::Create(o_.clean));
    if (const kafka::ConfigEntry* m = client.config.Find("message.max.bytes")) {
      if (auto n = ParseBytes(m->value)) max_record_bytes_ = *n;
    }

    TF_ASSIGN_OR_RETURN(admin_, kafka::AdminClient::Open(client));
    kafka::AdminClient* admin = admin_.get();
    auto input = admin->DescribeTopic(from.topic);
    if (!input.ok()) {
      return input.status().WithContext("--from " + source_ + ": the raw topic must exist");
    }
    kafka::TopicSpec spec;
    spec.name = to.topic;
    spec.partitions = o_.output.partitions != 0 ? static_cast<int32_t>(o_.output.partitions)
                                                : static_cast<int32_t>(input->partitions.size());
    spec.replication_factor = static_cast<int16_t>(o_.output.replication_factor);
    TF_ASSIGN_OR_RETURN(kafka::TopicInfo output,
                        admin->EnsureTopic(spec, o_.output.create_if_missing ? kafka::MissingTopic::kCreate
                                                                             : kafka::MissingTopic::kError));
    output_partitions_ = static_cast<int32_t>(output.partitions.size());

    kafka::ProducerOptions& po = producer_options_;
    static_cast<kafka::ClientOptions&>(po) = to_client;
    po.topic = to.topic;
    output_uri_ = to.ToString();
    (void)ReadTopicLimit();
    TF_ASSIGN_OR_RETURN(po.compression, kafka::ParseCompression(o_.output.compression));
    transactional_id_ = "tokenfeed-serve." + o_.group + "." + (o_.instance_id.empty() ? RandomId() : o_.instance_id);
    po.transactional_id = transactional_id_;
    TF_RETURN_IF_ERROR(OpenProducer());

    kafka::GroupConsumerOptions co;
    static_cast<kafka::ClientOptions&>(co) = client;
    co.group_id = o_.group;
    co.topics = {from.topic};
    TF_ASSIGN_OR_RETURN(consumer_, kafka::GroupConsumer::Open(co));

    metrics_ = std::make_unique<ServeMetrics>(from.topic);
    if (o_.metrics_port >= 0) {
      ServeMetrics* m = metrics_.get();
      TF_ASSIGN_OR_RETURN(metrics_server_, metrics::MetricsHttpServer::Start(o_.metrics_address,
                                                                             static_cast<uint16_t>(o_.metrics_port),
                                                                             [m] { return m->RenderPrometheus(); }));
      Log("serve: metrics on http://" + o_.metrics_address + ":" + std::to_string(metrics_server_->port()) +
          "/metrics");
    }
    Log("serve: consuming " + source_ + " (" + std::to_string(input->partitions.size()) + " partitions) in group '" +
        o_.group + "', producing " + to.ToString() + " (" + std::to_string(output_partitions_) +
        " partitions), transactional id '" + transactional_id_ + "'");
    return Status::OK();
  }

  // The output topic may accept less than the producer would send: then a
  // record (or a batch) above its max.message.bytes would be refused on
  // every try. Records above it are rejected before they are produced, and
  // batches are kept below it. True when the limit became lower (the
  // producer must then be opened again for its batch size).
  bool ReadTopicLimit() {
    auto topic_configs = admin_->DescribeTopicConfigs(producer_options_.topic);
    if (!topic_configs.ok()) {
      Log("serve: cannot read the configuration of " + output_uri_ + " (" + topic_configs.status().ToString() +
          "); records are checked against the limit known so far only");
      return false;
    }
    bool lowered = false;
    for (const auto& [key, value] : *topic_configs) {
      auto limit = ParseBytes(value);
      if (key != "max.message.bytes" || !limit || *limit >= max_record_bytes_) continue;
      max_record_bytes_ = *limit;
      limit_source_ = kTopicLimit;
      lowered = true;
      kafka::ClientConfig& config = producer_options_.config;
      const kafka::ConfigEntry* batch = config.Find("batch.size");
      if (batch == nullptr || batch->origin == kTopicLimit) {
        config.Set("batch.size", std::to_string(*limit), kTopicLimit);
      }
    }
    return lowered;
  }

  Status OpenProducer() {
    producer_.reset();  // closes the old one first: the new one's id is the same
    TF_ASSIGN_OR_RETURN(std::unique_ptr<kafka::Producer> opened, kafka::Producer::Open(producer_options_));
    // Fences an earlier producer with the same id and ends what it left
    // open (aborted, or committed if its commit had been asked for).
    TF_RETURN_IF_ERROR(opened->InitTransactions());
    producer_ = std::move(opened);
    return Status::OK();
  }

  Status Step() {
    // A transaction never takes more than --max-transaction-messages.
    const size_t room = o_.max_transaction_messages - std::min(o_.max_transaction_messages, pending_.messages);
    auto polled = consumer_->Poll(std::max<size_t>(1, std::min(kPollRecords, room)), kPollWait);
    if (consumer_->TakeAssignmentChange()) {
      // Part of the open transaction's input may now belong to another
      // member, and this batch may mix old and new assignments: drop both
      // and start again from the committed offsets.
      if (txn_open_) TF_RETURN_IF_ERROR(AbortAndRewind("the group's partition assignment changed", false));
      TF_RETURN_IF_ERROR(Rewind());
      LogAssignment();
      UpdateLag();  // the assigned partitions show at once, not at the next tick
      return Status::OK();
    }
    if (!polled.ok()) {
      const StatusCode c = polled.status().code();
      if (c != StatusCode::kUnavailable && c != StatusCode::kTimedOut) return polled.status();
      Log("serve: " + polled.status().ToString() + "; retrying");
      if (txn_open_) TF_RETURN_IF_ERROR(AbortAndRewind(polled.status().message()));
      std::this_thread::sleep_for(milliseconds(500));
      return Status::OK();
    }
    if (rewind_refused_) {
      // What was polled comes from a position not yet rewound: dropped.
      polled->Release();
      return Rewind();
    }
    const bool idle = polled->empty();
    if (!idle) {
      if (!txn_open_) {
        Status begun = producer_->BeginTransaction();
        if (!begun.ok()) {
          polled->Release();
          const kafka::Producer::Failure failure = producer_->failure();
          if (failure == kafka::Producer::Failure::kFenced) return begun.WithContext(FencedMessage());
          if (failure != kafka::Producer::Failure::kFatal) {
            return begun.WithContext("transactional id '" + transactional_id_ + "'");
          }
          TF_RETURN_IF_ERROR(ReopenProducer(begun));
          return Rewind();
        }
        txn_open_ = true;
        txn_began_ = Clock::now();
        txn_first_token_ = next_token_;
        txn_origins_.clear();
        txn_poison_skipped_.clear();
      }
      Status processed = Process(*polled);
      if (!processed.ok()) {
        polled->Release();
        return AbortAndRewind(processed.message());
      }
      if (o_.on_event_for_testing) o_.on_event_for_testing("batch", *producer_);
    }
    polled->Release();
    if (txn_open_ && (idle || pending_.messages >= o_.max_transaction_messages ||
                      Clock::now() - txn_began_ >= o_.commit_interval)) {
      return Commit();
    }
    return Status::OK();
  }

  // Everything of one batch goes into the open transaction: a record per
  // kept message, rejects counted.
  Status Process(const kafka::MessageBatch& batch) {
    arena_.clear();
    kept_.clear();
    for (size_t i = 0; i < batch.size(); ++i) {
      const kafka::ConsumedRecord& r = batch[i];
      ++pending_.messages;
      if (poisoned_.count({r.partition, r.offset}) != 0) {
        txn_poison_skipped_.push_back({r.partition, r.offset});
        Reject(text::DropReason::kTooLong, r, "the broker refused its token record earlier (see above); skipped");
        continue;
      }
      DecodedMessage d = decoder_.Decode(r.value);
      if (!d.ok) {
        Reject(d.reason, r, d.message);
        continue;
      }
      text::CleanResult c = cleaner_.Clean(d.text, &scratch_, &cleaning_);
      if (!c.kept) {
        Reject(c.reason, r, "dropped by cleaning");
        continue;
      }
      kept_.push_back({r.partition, r.offset, arena_.size(), c.text.size()});
      arena_.append(c.text);
    }
    bool batched = o_.threads != 1 && kept_.size() > 1;
    if (batched) {
      views_.clear();
      for (const Kept& k : kept_) views_.push_back(std::string_view(arena_).substr(k.text_begin, k.text_len));
      // A stop request ends a batch of slow texts early.
      Status encoded = documents_->EncodeBatch(views_, &batch_ids_, o_.threads, stop_);
      // A text the tokenizer refuses (a regex search past its limits) is
      // rejected alone below, where the texts are encoded one by one again;
      // anything else (out of memory) fails the transaction.
      if (!encoded.ok() && encoded.code() != StatusCode::kInvalidArgument) return encoded;
      batched = encoded.ok();
    }
    for (size_t i = 0; i < kept_.size(); ++i) {
      const Kept& k = kept_[i];
      ids_.clear();
      if (batched) {
        ids_.swap(batch_ids_[i]);
      } else {
        // One slow text after another (each up to its regex time budget)
        // must not keep a stop request waiting: the transaction is aborted
        // and its messages are processed again by the next run.
        if (stop_ && stop_->load()) return Status::Aborted("stopping");
        Status encoded = documents_->Encode(std::string_view(arena_).substr(k.text_begin, k.text_len), &ids_);
        if (!encoded.ok()) {
          if (encoded.code() != StatusCode::kInvalidArgument) return encoded;
          RejectAt(text::DropReason::kUntokenizable, k.partition, k.offset, encoded.message());
          continue;
        }
      }
      TF_RETURN_IF_ERROR(Produce(k));
    }
    deliveries_.clear();
    TF_RETURN_IF_ERROR(producer_->PollDeliveries(milliseconds(0), &deliveries_));
    return CheckDeliveries();
  }

  // A failed delivery fails the transaction. When the broker refused a
  // record as too large, the topic's limit is read again (it may have been
  // lowered: the producer is then opened again with batches below it, after
  // the abort); a message whose own record is above the limit, or that was
  // refused kMaxRefusals times, is poisoned: skipped when the transaction is
  // done again.
  Status CheckDeliveries() {
    Status first;
    bool limit_read = false;
    for (const kafka::Delivery& d : deliveries_) {
      if (d.status.ok()) continue;
      if (first.ok()) first = d.status;
      if (d.status.code() != StatusCode::kResourceExhausted) continue;
      if (!limit_read) {
        limit_read = true;
        if (ReadTopicLimit()) reopen_producer_ = true;
      }
      if (d.token < txn_first_token_ || d.token - txn_first_token_ >= txn_origins_.size()) continue;
      const Origin& origin = txn_origins_[d.token - txn_first_token_];
      const MessageKey key{origin.partition, origin.offset};
      const bool too_large = origin.record_bytes + kBatchOverheadBytes > max_record_bytes_;
      if ((too_large || ++refusals_[key] >= kMaxRefusals) && poisoned_.insert(key).second) {
        refusals_.erase(key);
        Log("serve: " + source_ + " partition " + std::to_string(key.first) + " offset " +
            std::to_string(key.second) + " is skipped from now on: " + d.status.ToString());
      }
    }
    return first;
  }

  struct Kept {
    int32_t partition;
    int64_t offset;
    size_t text_begin, text_len;
  };

  Status Produce(const Kept& k) {
    record::RecordFields f;
    f.MessageSource(source_, static_cast<uint32_t>(k.partition), static_cast<uint64_t>(k.offset));
    f.attributes = attributes_;
    Status prepared = encoder_.Prepare(f, ids_);
    if (prepared.ok() && encoder_.size() + kBatchOverheadBytes > max_record_bytes_) {
      prepared = Status::ResourceExhausted(
          "the token record would be " + std::to_string(encoder_.size()) + " bytes, above " + limit_source_ +
          " = " + std::to_string(max_record_bytes_) +
          (limit_source_ == kProducerLimit ? " (raise it with -X)" : " (raise it on the topic)"));
    }
    if (!prepared.ok()) {
      RejectAt(text::DropReason::kTooLong, k.partition, k.offset, prepared.message());
      return Status::OK();
    }
    record_.resize(encoder_.size());
    encoder_.WriteTo(reinterpret_cast<uint8_t*>(record_.data()));
    TF_RETURN_IF_ERROR(producer_->Produce(k.partition % output_partitions_, std::span<const std::byte>(),
                                          std::as_bytes(std::span<const char>(record_)), next_token_++));
    txn_origins_.push_back({k.partition, k.offset, record_.size()});
    ++pending_.records;
    pending_.tokens += ids_.size();
    return Status::OK();
  }

  void Reject(text::DropReason reason, const kafka::ConsumedRecord& r, const std::string& why) {
    RejectAt(reason, r.partition, r.offset, why);
  }

  void RejectAt(text::DropReason reason, int32_t partition, int64_t offset, const std::string& why) {
    ++pending_.rejected[static_cast<size_t>(reason)];
    ++rejects_seen_;
    if (rejects_seen_ <= kRejectsLoggedInFull || rejects_seen_ % kRejectLogEvery == 0) {
      Log("serve: rejected " + source_ + " partition " + std::to_string(partition) + " offset " +
          std::to_string(offset) + ": " + std::string(text::DropReasonName(reason)) + (why.empty() ? "" : ": ") + why +
          " (" + std::to_string(rejects_seen_) + " rejected by this instance" +
          (rejects_seen_ == kRejectsLoggedInFull ? "; from now on every " + std::to_string(kRejectLogEvery) +
                                                       "th is logged)"
                                                 : ")"));
    }
  }

  Status Commit() {
    // Every delivery first: a refused record is known by its message.
    deliveries_.clear();
    Status s = producer_->Flush(o_.output.kafka_timeout, &deliveries_);
    Status delivered = CheckDeliveries();
    if (s.ok()) s = delivered;
    if (!s.ok()) return AbortAndRewind("a record was not delivered: " + s.ToString());
    auto positions = consumer_->Positions();
    auto group = consumer_->GroupMetadata();
    if (!positions.ok()) s = positions.status();
    if (s.ok() && !group.ok()) s = group.status();
    if (s.ok()) s = producer_->SendOffsetsToTransaction(*positions, *group);
    if (s.ok()) s = producer_->CommitTransaction();
    if (s.ok()) {
      txn_open_ = false;
      metrics_->AddCommitted(pending_);
      pending_ = {};
      for (const auto& key : txn_poison_skipped_) poisoned_.erase(key);  // consumed for good
      txn_poison_skipped_.clear();
      refusals_.clear();
      backoff_ = milliseconds(0);
      reopens_ = 0;
      if (o_.on_event_for_testing) o_.on_event_for_testing("commit", *producer_);
      return Status::OK();
    }
    return AbortAndRewind("commit failed: " + s.ToString());
  }

  Status AbortAndRewind(const std::string& why, bool back_off = true) {
    Log("serve: aborting the transaction (" + std::to_string(pending_.messages) +
        " messages will be processed again): " + why);
    Status aborted = producer_->AbortTransaction();
    txn_open_ = false;
    metrics_->AddAborted(pending_.messages);
    pending_ = {};
    txn_poison_skipped_.clear();
    const kafka::Producer::Failure failure = producer_->failure();
    if (failure == kafka::Producer::Failure::kFenced) {
      return Status::Aborted(FencedMessage() + (aborted.ok() ? std::string() : " (" + aborted.ToString() + ")"));
    }
    if (!aborted.ok() || failure == kafka::Producer::Failure::kFatal) {
      // A failed producer refuses everything from now on, even when its
      // abort was answered; whatever state its transaction is in, a new
      // producer with the same id aborts it.
      TF_RETURN_IF_ERROR(ReopenProducer(aborted.ok() ? Status::Aborted(why) : aborted));
    }
    TF_RETURN_IF_ERROR(Rewind());
    if (reopen_producer_) {
      reopen_producer_ = false;
      Log("serve: " + output_uri_ + " accepts at most " + std::to_string(max_record_bytes_) +
          " bytes (max.message.bytes); opening the producer again with batches below that");
      TF_RETURN_IF_ERROR(OpenProducer());
    }
    if (back_off) BackOff();
    return Status::OK();
  }

  std::string FencedMessage() const {
    return "the transactional producer '" + transactional_id_ +
           "' was fenced: another producer with this id took over (another instance with the same --instance-id), "
           "or the broker ended its transaction for running past transaction.timeout.ms; stopping";
  }

  // Replaces a producer that failed (`why`) with a new one of the same
  // transactional id, at most kMaxReopens times between commits.
  Status ReopenProducer(const Status& why) {
    if (++reopens_ > kMaxReopens) {
      return why.WithContext("the transactional producer '" + transactional_id_ + "' failed " +
                             std::to_string(kMaxReopens + 1) + " times without a commit between; stopping");
    }
    Log("serve: the transactional producer failed or could not abort (" + why.ToString() +
        "); opening it again (" + std::to_string(reopens_) + " of at most " + std::to_string(kMaxReopens) +
        " before a commit), which ends its open transaction");
    txn_open_ = false;
    reopen_producer_ = false;  // this opening serves that purpose too
    metrics_->AddProducerReopened();
    // A coordinator that moves (a broker restarting) can refuse the new
    // producer's InitTransactions for a while: tried again for kReopenRetryFor.
    const auto until = Clock::now() + kReopenRetryFor;
    while (true) {
      Status opened = OpenProducer();
      if (opened.ok()) return Status::OK();
      if (Clock::now() >= until || (stop_ && stop_->load())) {
        return opened.WithContext("opening the transactional producer '" + transactional_id_ + "' again (tried for " +
                                  std::to_string(kReopenRetryFor.count() / 1000) + " s)");
      }
      Log("serve: opening the transactional producer again failed (" + opened.ToString() + "); retrying");
      BackOff();
    }
  }

  // Rewinds the consumer to the committed offsets. A refusal is retried at
  // the next steps (Step processes nothing meanwhile) for kRewindRetryFor.
  Status Rewind() {
    Status rewound = consumer_->RewindToCommitted();
    if (rewound.ok()) {
      rewind_refused_.reset();
      return Status::OK();
    }
    if (!rewind_refused_) {
      rewind_refused_ = Clock::now();
      Log("serve: " + rewound.ToString() + "; trying again at the next polls");
    } else if (Clock::now() - *rewind_refused_ >= kRewindRetryFor) {
      return rewound.WithContext("rewinding to the committed offsets was refused for " +
                                 std::to_string(kRewindRetryFor.count() / 1000) + " s");
    }
    return Status::OK();
  }

  // Waits before the work is done again (never a tight loop of aborts);
  // a stop request cuts the wait short.
  void BackOff() {
    backoff_ = backoff_.count() == 0 ? kFirstBackoff : std::min(kMaxBackoff, backoff_ * 2);
    const auto until = Clock::now() + backoff_;
    while (Clock::now() < until && !(stop_ && stop_->load())) std::this_thread::sleep_for(milliseconds(20));
  }

  void UpdateLag() {
    std::vector<PartitionLagSample> lag;
    for (const auto& l : consumer_->Lag()) {
      lag.push_back({l.partition, l.position >= 0 && l.high_watermark >= 0 ? l.high_watermark - l.position : -1});
    }
    metrics_->SetLag(std::move(lag));
  }

  void LogAssignment() {
    auto a = consumer_->Assignment();
    std::string parts;
    if (a.ok()) {
      for (const auto& p : *a) parts += (parts.empty() ? "" : ",") + std::to_string(p.partition);
    }
    Log("serve: assigned partitions [" + parts + "] of " + source_);
  }

  void Log(const std::string& line) const {
    if (o_.log) {
      o_.log(line);
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  }

  const ServeOptions& o_;
  const std::atomic<bool>* stop_;
  std::string source_;
  std::string transactional_id_;
  std::optional<document::DocumentEncoder> documents_;
  std::vector<record::Attribute> attributes_;  // of every record
  text::Cleaner cleaner_ = text::Cleaner::Create({}).value();
  RawMessageDecoder decoder_;
  static constexpr const char* kProducerLimit = "the producer's message.max.bytes";
  static constexpr const char* kTopicLimit = "the output topic's max.message.bytes";
  static constexpr int kMaxRefusals = 3;
  size_t max_record_bytes_ = 1000000;
  std::string limit_source_ = kProducerLimit;
  int32_t output_partitions_ = 1;
  std::unique_ptr<kafka::AdminClient> admin_;
  kafka::ProducerOptions producer_options_;
  std::string output_uri_;
  std::unique_ptr<kafka::Producer> producer_;
  std::unique_ptr<kafka::GroupConsumer> consumer_;
  std::unique_ptr<ServeMetrics> metrics_;
  std::unique_ptr<metrics::MetricsHttpServer> metrics_server_;

  bool txn_open_ = false;
  Clock::time_point txn_began_;
  TransactionCounts pending_;
  uint64_t next_token_ = 0;
  uint64_t rejects_seen_ = 0;
  milliseconds backoff_{0};
  // The open transaction's records: token - txn_first_token_ -> the message.
  uint64_t txn_first_token_ = 0;
  struct Origin {
    int32_t partition;
    int64_t offset;
    size_t record_bytes;
  };
  std::vector<Origin> txn_origins_;
  // Messages (partition, offset) whose record the broker refused for good,
  // those of them the open transaction skipped, and refusals so far.
  using MessageKey = std::pair<int32_t, int64_t>;
  std::set<MessageKey> poisoned_;
  std::vector<MessageKey> txn_poison_skipped_;
  std::map<MessageKey, int> refusals_;
  bool reopen_producer_ = false;
  int reopens_ = 0;          // producers opened after failures since the last commit
  std::optional<Clock::time_point> rewind_refused_;  // set: a rewind is owed, refused since then
  std::vector<kafka::Delivery> deliveries_;

  // Per-batch buffers, reused.
  std::string arena_, scratch_, record_;
  std::vector<Kept> kept_;
  std::vector<std::string_view> views_;
  std::vector<std::vector<TokenId>> batch_ids_;
  std::vector<TokenId> ids_;
  record::RecordEncoder encoder_;
  text::CleaningStats cleaning_;
};

}  // namespace

Status CheckServeArguments(const ServeOptions& options) {
  if (options.from_uri.empty() || options.to_uri.empty()) {
    return Status::InvalidArgument("serve needs --from kafka://HOST:PORT/RAW and --to kafka://HOST:PORT/TOKENS");
  }
  auto parse = [](const char* option, const std::string& uri) -> Result<kafka::KafkaUri> {
    auto parsed = kafka::ParseKafkaUri(uri);
    if (!parsed.ok()) return parsed.status().WithContext(option);
    return parsed;
  };
  TF_ASSIGN_OR_RETURN(kafka::KafkaUri from, parse("--from", options.from_uri));
  TF_ASSIGN_OR_RETURN(kafka::KafkaUri to, parse("--to", options.to_uri));
  if (SortedBrokers(from) != SortedBrokers(to)) {
    return Status::InvalidArgument("--from " + from.ToString() + " and --to " + to.ToString() +
                                   " name different brokers: one Kafka transaction must cover the output "
                                   "records and the input offsets, so both topics must be on one cluster "
                                   "(give the same HOST:PORT list)");
  }
  if (from.topic == to.topic) {
    return Status::InvalidArgument("--from and --to are the same topic '" + from.topic +
                                   "': give --to a topic of its own for the token records");
  }
  if (options.max_transaction_messages == 0) return Status::InvalidArgument("--max-transaction-messages must be positive");
  if (options.metrics_port > 65535) {
    return Status::InvalidArgument("--metrics-port " + std::to_string(options.metrics_port) +
                                   " is not a port: give 0..65535 (0: any free port), or leave it out");
  }
  return Status::OK();
}

Status RunService(const ServeOptions& options, const std::atomic<bool>* stop) {
  TF_RETURN_IF_ERROR(CheckServeArguments(options));
  return Service(options, stop).Run();
}

}  // namespace tokenfeed::serve
