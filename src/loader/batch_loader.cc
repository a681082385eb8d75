// The Loader (include/tokenfeed/loader.h): the global sample stream, this
// rank's share of it, and the state. It wires the pieces together: a
// SourceStream per source, the SourceMixer, the RowPacker, the Prefetcher
// (whose producer is ProduceStep below) and the settings of
// loader_fingerprint.h.
//
// Producing global step k: for each of its B*W samples, the mixer picks a
// source; the sample takes the next seq_len tokens of that source's stream.
// Rows of this rank are copied into the batch; the others are only counted
// past (RowPacker::SkipRow), which walks document lengths without touching
// tokens.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <new>
#include <utility>

#include "loader/loader_exposition.h"
#include "loader/loader_fingerprint.h"
#include "loader/loader_state.h"
#include "loader/prefetcher.h"
#include "loader/row_packer.h"
#include "loader/sharded_end.h"
#include "loader/source_mixer.h"
#include "loader/source_stream.h"
#include "loader/step_replayer.h"
#include "metrics/metrics_http_server.h"
#include "tokenfeed/loader.h"
#include "tokenfeed/record.h"
#include "tokenfeed/token_index.h"
#include "tokenfeed/topic.h"

namespace tokenfeed {
namespace {

using loader::LoaderState;
using loader::PartitionRange;
using loader::PrefetchItem;
using loader::Snapshot;
using loader::SourcePosition;
using loader::SourceMixer;
using loader::SourceStream;
using loader::SourceTallies;
using Clock = std::chrono::steady_clock;

// A snapshot read from elsewhere (a state, rank 0) must list this loader's
// sources in its order.
Status CheckSnapshotFits(const Snapshot& snap, const std::vector<LoaderSource>& sources) {
  if (snap.sources.size() != sources.size()) {
    return Status::InvalidArgument("the snapshot does not list the loader's " + std::to_string(sources.size()) +
                                   " sources");
  }
  for (size_t s = 0; s < sources.size(); ++s) {
    if (snap.sources[s].uri != sources[s].uri) {
      return Status::InvalidArgument("the snapshot is of source '" + snap.sources[s].uri + "', not '" +
                                     sources[s].uri + "'");
    }
  }
  return Status::OK();
}

Result<Snapshot> ReadSnapshot(const std::vector<LoaderSource>& sources, const topic::TopicConfig& config) {
  Snapshot snap;
  for (const LoaderSource& src : sources) {
    TF_ASSIGN_OR_RETURN(topic::TopicSummary s, topic::DescribeTopic(src.uri, config));
    loader::SnapshotSource source{src.uri, {}};
    for (const auto& p : s.partitions) source.partitions.push_back({p.start_offset.value(), p.end_offset.value()});
    snap.sources.push_back(std::move(source));
  }
  return snap;
}

// A source with weight but without records would end the stream at once
// (or, repeating forever, never give a batch).
Status CheckSourcesHoldRecords(const std::vector<LoaderSource>& sources, const Snapshot& snap) {
  for (size_t s = 0; s < sources.size(); ++s) {
    if (sources[s].weight <= 0) continue;
    uint64_t records = 0;
    for (const PartitionRange& r : snap.sources[s].partitions) records += r.end - r.start;
    if (records == 0) {
      return Status::InvalidArgument("source " + sources[s].uri + " is empty (" +
                                     std::to_string(snap.sources[s].partitions.size()) +
                                     " partitions, no records): ingest data into it, or remove it from the "
                                     "sources or give it weight 0");
    }
  }
  return Status::OK();
}

// A source whose records already carry BOS or EOS (the document stage of
// its ingest or serve added them: the record's "ends" attribute) must not get
// them again here, or every document would begin or end with two. Looks at
// the first record of the source's first non-empty partition: a topic is
// written by one document stage.
Status CheckDocumentEnds(const LoaderOptions& o, const Snapshot& snap, const topic::TopicConfig& config) {
  if (!o.bos_id && !o.eos_id) return Status::OK();
  for (size_t s = 0; s < o.sources.size(); ++s) {
    if (o.sources[s].weight <= 0) continue;
    const std::vector<PartitionRange>& parts = snap.sources[s].partitions;
    for (uint32_t p = 0; p < parts.size(); ++p) {
      if (parts[p].end <= parts[p].start) continue;
      TF_ASSIGN_OR_RETURN(auto cursor, topic::OpenPartitionCursor(o.sources[s].uri, PartitionId(p), config));
      TF_RETURN_IF_ERROR(cursor->Seek(Offset(parts[p].start)));
      TF_ASSIGN_OR_RETURN(auto records,
                          cursor->Read(std::chrono::milliseconds(o.kafka_timeout_ms), 1, Offset(parts[p].end)));
      if (records.empty()) {
        if (cursor->position() >= Offset(parts[p].end)) continue;  // offsets with no record (Kafka markers)
        break;
      }
      auto view = record::RecordView::Parse(records[0].bytes);
      if (!view.ok()) break;  // the stream reports a bad record where it reads it
      const std::string_view ends = view->FindAttribute(record::kEndsAttribute).value_or("");
      const bool has_bos = ends.find("bos") != std::string_view::npos;
      const bool has_eos = ends.find("eos") != std::string_view::npos;
      if ((o.bos_id && has_bos) || (o.eos_id && has_eos)) {
        const char* which = (o.bos_id && has_bos) ? "document-start (bos_id)" : "document-end (eos_id)";
        return Status::InvalidArgument(
            "source " + o.sources[s].uri + ": its records already carry the " + which +
            " token (their ingest or serve added it: --add-bos / --add-eos); adding it here too would put two "
            "around every document: leave the loader's setting unset, or ingest without it");
      }
      break;
    }
  }
  return Status::OK();
}

// One shard of the stream: a stream of each source and the mixer that draws
// among them. Unsharded, the loader has one, the whole stream.
struct Shard {
  uint32_t index = 0;
  SourceMixer mixer;
  std::vector<std::unique_ptr<SourceStream>> streams;  // by source
};

// Also the StepReplayer (step_replayer.h): the same pipeline, run without
// the prefetch thread, for replay.
class LoaderImpl final : public Loader, public loader::StepReplayer {
 public:
  explicit LoaderImpl(LoaderOptions o, bool synchronous = false)
      : o_(std::move(o)),
        synchronous_(synchronous),
        packer_({o_.seq_len, o_.pack, o_.pad_id, o_.ignore_index, o_.cross_document_labels, o_.int32_ids}),
        prefetcher_(o_.prefetch_batches, o_.memory_budget_bytes) {}
  ~LoaderImpl() override {
    // The endpoint first: its thread reads this loader.
    if (metrics_server_) metrics_server_->Stop();
    StopThread();
  }

  Status Init() {
    // The loader reads blocks and jumps between them; each transport tunes
    // its cursors for that (topic.h, ReadPattern).
    topic_config_.read_pattern = topic::ReadPattern::kBlocks;
    topic_config_.kafka_properties = o_.kafka_properties;
    topic_config_.kafka_timeout = std::chrono::milliseconds(o_.kafka_timeout_ms);
    if (o_.snapshot_json.empty()) {
      TF_ASSIGN_OR_RETURN(snapshot_, ReadSnapshot(o_.sources, topic_config_));
    } else {
      TF_ASSIGN_OR_RETURN(snapshot_, loader::ParseSnapshot(o_.snapshot_json));
      TF_RETURN_IF_ERROR(CheckSnapshotFits(snapshot_, o_.sources));
    }
    // A followed topic may be empty yet: its records are waited for.
    if (!o_.follow) TF_RETURN_IF_ERROR(CheckSourcesHoldRecords(o_.sources, snapshot_));
    TF_RETURN_IF_ERROR(CheckDocumentEnds(o_, snapshot_, topic_config_));
    // A finite sharded run's blocks' lengths: where it ends, and how each
    // pass is dealt to the shards.
    std::vector<std::shared_ptr<loader::PassDealer>> dealers;
    if (finite_sharded()) {
      TF_ASSIGN_OR_RETURN(block_lengths_, ReadBlockLengths(snapshot_));
      dealers = MakeDealers(block_lengths_);
    }
    // Unsharded: one shard, the whole stream. Sharded: this rank's shards.
    for (uint32_t shard = 0; shard < o_.shards; ++shard) {
      if (o_.shards > 1 && shard % o_.world_size != o_.rank) continue;
      TF_ASSIGN_OR_RETURN(Shard opened, OpenShard(shard, snapshot_, dealers));
      shards_.push_back(std::move(opened));
    }
    ConfigureStreams();
    TF_RETURN_IF_ERROR(SetRoundEnd());
    fingerprint_ = loader::Fingerprint(Settings());
    state_ = StateJson(0);
    consumed_ = ConsumedNow();
    if (o_.metrics_port) {
      std::vector<std::string> uris;
      for (const LoaderSource& s : o_.sources) uris.push_back(s.uri);
      auto render = [this, uris] { return loader::LoaderExposition(Metrics(), o_.rank, uris); };
      TF_ASSIGN_OR_RETURN(metrics_server_, metrics::MetricsHttpServer::Start(
                                               o_.metrics_address, static_cast<uint16_t>(*o_.metrics_port), render));
    }
    return StartThread();
  }

  Result<std::optional<Batch>> Next() override {
    // After the end or an error, every later call answers the same.
    if (terminal_) {
      if (!terminal_->ok()) return *terminal_;
      return std::optional<Batch>();
    }
    const auto t0 = Clock::now();
    Result<PrefetchItem> taken = prefetcher_.Take();
    if (!taken.ok()) {
      terminal_ = taken.status();
      return *terminal_;
    }
    PrefetchItem item = std::move(taken).value();
    const double waited = std::chrono::duration<double>(Clock::now() - t0).count();
    std::lock_guard lock(metrics_mu_);
    metrics_.last_wait_seconds = waited;
    metrics_.wait_seconds_total += waited;
    if (!item.status.ok()) {
      terminal_ = item.status;
      return item.status;
    }
    if (!item.batch) {
      terminal_ = Status::OK();
      metrics_.ended_source = item.ended_source;
      return std::optional<Batch>();
    }
    state_ = std::move(item.state);
    consumed_ = std::move(item.consumed);
    if (metrics_.batches == 0) first_batch_time_ = Clock::now();
    ++metrics_.batches;
    ++metrics_.wait_count;
    for (size_t i = 0; i < LoaderMetrics::kWaitBucketBounds.size(); ++i) {
      if (waited <= LoaderMetrics::kWaitBucketBounds[i]) ++metrics_.wait_buckets[i];
    }
    metrics_.tokens += item.batch->tokens;
    return std::move(item.batch);
  }

  uint16_t MetricsPort() const override { return metrics_server_ ? metrics_server_->port() : 0; }

  std::string State() const override {
    std::lock_guard lock(metrics_mu_);
    return state_;
  }
  std::string Snapshot() const override { return loader::SnapshotJson(snapshot_); }

  Status LoadState(const std::string& json) override {
    // Everything is read and checked before the running stream is touched.
    TF_ASSIGN_OR_RETURN(LoaderState state, loader::ParseLoaderState(json));
    TF_RETURN_IF_ERROR(CheckSnapshotFits(state.snapshot, o_.sources));
    TF_RETURN_IF_ERROR(loader::CheckSameSettings(state, Settings()));
    // The state's part for each of this rank's shards.
    std::vector<const std::vector<uint64_t>*> mixers;
    std::vector<const std::vector<SourcePosition>*> positions;
    std::vector<const SourceTallies*> tallies;
    if (o_.shards == 1) {
      mixers.push_back(&state.mixer);
      positions.push_back(&state.positions);
      tallies.push_back(&state.consumed);
    } else {
      for (const Shard& mine : shards_) {
        auto it = std::find_if(state.shards.begin(), state.shards.end(),
                               [&](const loader::ShardState& part) { return part.shard == mine.index; });
        if (it == state.shards.end()) {
          return Status::InvalidArgument(
              "the loader state holds no position for shard " + std::to_string(mine.index) + ", which rank " +
              std::to_string(o_.rank) + " of world_size " + std::to_string(o_.world_size) +
              " reads: with another world size, load the state merged from every rank's "
              "(tokenfeed.merge_states / MergeLoaderStates)");
        }
        mixers.push_back(&it->mixer);
        positions.push_back(&it->positions);
        tallies.push_back(&it->consumed);
      }
    }
    for (size_t i = 0; i < mixers.size(); ++i) {
      if (mixers[i]->size() != o_.sources.size() || positions[i]->size() != o_.sources.size() ||
          (!tallies[i]->empty() && tallies[i]->size() != o_.sources.size())) {
        return Status::InvalidArgument("the loader state has another number of sources");
      }
      // A shard has drawn the global samples below state.samples that fall
      // to it: those j with j % shards == its number.
      uint64_t drawn = 0;
      for (uint64_t c : *mixers[i]) drawn += c;
      const uint64_t shard = shards_[i].index;
      const uint64_t expected = o_.shards == 1 ? state.samples
                                               : (state.samples + o_.shards - 1 - shard) / o_.shards;
      if (drawn != expected) {
        return Status::InvalidArgument("the loader state is inconsistent: shard " + std::to_string(shard) +
                                       " drew " + std::to_string(drawn) + " samples, but global sample " +
                                       std::to_string(state.samples) + " means " + std::to_string(expected));
      }
    }
    const uint64_t per_step = uint64_t{o_.batch_size} * o_.world_size;
    if (state.samples % per_step != 0) {
      return Status::InvalidArgument("the loader state is at global sample " + std::to_string(state.samples) +
                                     ", which is not a step boundary for batch_size " +
                                     std::to_string(o_.batch_size) + " x world_size " +
                                     std::to_string(o_.world_size) + " (global batch " + std::to_string(per_step) +
                                     "): choose sizes whose product divides it");
    }
    if (!o_.follow) TF_RETURN_IF_ERROR(CheckSourcesHoldRecords(o_.sources, state.snapshot));
    // A finite sharded run's end on another snapshot: its blocks' lengths.
    std::optional<std::vector<loader::SourceBlockLengths>> new_lengths;
    std::optional<loader::ShardedEnd> loaded_end;
    if (finite_sharded()) {
      if (state.snapshot != snapshot_) {
        TF_ASSIGN_OR_RETURN(new_lengths, ReadBlockLengths(state.snapshot));
      }
      // Where its round ends, found before anything changes.
      TF_ASSIGN_OR_RETURN(loaded_end, loader::ComputeShardedEnd(EndInput(new_lengths ? *new_lengths : block_lengths_,
                                                                         state.epoch_base)));
    }
    StopThread();
    // Copies: the state's parts are about to be moved from.
    std::vector<std::vector<uint64_t>> saved_mixers;
    std::vector<std::vector<SourcePosition>> saved_positions;
    std::vector<SourceTallies> saved_tallies;
    for (size_t i = 0; i < mixers.size(); ++i) {
      saved_mixers.push_back(*mixers[i]);
      saved_positions.push_back(*positions[i]);
      saved_tallies.push_back(*tallies[i]);
    }
    // A different snapshot (the state's) means other blocks: rebuild the streams.
    if (state.snapshot != snapshot_) {
      std::vector<Shard> rebuilt;
      std::vector<std::shared_ptr<loader::PassDealer>> dealers;
      if (new_lengths) dealers = MakeDealers(*new_lengths);
      for (const Shard& mine : shards_) {
        auto opened = OpenShard(mine.index, state.snapshot, dealers);
        if (!opened.ok()) {
          const Status failed = opened.status();
          TF_RETURN_IF_ERROR(StartThread());  // the loader goes on where it was
          return failed;
        }
        rebuilt.push_back(std::move(opened).value());
      }
      std::lock_guard lock(shards_mu_);  // Metrics() reads the streams from the endpoint's thread
      snapshot_ = std::move(state.snapshot);
      shards_ = std::move(rebuilt);
    }
    if (new_lengths) block_lengths_ = std::move(*new_lengths);
    epoch_base_ = state.epoch_base;
    ConfigureStreams();
    (void)SetRoundEnd(loaded_end);  // cannot fail: the end is known
    // A state without the counts of one of this rank's shards (written
    // before them) counts every shard from its position.
    bool counted = true;
    for (const SourceTallies& t : saved_tallies) counted = counted && !t.empty();
    for (size_t i = 0; i < shards_.size(); ++i) {
      shards_[i].mixer.Resume(saved_mixers[i]);
      for (size_t s = 0; s < shards_[i].streams.size(); ++s) {
        shards_[i].streams[s]->Seek(saved_positions[i][s]);
        shards_[i].streams[s]->SetConsumed(counted ? saved_tallies[i][s] : std::vector<loader::EpochTally>());
      }
    }
    next_step_ = state.samples / per_step;
    std::lock_guard lock(metrics_mu_);  // Metrics() reads consumed_from_ from the endpoint's thread
    consumed_from_ = counted ? state.consumed_from : state.samples;
    // A state without the counts: the state said from here, counting from here.
    state_ = counted ? std::string(json) : StateJson(next_step_);
    consumed_ = ConsumedNow();
    terminal_.reset();
    metrics_.ended_source.reset();
    return StartThread();
  }

  Status StartNextRound() override {
    if (o_.epochs == 0) return Status::InvalidArgument("epochs=0: the stream never ends, there is no next round");
    if (!terminal_ || !terminal_->ok()) {
      return Status::InvalidArgument(terminal_ ? "the loader stopped on an error: " + terminal_->ToString()
                                               : "the stream has not ended: take its batches to the end first");
    }
    StopThread();
    const Status began = BeginNextRound();
    if (!began.ok()) {
      terminal_ = began;
      return began;
    }
    std::lock_guard lock(metrics_mu_);
    state_ = StateJson(next_step_);
    terminal_.reset();
    metrics_.ended_source.reset();
    return StartThread();
  }

  // ---- StepReplayer
  Status Load(const std::string& state_json) override { return LoadState(state_json); }
  SourceStream* Stream(uint32_t shard, uint32_t source) override {
    for (Shard& mine : shards_) {
      if (mine.index == shard && source < mine.streams.size()) return mine.streams[source].get();
    }
    return nullptr;
  }
  uint64_t next_step() const override { return next_step_; }
  uint64_t records_read() override {
    uint64_t n = 0;
    for (Shard& shard : shards_) {
      for (auto& stream : shard.streams) {
        stream->WaitForReadAhead();
        n += stream->records_read();
      }
    }
    return n;
  }
  Result<Batch> Step(bool copy, std::vector<loader::RowPiece>* pieces) override {
    skip_mine_ = !copy;
    recording_ = copy ? pieces : nullptr;
    // A step counted past needs the documents' lengths alone: where the
    // source keeps a token index they come from it, not from the records.
    for (Shard& shard : shards_) {
      for (auto& stream : shard.streams) stream->SetLengthsOnly(!copy);
    }
    std::optional<uint32_t> ended;
    Result<std::optional<Batch>> step = ProduceStep(&ended);
    if (step.ok() && !*step) {  // the round ended here: the next one begins, as StartNextRound does
      if (pieces != nullptr) pieces->clear();  // noted for rows of the step that could not be filled
      const Status began = BeginNextRound();
      if (!began.ok()) return began;
      step = ProduceStep(&ended);
      if (step.ok() && !*step) {
        step = Status::InvalidArgument("the sources hold less than one global step of " +
                                       std::to_string(uint64_t{o_.batch_size} * o_.world_size) + " samples");
      }
    }
    skip_mine_ = false;
    recording_ = nullptr;
    if (!step.ok()) return step.status();
    return std::move(**step);
  }

  LoaderMetrics Metrics() const override {
    LoaderMetrics m;
    {
      std::lock_guard lock(metrics_mu_);
      m = metrics_;
      m.consumed = consumed_;
      m.consumed_from_sample = consumed_from_;
      if (metrics_.batches > 1) {
        double secs = std::chrono::duration<double>(Clock::now() - first_batch_time_).count();
        m.tokens_per_second = secs > 0 ? static_cast<double>(metrics_.tokens) / secs : 0;
      }
    }
    const loader::Prefetcher::Buffered ready = prefetcher_.buffered();
    m.ready_batches = ready.items;
    m.buffered_bytes = ready.bytes + stream_bytes_.load();
    m.ready_capacity = o_.prefetch_batches;
    std::lock_guard lock(lag_mu_);
    m.partition_lag = lag_;
    m.records_read = read_.first;
    m.bytes_read = read_.second;
    if (!freshness_.empty()) {
      std::vector<double> f = freshness_;
      auto at = [&f](double q) {
        const size_t k = std::min(f.size() - 1, static_cast<size_t>(q * static_cast<double>(f.size())));
        std::nth_element(f.begin(), f.begin() + static_cast<long>(k), f.end());
        return f[k];
      };
      m.freshness_p50_seconds = at(0.5);
      m.freshness_p99_seconds = at(0.99);
    }
    // Read from the streams directly: while a reader waits, no step ends to
    // update the figures above. The shards are not replaced while the
    // prefetch thread runs (LoadState stops it first, and replaces them
    // under shards_mu_, which the endpoint's thread takes here).
    std::lock_guard shards_lock(shards_mu_);
    for (const Shard& shard : shards_) {
      for (const auto& s : shard.streams) {
        m.append_wait_seconds_total += s->append_wait_seconds();
        m.waiting_for_appends = m.waiting_for_appends || s->waiting_for_appends();
      }
    }
    m.epochs_completed = epochs_completed_;
    return m;
  }

 private:
  // Each stream's end (the round's last epoch) and, with several sources,
  // its permission to read on while another source has passes to make.
  // (Sharded streams never end.)
  void ConfigureStreams() {
    for (size_t i = 0; i < shards_.size(); ++i) {
      for (uint32_t s = 0; s < shards_[i].streams.size(); ++s) {
        // A shard's stream is endless: a finite sharded run ends by step (SetRoundEnd).
        shards_[i].streams[s]->SetEpochEnd(o_.epochs == 0 || o_.shards > 1 ? 0 : epoch_base_ + o_.epochs);
        shards_[i].streams[s]->SetRepeatGate([this, i, s] { return AnotherSourceHasPassesToMake(shards_[i], s); });
      }
    }
  }

  // Each source from the start of an epoch none has started (the stream
  // ended: Loader::StartNextRound, or a replay passing a round's end).
  Status BeginNextRound() {
    if (o_.shards > 1) {
      // The shards' streams go on; the round owes N more passes. Where the
      // shards had read on that far already (a source of few blocks, next
      // to a large one), the round would hold no step: it joins the next.
      // Within `shards` passes every shard gets a block.
      const uint64_t from = epoch_base_;
      do {
        epoch_base_ += o_.epochs;
        TF_RETURN_IF_ERROR(SetRoundEnd());
      } while (round_end_step_ <= next_step_ && epoch_base_ - from <= uint64_t{o_.shards} * o_.epochs);
      return Status::OK();
    }
    uint64_t base = epoch_base_;
    for (const auto& s : shards_[0].streams) base = std::max(base, s->position().epoch);
    epoch_base_ = base + 1;  // epochs no source has started: each is reshuffled
    ConfigureStreams();
    for (const auto& s : shards_[0].streams) s->Seek({epoch_base_, 0, 0, 0});
    return Status::OK();
  }

  // This rank's row `row` from stream `s`; while replaying, its pieces are noted.
  Result<bool> FillMine(SourceStream& s, uint32_t row, Batch* batch) {
    if (recording_ == nullptr) return packer_.FillRow(s, row, batch);
    loader::RecordingStream noted(s, row, recording_);
    return packer_.FillRow(noted, row, batch);
  }

  // Called on the prefetch thread, which owns the streams.
  bool AnotherSourceHasPassesToMake(const Shard& shard, uint32_t self) const {
    for (uint32_t t = 0; t < shard.streams.size(); ++t) {
      if (t == self || shard.mixer.weight(t) <= 0) continue;
      if (shard.streams[t]->position().epoch < shard.streams[t]->epoch_end()) return true;
    }
    return false;
  }

  bool finite_sharded() const { return o_.shards > 1 && o_.epochs > 0; }

  // Each source's blocks on `snapshot` and their lengths, from the sources'
  // token index: one 8-byte read of it per block boundary, no record (unless the
  // index lacks some, tokenfeed/token_index.h; what that reads is counted in
  // records_read and bytes_read).
  Result<std::vector<loader::SourceBlockLengths>> ReadBlockLengths(const loader::Snapshot& snapshot) {
    std::vector<loader::SourceBlockLengths> out;
    for (uint32_t s = 0; s < o_.sources.size(); ++s) {
      loader::SourceBlockLengths src;
      src.blocks = loader::MakeBlocks(snapshot.sources[s].partitions, BlockRecordsOf(s));
      src.records.resize(src.blocks.size());
      src.tokens.resize(src.blocks.size());
      if (o_.sources[s].weight > 0) {
        // MakeBlocks lists them partition by partition, in offset order.
        size_t b = 0;
        while (b < src.blocks.size()) {
          const uint32_t p = src.blocks[b].partition;
          size_t e = b;
          std::vector<Offset> offsets;
          for (; e < src.blocks.size() && src.blocks[e].partition == p; ++e) offsets.push_back(Offset(src.blocks[e].offset));
          offsets.push_back(Offset(src.blocks[e - 1].offset + src.blocks[e - 1].count));
          TF_ASSIGN_OR_RETURN(topic::TokenIndexRead read,
                              topic::ReadTokenIndex(o_.sources[s].uri, PartitionId(p), offsets, topic_config_));
          if (read.points.size() != offsets.size()) {
            return Status::Internal("the token index of " + o_.sources[s].uri + " answered " +
                                    std::to_string(read.points.size()) + " of " + std::to_string(offsets.size()) +
                                    " offsets");
          }
          for (size_t k = 0; k + 1 < offsets.size(); ++k) {
            const topic::IndexPoint& a = read.points[k];
            const topic::IndexPoint& z = read.points[k + 1];
            if (z.records < a.records || z.tokens < a.tokens) {
              return Status::Corruption("the token index of " + o_.sources[s].uri + " partition " +
                                      std::to_string(p) + " decreases between offsets " +
                                      ToString(offsets[k]) + " and " + ToString(offsets[k + 1]));
            }
            src.records[b + k] = z.records - a.records;
            src.tokens[b + k] = z.tokens - a.tokens;
          }
          index_records_read_ += read.records_read;
          index_bytes_read_ += read.bytes_read;
          b = e;
        }
      }
      out.push_back(std::move(src));
    }
    return out;
  }

  // What finds the end of the round that began after `epoch_base` passes.
  loader::ShardedEndInput EndInput(const std::vector<loader::SourceBlockLengths>& lengths,
                                   uint64_t epoch_base) const {
    loader::ShardedEndInput in;
    in.sources = lengths;
    for (const LoaderSource& src : o_.sources) in.weights.push_back(src.weight);
    in.shards = o_.shards;
    in.window_blocks = o_.window_blocks;
    in.shuffle = o_.shuffle;
    in.seed = o_.seed;
    in.passes = epoch_base + o_.epochs;
    in.seq_len = o_.seq_len;
    in.pack = o_.pack;
    in.added_per_document = (o_.bos_id ? 1 : 0) + (o_.eos_id ? 1 : 0);
    in.peeks_past_row = o_.cross_document_labels;
    return in;
  }

  // The current round's end (block_lengths_, epoch_base_; `known` when
  // already computed): the step after the one that holds the last sample
  // the round owes.
  Status SetRoundEnd(std::optional<loader::ShardedEnd> known = std::nullopt) {
    if (!finite_sharded()) return Status::OK();
    const loader::ShardedEndInput in = EndInput(block_lengths_, epoch_base_);
    if (known) {
      round_end_ = *known;
    } else {
      TF_ASSIGN_OR_RETURN(round_end_, loader::ComputeShardedEnd(in));
    }
    const uint64_t per_step = uint64_t{o_.batch_size} * o_.world_size;
    round_end_step_ = (round_end_.samples + per_step - 1) / per_step;
    // No window past what the round takes is read ahead: at the end, a
    // shard has read only what its samples hold, up to whole windows.
    const uint64_t samples = round_end_step_ * per_step;
    for (Shard& shard : shards_) {
      const uint64_t mine = samples > shard.index ? (samples - shard.index + o_.shards - 1) / o_.shards : 0;
      std::vector<loader::PassDealer*> dealers;
      for (const auto& stream : shard.streams) dealers.push_back(stream->config().dealer.get());
      const auto last = loader::LastWindows(in, shard.index, mine, dealers);
      for (size_t s = 0; s < shard.streams.size(); ++s) shard.streams[s]->SetReadAheadEnd(last[s].first, last[s].second);
    }
    return Status::OK();
  }

  // A finite sharded run's: for each source, who deals its passes to this
  // rank's shards.
  std::vector<std::shared_ptr<loader::PassDealer>> MakeDealers(
      const std::vector<loader::SourceBlockLengths>& lengths) const {
    std::vector<uint32_t> mine;
    for (uint32_t shard = o_.rank; shard < o_.shards; shard += o_.world_size) mine.push_back(shard);
    const loader::ShardedEndInput in = EndInput(lengths, 0);
    std::vector<std::shared_ptr<loader::PassDealer>> out;
    for (uint32_t s = 0; s < lengths.size(); ++s) {
      out.push_back(std::make_shared<loader::PassDealer>(lengths[s].blocks, loader::DealWeights(in, s), o_.shards,
                                                         o_.shuffle, o_.seed, s, mine));
    }
    return out;
  }

  // Shard `index` of every source, on `snapshot` (finite and sharded: with
  // the dealers of that snapshot).
  Result<Shard> OpenShard(uint32_t index, const loader::Snapshot& snapshot,
                          const std::vector<std::shared_ptr<loader::PassDealer>>& dealers) const {
    Shard shard;
    shard.index = index;
    std::vector<double> weights;
    for (uint32_t s = 0; s < o_.sources.size(); ++s) {
      loader::SourceConfig c = BaseConfig(s);
      c.partitions = snapshot.sources[s].partitions;
      c.shard = index;
      c.shards = o_.shards;
      c.pass_windows = finite_sharded();
      if (c.pass_windows) c.dealer = dealers.at(s);  // (Init and LoadState made them)
      TF_ASSIGN_OR_RETURN(auto stream, SourceStream::Open(std::move(c)));
      shard.streams.push_back(std::move(stream));
      weights.push_back(o_.sources[s].weight);
    }
    shard.mixer = SourceMixer(weights);
    return shard;
  }

  loader::SourceConfig BaseConfig(uint32_t s) const {
    loader::SourceConfig c;
    c.uri = o_.sources[s].uri;
    c.source_index = s;
    c.partitions = snapshot_.sources[s].partitions;
    c.block_records = BlockRecordsOf(s);
    c.window_blocks = o_.window_blocks;
    c.shuffle = o_.shuffle;
    c.seed = o_.seed;
    c.epochs = o_.shards > 1 ? 0 : o_.epochs;  // a shard's stream is endless
    c.follow = o_.follow;
    c.follow_timeout = std::chrono::milliseconds(o_.follow_timeout_ms);
    c.bos = o_.bos_id;
    c.eos = o_.eos_id;
    c.topic = topic_config_;
    return c;
  }

  uint32_t BlockRecordsOf(uint32_t s) const {
    if (o_.block_records != 0) return o_.block_records;
    // Sources were validated (a bad URI fails Init before this is asked).
    Result<topic::TransportHints> hints = topic::HintsFor(o_.sources[s].uri);
    return hints.ok() ? hints->block_records : topic::TransportHints{}.block_records;
  }

  loader::LoaderSettings Settings() const {
    std::vector<uint32_t> block_records;
    for (uint32_t s = 0; s < o_.sources.size(); ++s) block_records.push_back(BlockRecordsOf(s));
    return loader::SettingsOf(o_, block_records);
  }

  std::string StateJson(uint64_t next_step) const {
    LoaderState state;
    state.fingerprint = fingerprint_;
    state.samples = next_step * o_.batch_size * o_.world_size;
    state.consumed_from = consumed_from_;
    if (o_.shards == 1) {
      state.mixer = shards_[0].mixer.counts();
      for (const auto& stream : shards_[0].streams) {
        state.positions.push_back(stream->position());
        state.consumed.push_back(stream->consumed());
      }
    } else {
      state.shard_count = o_.shards;
      for (const Shard& shard : shards_) {
        loader::ShardState part;
        part.shard = shard.index;
        part.mixer = shard.mixer.counts();
        for (const auto& stream : shard.streams) {
          part.positions.push_back(stream->position());
          part.consumed.push_back(stream->consumed());
        }
        state.shards.push_back(std::move(part));
      }
    }
    state.epoch_base = epoch_base_;
    state.settings.emplace();
    for (auto& [name, value] : Settings()) state.settings->push_back({std::move(name), std::move(value)});
    state.snapshot = snapshot_;
    state.run.emplace();
    state.run->batch_size = o_.batch_size;
    state.run->world_size = o_.world_size;
    for (const LoaderSource& src : o_.sources) state.run->weights.push_back(src.weight);
    return loader::LoaderStateJson(state);
  }

  // The streams' counts, summed over this rank's shards, by source and epoch.
  std::vector<LoaderMetrics::SourceConsumption> ConsumedNow() const {
    // Runs once per step on the prefetch thread: no node allocations. Each
    // stream's tallies are sorted by epoch (and usually one or two long).
    std::vector<LoaderMetrics::SourceConsumption> out;
    for (uint32_t s = 0; s < o_.sources.size(); ++s) {
      const size_t first = out.size();
      for (const Shard& shard : shards_) {
        for (const loader::EpochTally& t : shard.streams[s]->consumed()) {
          out.push_back({s, t.epoch, t.tokens, t.documents});
        }
      }
      if (shards_.size() > 1 && out.size() > first) {
        auto begin = out.begin() + static_cast<std::ptrdiff_t>(first);
        std::sort(begin, out.end(), [](const auto& a, const auto& b) { return a.epoch < b.epoch; });
        auto kept = begin;  // merge the shards' entries of one epoch
        for (auto it = begin; it != out.end(); ++it) {
          if (it != begin && kept->epoch == it->epoch) {
            kept->tokens += it->tokens;
            kept->documents += it->documents;
          } else {
            if (it != begin) ++kept;
            *kept = *it;
          }
        }
        out.erase(kept + 1, out.end());
      }
    }
    return out;
  }

  // ---- the prefetch thread
  Status StartThread() {
    if (synchronous_) return Status::OK();  // a replayer: steps are produced on the caller's thread
    return prefetcher_.Start([this] {
      PrefetchItem item = ProduceItem();
      UpdateLag();
      return item;
    });
  }
  void StopThread() { prefetcher_.Stop(); }

  // Nothing may leave the prefetch thread (it would end the process): the
  // lag is a metric, and one that cannot be counted (out of memory) is skipped.
  void UpdateLag() noexcept {
    try {
      std::lock_guard lag(lag_mu_);
      lag_.clear();
      epochs_completed_.clear();
      uint64_t bytes = 0, records_read = 0, bytes_read = 0;
      std::vector<double> fresh;
      for (const Shard& shard : shards_) {
        for (const auto& s : shard.streams) {
          const std::vector<uint64_t> behind = s->Lag();
          const std::vector<double>& fresh_by_partition = s->PartitionFreshness();
          for (uint32_t p = 0; p < behind.size(); ++p) {
            const double f = p < fresh_by_partition.size() ? fresh_by_partition[p] : -1;
            lag_.push_back({s->config().uri, p, behind[p], f});
          }
          bytes += s->buffered_bytes();
          records_read += s->records_read();
          bytes_read += s->bytes_read();
          if (o_.follow) {
            fresh.clear();
            s->TakeFreshness(&fresh);
            for (double f : fresh) {
              if (freshness_.size() < kFreshnessSamples) {
                freshness_.push_back(f);
              } else {
                freshness_[freshness_next_] = f;
              }
              freshness_next_ = (freshness_next_ + 1) % kFreshnessSamples;
            }
          }
        }
      }
      read_ = {records_read + index_records_read_.load(), bytes_read + index_bytes_read_.load()};
      for (const auto& s : shards_[0].streams) {
        const uint64_t epoch = s->position().epoch;
        epochs_completed_.push_back(epoch > epoch_base_ ? epoch - epoch_base_ : 0);
      }
      stream_bytes_ = bytes;
    } catch (...) {
    }
  }

  // One step as an item; an exception (out of memory) becomes its Status,
  // since one escaping this thread would end the process.
  PrefetchItem ProduceItem() noexcept {
    PrefetchItem item;
    try {
      auto produced = ProduceStep(&item.ended_source);
      if (!produced.ok()) {
        item.status = produced.status();
      } else {
        item.batch = std::move(produced).value();
        if (item.batch) item.bytes = loader::RowPacker::BatchBytes(*item.batch);
        item.state = StateJson(next_step_);
        item.consumed = ConsumedNow();
      }
    } catch (const std::bad_alloc&) {
      item = PrefetchItem();
      item.status = Status::ResourceExhausted(
          "out of memory preparing global step " + std::to_string(next_step_) + " (batch_size " +
          std::to_string(o_.batch_size) + " x seq_len " + std::to_string(o_.seq_len) +
          "): lower batch_size, seq_len, prefetch_batches or window_blocks");
    } catch (const std::exception& e) {
      item = PrefetchItem();
      item.status = Status::Internal("preparing global step " + std::to_string(next_step_) + ": " + e.what());
    }
    return item;
  }

  // One global step; this rank's rows in a Batch; nullopt at the end, with
  // *ended_source the source that ran out.
  Result<std::optional<Batch>> ProduceStep(std::optional<uint32_t>* ended_source) {
    const uint32_t B = o_.batch_size, W = o_.world_size;
    if (o_.shards > 1) return ProduceShardedStep(B, W, ended_source);
    Shard& shard = shards_[0];
    Batch batch = packer_.StartBatch(B, next_step_);
    // Work on copies of the positions: a step that cannot be filled leaves
    // the streams where the last complete step left them.
    std::vector<SourcePosition> saved;
    std::vector<std::vector<loader::EpochTally>> saved_tallies;
    for (const auto& s : shard.streams) {
      saved.push_back(s->position());
      saved_tallies.push_back(s->consumed());
    }
    const SourceMixer saved_mixer = shard.mixer;
    for (uint64_t j = 0; j < uint64_t{B} * W; ++j) {
      const size_t src = shard.mixer.Next();
      const uint64_t owner = j / B;
      const bool mine = owner == o_.rank;
      const uint32_t row = static_cast<uint32_t>(j % B);
      if (mine) batch.source_of_row[row] = static_cast<uint32_t>(src);
      TF_ASSIGN_OR_RETURN(bool filled, mine && !skip_mine_ ? FillMine(*shard.streams[src], row, &batch)
                                                           : packer_.SkipRow(*shard.streams[src]));
      if (!filled) {
        for (size_t s = 0; s < shard.streams.size(); ++s) {
          shard.streams[s]->Seek(saved[s]);
          shard.streams[s]->SetConsumed(std::move(saved_tallies[s]));
        }
        shard.mixer = saved_mixer;
        *ended_source = static_cast<uint32_t>(src);
        return std::optional<Batch>();
      }
    }
    ++next_step_;
    return std::optional<Batch>(std::move(batch));
  }

  // Sharded: global sample j of the step comes from shard j % shards, and
  // rank r takes the j with j % world_size == r -- exactly the samples of its
  // own shards (world_size divides shards), in the order of j. The streams
  // never end, so every row is filled or the step fails; a finite run ends
  // by step, after the one that holds its last owed sample (SetRoundEnd).
  Result<std::optional<Batch>> ProduceShardedStep(uint32_t B, uint32_t W, std::optional<uint32_t>* ended_source) {
    if (finite_sharded() && next_step_ >= round_end_step_) {
      *ended_source = round_end_.source;
      return std::optional<Batch>();
    }
    Batch batch = packer_.StartBatch(B, next_step_);
    const uint64_t first = next_step_ * B * W;
    for (uint32_t row = 0; row < B; ++row) {
      const uint64_t j = first + o_.rank + uint64_t{W} * row;
      Shard& shard = shards_[(j % o_.shards) / W];  // this rank's shards: rank, rank + W, ...
      const size_t src = shard.mixer.Next();
      batch.source_of_row[row] = static_cast<uint32_t>(src);
      TF_ASSIGN_OR_RETURN(bool filled, skip_mine_ ? packer_.SkipRow(*shard.streams[src])
                                                  : FillMine(*shard.streams[src], row, &batch));
      if (!filled) return Status::Internal("shard " + std::to_string(shard.index) + " of an endless stream ended");
    }
    ++next_step_;
    return std::optional<Batch>(std::move(batch));
  }

  LoaderOptions o_;
  const bool synchronous_;   // a StepReplayer: no prefetch thread
  bool skip_mine_ = false;   // replaying: this rank's rows too are only counted past
  std::vector<loader::RowPiece>* recording_ = nullptr;  // replaying: where rows' pieces are noted
  loader::RowPacker packer_;
  topic::TopicConfig topic_config_;
  loader::Snapshot snapshot_;
  // Unsharded: one, the whole stream. Sharded: this rank's shards, in order
  // (shard rank, rank + world_size, ...).
  std::vector<Shard> shards_;
  std::string fingerprint_;
  uint64_t next_step_ = 0;   // owned by the prefetch thread while it runs
  uint64_t epoch_base_ = 0;  // the first epoch of the current round (sharded: passes of the rounds before)
  // A finite sharded run: each source's blocks' lengths on snapshot_, the
  // current round's end, and what reading the token index read of records.
  std::vector<loader::SourceBlockLengths> block_lengths_;
  loader::ShardedEnd round_end_;
  uint64_t round_end_step_ = 0;
  std::atomic<uint64_t> index_records_read_{0}, index_bytes_read_{0};  // any thread

  loader::Prefetcher prefetcher_;
  std::atomic<uint64_t> stream_bytes_{0};
  mutable std::mutex lag_mu_;
  std::vector<LoaderMetrics::PartitionLag> lag_;
  std::vector<uint64_t> epochs_completed_;
  std::pair<uint64_t, uint64_t> read_{0, 0};  // records and bytes read, under lag_mu_
  static constexpr size_t kFreshnessSamples = 4096;
  std::vector<double> freshness_;  // the last kFreshnessSamples, a ring, under lag_mu_
  size_t freshness_next_ = 0;

  // The global sample the streams' counts start at: written under
  // metrics_mu_ with the prefetch thread stopped, read by it and by Metrics().
  uint64_t consumed_from_ = 0;
  // Replaced only by LoadState, with the prefetch thread stopped; Metrics()
  // reads the streams under it (the endpoint calls it from its own thread).
  mutable std::mutex shards_mu_;

  // What Next() delivered, read by Metrics() and State() from any thread.
  mutable std::mutex metrics_mu_;
  std::string state_;
  std::vector<LoaderMetrics::SourceConsumption> consumed_;  // as of state_
  std::optional<Status> terminal_;  // set once Next() saw the end or an error
  LoaderMetrics metrics_;
  Clock::time_point first_batch_time_;
  // Last: stopped (and its thread joined) before the rest is destroyed.
  std::unique_ptr<metrics::MetricsHttpServer> metrics_server_;
};

}  // namespace

Status ValidateLoaderOptions(const LoaderOptions& o) {
  auto bad = [](const std::string& m) { return Status::InvalidArgument(m); };
  auto range = [](const char* name, uint64_t value) {
    const LoaderOptionRange r = FindLoaderOptionRange(name).value();
    if (value >= r.lo && value <= r.hi) return Status::OK();
    return LoaderOptionOutOfRange(name, r, std::to_string(value));
  };
  if (o.sources.empty()) return bad("no source: give at least one topic URI");
  double total = 0;
  for (const auto& s : o.sources) {
    if (!(s.weight >= 0) || !std::isfinite(s.weight)) {
      return bad("source " + s.uri + ": weight must be a finite number >= 0, not " + std::to_string(s.weight));
    }
    total += s.weight;
  }
  if (!(total > 0) || !std::isfinite(total)) return bad("the source weights must add up to a finite number above 0");
  TF_RETURN_IF_ERROR(range("seq_len", o.seq_len));
  TF_RETURN_IF_ERROR(range("batch_size", o.batch_size));
  // cu_seqlens holds offsets up to batch_size * seq_len as int32.
  uint64_t cells = 0;
  if (__builtin_mul_overflow(uint64_t{o.batch_size}, uint64_t{o.seq_len}, &cells) ||
      cells > uint64_t{std::numeric_limits<int32_t>::max()}) {
    return bad("batch_size * seq_len (" + std::to_string(o.batch_size) + " x " + std::to_string(o.seq_len) +
               ") must stay below 2^31 tokens per batch");
  }
  TF_RETURN_IF_ERROR(range("world_size", o.world_size));
  if (o.rank >= o.world_size) {
    return bad("rank " + std::to_string(o.rank) + " is not below world_size " + std::to_string(o.world_size));
  }
  TF_RETURN_IF_ERROR(range("block_records", o.block_records));
  TF_RETURN_IF_ERROR(range("window_blocks", o.window_blocks));
  TF_RETURN_IF_ERROR(range("shards", o.shards));
  TF_RETURN_IF_ERROR(range("follow_timeout_ms", o.follow_timeout_ms));
  if (o.follow && o.epochs != 0) {
    return bad("follow=true needs epochs=0: a live topic has no end to make passes over");
  }
  if (o.shards > 1) {
    if (o.epochs != 0) {
      // Where the other ranks' shards end comes from the token index.
      for (const auto& s : o.sources) {
        if (s.weight > 0 && !topic::HasTokenIndex(s.uri)) {
          return bad("shards=" + std::to_string(o.shards) + " with epochs=" + std::to_string(o.epochs) +
                     " needs a token index of every source, to know where the other ranks' shards end without "
                     "reading them, and this build keeps none for " + s.uri + ": use epochs=0 and bound the run "
                     "by steps, or shards=1");
        }
      }
    }
    if (o.shards % o.world_size != 0) {
      return bad("world_size " + std::to_string(o.world_size) + " does not divide shards=" +
                 std::to_string(o.shards) + ": each rank reads shards/world_size of them; use a world size that "
                 "divides it");
    }
  }
  TF_RETURN_IF_ERROR(range("prefetch_batches", o.prefetch_batches));
  TF_RETURN_IF_ERROR(range("memory_budget_bytes", o.memory_budget_bytes));
  TF_RETURN_IF_ERROR(range("kafka_timeout_ms", o.kafka_timeout_ms));
  if (o.metrics_port) TF_RETURN_IF_ERROR(range("metrics_port", *o.metrics_port));
  if (o.int32_ids && (o.ignore_index < std::numeric_limits<int32_t>::min() ||
                      o.ignore_index > std::numeric_limits<int32_t>::max())) {
    return bad("ignore_index " + std::to_string(o.ignore_index) + " does not fit the int32 ids asked for");
  }
  return Status::OK();
}

Result<std::unique_ptr<Loader>> Loader::Create(const LoaderOptions& options) {
  TF_RETURN_IF_ERROR(ValidateLoaderOptions(options));
  auto l = std::make_unique<LoaderImpl>(options);
  TF_RETURN_IF_ERROR(l->Init());
  return std::unique_ptr<Loader>(std::move(l));
}

namespace loader {
Result<std::unique_ptr<StepReplayer>> OpenStepReplayer(const LoaderOptions& options) {
  TF_RETURN_IF_ERROR(ValidateLoaderOptions(options));
  auto l = std::make_unique<LoaderImpl>(options, /*synchronous=*/true);
  TF_RETURN_IF_ERROR(l->Init());
  return std::unique_ptr<StepReplayer>(std::move(l));
}
}  // namespace loader

Result<std::string> MergeLoaderStates(const std::vector<std::string>& states_json) {
  std::vector<LoaderState> states;
  for (size_t i = 0; i < states_json.size(); ++i) {
    auto parsed = loader::ParseLoaderState(states_json[i]);
    if (!parsed.ok()) return parsed.status().WithContext("loader state " + std::to_string(i));
    states.push_back(std::move(parsed).value());
  }
  TF_ASSIGN_OR_RETURN(LoaderState merged, loader::MergeLoaderStates(states));
  return loader::LoaderStateJson(merged);
}

Result<std::string> TakeSnapshot(const std::vector<LoaderSource>& sources,
                                 const std::vector<std::string>& kafka_properties) {
  topic::TopicConfig config;
  config.kafka_properties = kafka_properties;
  TF_ASSIGN_OR_RETURN(Snapshot snap, ReadSnapshot(sources, config));
  return loader::SnapshotJson(snap);
}

}  // namespace tokenfeed
