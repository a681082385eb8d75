#include "loader/source_stream.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <system_error>
#include <tuple>

#include "tokenfeed/record.h"

namespace tokenfeed::loader {

SourceStream::SourceStream(SourceConfig config) : config_(std::move(config)) {}

Result<std::unique_ptr<SourceStream>> SourceStream::Open(SourceConfig config) {
  std::unique_ptr<SourceStream> s(new SourceStream(std::move(config)));
  const SourceConfig& c = s->config_;
  s->epoch_end_ = c.epochs;
  TF_ASSIGN_OR_RETURN(topic::TransportHints hints, topic::HintsFor(c.uri));
  s->cheap_snapshot_check_ = hints.cheap_snapshot_check;
  if (!topic::HasTokenIndex(c.uri) || c.follow) s->index_covers_ = false;
  s->blocks_ = MakeBlocks(c.partitions, c.block_records);
  s->windows_per_epoch_ = (s->blocks_.size() + c.window_blocks - 1) / c.window_blocks;
  if (c.follow) {
    if (c.epochs != 0 || c.partitions.empty() || c.block_records == 0) {
      return Status::InvalidArgument(c.uri + ": following a topic needs epochs=0 and a partition");
    }
    s->windows_per_epoch_ = UINT64_MAX;  // one endless pass, never a new epoch
  }
  if (c.shards > 1) {
    if (c.epochs != 0 || c.shard >= c.shards || (c.pass_windows && (c.follow || c.dealer == nullptr))) {
      return Status::InvalidArgument("shard " + std::to_string(c.shard) + " of " + std::to_string(c.shards) +
                                     " of " + c.uri + ": a sharded stream is endless (epochs=0)");
    }
    // A shard's windows run on across epochs: it never starts a new one.
    s->windows_per_epoch_ = s->blocks_.empty() && !c.follow ? 0 : UINT64_MAX;
  }
  for (uint32_t p = 0; p < c.partitions.size(); ++p) {
    TF_ASSIGN_OR_RETURN(auto cursor, topic::OpenPartitionCursor(c.uri, PartitionId(p), c.topic));
    s->cursors_.push_back(std::move(cursor));
  }
  s->read_upto_.resize(c.partitions.size());
  s->index_readers_.resize(c.partitions.size());
  s->topic_end_.resize(c.partitions.size());
  s->partition_freshness_.assign(c.partitions.size(), -1);
  for (uint32_t p = 0; p < c.partitions.size(); ++p) {
    s->read_upto_[p] = c.partitions[p].start;
    s->topic_end_[p] = c.partitions[p].end;
  }
  return s;
}

SourceStream::~SourceStream() { JoinPrefetch(); }

void SourceStream::SetLengthsOnly(bool on) {
  if (on && !index_covers_) {
    // An index that stops short would have the records after it read again
    // for every block: then the windows are read as they are.
    // The readers opened here serve the windows made from the index.
    bool covers = true;
    for (uint32_t p = 0; covers && p < config_.partitions.size(); ++p) {
      if (index_readers_[p] == nullptr) {
        Result<std::unique_ptr<topic::TokenIndexReader>> opened =
            topic::OpenTokenIndexReader(config_.uri, PartitionId(p), config_.topic);
        if (!opened.ok()) {
          covers = false;
          break;
        }
        index_readers_[p] = std::move(opened).value();
      }
      covers = index_readers_[p]->covered() >= config_.partitions[p].end;
    }
    index_covers_ = covers;
  }
  on = on && *index_covers_;
  if (on == lengths_only_) return;
  JoinPrefetch();
  lengths_only_ = on;
  next_window_.epoch = UINT64_MAX;  // read the other way
  if (cur_window_.lengths_only != on) {
    loaded_ = false;  // Ready() reads pos_'s window again, the new way
    cur_ = nullptr;
  }
}

void SourceStream::Seek(const SourcePosition& p) {
  pos_ = p;
  loaded_ = cur_window_.epoch == p.epoch && cur_window_.window == p.window && cur_window_.status.ok() &&
            cur_window_.lengths_only == lengths_only_;
  cur_ = nullptr;
  if (loaded_ && pos_.doc < cur_window_.order.size()) SelectDoc();
}

uint32_t SourceStream::TokenAt(uint32_t i) const {
  uint32_t v;
  CopyTokens(i, 1, &v);
  return v;
}

void SourceStream::SelectDoc() {
  cur_ = &cur_window_.docs[cur_window_.order[pos_.doc]];
  cur_len_ = cur_->count + (config_.bos ? 1 : 0) + (config_.eos ? 1 : 0);
}

Result<bool> SourceStream::Ready() {
  uint64_t windows_passed = 0;  // in this call, without a token
  uint64_t epochs_passed = 0;
  // Nothing of this epoch is consumed yet: passing all its windows without a
  // token proves the source holds none (every epoch holds every record).
  const bool at_epoch_start = pos_.window == 0 && pos_.doc == 0 && pos_.token == 0;
  auto no_token = [&] {
    return Status::InvalidArgument("source " + config_.uri + " holds no token to train on (" +
                                   std::to_string(blocks_.empty() ? 0 : windows_per_epoch_) +
                                   " windows of records, all empty): remove it from the sources or ingest data "
                                   "into it");
  };
  while (true) {
    if (epoch_end_ != 0 && pos_.epoch >= epoch_end_ && !(repeat_ && repeat_())) {
      // The last epoch read whole without a token ends in the error, not in
      // an empty stream.
      if (at_epoch_start && windows_per_epoch_ > 0 && windows_passed >= windows_per_epoch_) return no_token();
      return false;
    }
    // A shard visits every block within a few passes' worth of windows.
    // Following, data may yet come: each window waits for it instead.
    const uint64_t proof = config_.follow ? UINT64_MAX
                           : sharded()    ? 4 * (blocks_.size() + 1) * config_.shards
                                          : windows_per_epoch_;
    if (windows_per_epoch_ == 0 || windows_passed > proof) return no_token();
    if (pos_.window >= WindowsIn(pos_.epoch)) {
      // (A pass may give a shard no window; within `shards` passes it gives one.)
      pos_ = {pos_.epoch + 1, 0, 0, 0};
      loaded_ = false;
      if (config_.pass_windows && ++epochs_passed > proof) return no_token();
      continue;
    }
    if (!loaded_) {
      TF_RETURN_IF_ERROR(LoadWindow());
      if (pos_.doc < cur_window_.order.size()) SelectDoc();
    }
    if (pos_.doc >= cur_window_.order.size()) {
      pos_ = {pos_.epoch, pos_.window + 1, 0, 0};
      loaded_ = false;
      ++windows_passed;
      continue;
    }
    if (cur_len_ == 0 || pos_.token >= cur_len_) {  // an empty document (no ids, no BOS/EOS)
      ++pos_.doc;
      pos_.token = 0;
      if (pos_.doc < cur_window_.order.size()) SelectDoc();
      continue;
    }
    return true;
  }
}

void SourceStream::Advance(uint32_t n) {
  if (n > 0) {
    // Epochs only grow along a stream: the last entry is almost always the one.
    if (consumed_.empty() || consumed_.back().epoch < cur_->epoch) {
      consumed_.push_back({cur_->epoch, 0, 0});
    }
    auto it = consumed_.end() - 1;
    if (it->epoch != cur_->epoch) {
      it = std::lower_bound(consumed_.begin(), consumed_.end(), cur_->epoch,
                            [](const EpochTally& t, uint64_t e) { return t.epoch < e; });
      if (it == consumed_.end() || it->epoch != cur_->epoch) it = consumed_.insert(it, {cur_->epoch, 0, 0});
    }
    it->tokens += n;
    if (pos_.token == 0) ++it->documents;
  }
  pos_.token += n;
  if (pos_.token >= cur_len_) FinishDoc();
}

void SourceStream::DropRest() {
  if (pos_.token > 0 && pos_.token < cur_len_) FinishDoc();
}

void SourceStream::FinishDoc() {
  if (config_.follow && cur_->append_ms > 0 && freshness_.size() < 65536) {
    const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    const double seconds = static_cast<double>(now.count() - cur_->append_ms) / 1000.0;
    freshness_.push_back(seconds);
    if (cur_->partition < partition_freshness_.size()) partition_freshness_[cur_->partition] = seconds;
  }
  ++pos_.doc;
  pos_.token = 0;
  if (pos_.doc < cur_window_.order.size()) SelectDoc();
}

Status SourceStream::CheckSnapshotStillHolds() {
  const SourceConfig& c = config_;
  auto summary = topic::DescribeTopic(c.uri, c.topic);
  if (!summary.ok()) return summary.status().WithContext("the loader's source " + c.uri);
  if (summary->partitions.size() != c.partitions.size()) {
    return Status::InvalidArgument(c.uri + " now has " + std::to_string(summary->partitions.size()) +
                                   " partitions; the loader's snapshot has " + std::to_string(c.partitions.size()));
  }
  for (uint32_t p = 0; p < c.partitions.size(); ++p) {
    const auto& now = summary->partitions[p];
    topic_end_[p] = now.end_offset.value();
    if (now.start_offset.value() > c.partitions[p].start || now.end_offset.value() < c.partitions[p].end) {
      return Status::InvalidArgument(c.uri + " partition " + std::to_string(p) + " now holds offsets [" +
                                     std::to_string(now.start_offset.value()) + ", " +
                                     std::to_string(now.end_offset.value()) + "), not the [" +
                                     std::to_string(c.partitions[p].start) + ", " + std::to_string(c.partitions[p].end) +
                                     ") the loader's snapshot needs");
    }
  }
  return Status::OK();
}

std::vector<uint32_t> SourceStream::WindowReadingOrder(const std::vector<uint32_t>& order, uint64_t window) const {
  const uint64_t first = window * config_.window_blocks;
  const uint64_t last = std::min<uint64_t>(first + config_.window_blocks, order.size());
  // Shuffled, the window's documents are permuted after reading, so its
  // blocks are read in storage order: by partition, then offset. Unshuffled,
  // the visiting order is the reading order.
  std::vector<uint32_t> reading(order.begin() + static_cast<long>(first), order.begin() + static_cast<long>(last));
  if (config_.shuffle) {
    std::sort(reading.begin(), reading.end(), [&](uint32_t a, uint32_t b) {
      return std::tie(blocks_[a].partition, blocks_[a].offset) < std::tie(blocks_[b].partition, blocks_[b].offset);
    });
  }
  return reading;
}

const SourceStream::EpochPlan& SourceStream::Plan(uint64_t epoch) {
  auto it = epoch_plans_.find(epoch);
  if (it != epoch_plans_.end()) return it->second;
  while (epoch_plans_.size() >= 2) epoch_plans_.erase(epoch_plans_.begin());
  EpochPlan& plan = epoch_plans_[epoch];
  plan.order = EpochBlockOrder(blocks_, config_.shuffle, config_.seed, config_.source_index, epoch);
  if (sharded()) return plan;  // a shard's windows find their runs themselves (ShardWindowReads)
  // Each partition's blocks in the order its cursor reads them, all windows
  // after each other; then the run ends from the back.
  std::vector<std::vector<uint32_t>> reads(config_.partitions.size());
  for (uint64_t window = 0; window < windows_per_epoch_; ++window) {
    for (uint32_t index : WindowReadingOrder(plan.order, window)) reads[blocks_[index].partition].push_back(index);
  }
  plan.read_end.assign(blocks_.size(), 0);
  for (const std::vector<uint32_t>& seq : reads) {
    for (size_t i = seq.size(); i-- > 0;) {
      const Block& b = blocks_[seq[i]];
      const bool next_adjacent = i + 1 < seq.size() && blocks_[seq[i + 1]].offset == b.offset + b.count;
      plan.read_end[seq[i]] = next_adjacent ? plan.read_end[seq[i + 1]] : b.offset + b.count;
    }
  }
  return plan;
}

std::vector<SourceStream::BlockRead> SourceStream::WindowReads(uint64_t epoch, uint64_t window) {
  if (config_.follow) return FollowWindowReads(window);
  if (config_.pass_windows) return ShardPassWindowReads(epoch, window);
  if (sharded()) return ShardWindowReads(window);
  const EpochPlan& plan = Plan(epoch);
  std::vector<BlockRead> reads;
  for (uint32_t index : WindowReadingOrder(plan.order, window)) {
    reads.push_back({blocks_[index], plan.read_end[index], epoch});
  }
  return reads;
}

std::vector<SourceStream::BlockRead> SourceStream::ShardWindowReads(uint64_t window) {
  const SourceConfig& c = config_;
  const uint64_t n = blocks_.size();
  std::vector<BlockRead> reads;
  for (uint64_t i = 0; i < c.window_blocks; ++i) {
    // Position g of the endless sequence: epoch g / n, block g % n of its order.
    const uint64_t g = (window * c.window_blocks + i) * c.shards + c.shard;
    const uint32_t index = Plan(g / n).order[g % n];
    reads.push_back({blocks_[index], blocks_[index].offset + blocks_[index].count, g / n});
  }
  return ChainRuns(std::move(reads));
}

uint64_t SourceStream::WindowsIn(uint64_t epoch) const {
  if (!config_.pass_windows) return windows_per_epoch_;
  if (windows_in_.first != epoch) {
    const uint64_t blocks = config_.dealer->CountDealt(epoch, config_.shard);
    windows_in_ = {epoch, (blocks + config_.window_blocks - 1) / config_.window_blocks};
  }
  return windows_in_.second;
}

std::vector<SourceStream::BlockRead> SourceStream::ShardPassWindowReads(uint64_t epoch, uint64_t window) {
  const SourceConfig& c = config_;
  const std::vector<uint32_t> mine = c.dealer->Dealt(epoch, c.shard);
  std::vector<BlockRead> reads;
  for (uint64_t i = window * c.window_blocks; i < std::min<uint64_t>((window + 1) * c.window_blocks, mine.size()); ++i) {
    const Block& b = blocks_[mine[i]];
    reads.push_back({b, b.offset + b.count, epoch});
  }
  return ChainRuns(std::move(reads));
}

std::vector<SourceStream::BlockRead> SourceStream::FollowWindowReads(uint64_t window) const {
  const SourceConfig& c = config_;
  const uint64_t parts = c.partitions.size();
  std::vector<BlockRead> reads;
  for (uint64_t i = 0; i < c.window_blocks; ++i) {
    const uint64_t g = (window * c.window_blocks + i) * c.shards + c.shard;
    const uint32_t p = static_cast<uint32_t>(g % parts);
    const uint64_t offset = c.partitions[p].start + (g / parts) * c.block_records;
    reads.push_back({Block{p, offset, c.block_records}, offset + c.block_records, 0});
  }
  return ChainRuns(std::move(reads));
}

Status SourceStream::WaitForBlock(topic::PartitionCursor& cursor, const Block& block) {
  const uint64_t end = block.offset + block.count;
  TF_ASSIGN_OR_RETURN(Offset now, cursor.EndOffset());
  if (now.value() >= end) return Status::OK();
  const auto started = std::chrono::steady_clock::now();
  waiting_.fetch_add(1, std::memory_order_relaxed);
  Status result = Status::OK();
  auto wait = std::chrono::milliseconds(20);
  while (true) {
    const auto waited = std::chrono::steady_clock::now() - started;
    if (waited >= config_.follow_timeout) {
      result = Status::TimedOut(
          config_.uri + " partition " + std::to_string(block.partition) + ": no record appended up to offset " +
          std::to_string(end) + " (the end is " + ToString(now) + ") within " +
          std::to_string(config_.follow_timeout.count()) + " ms of following it (follow_timeout_ms)");
      break;
    }
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(wait, config_.follow_timeout - waited));
    wait = std::min(wait * 2, std::chrono::milliseconds(500));
    auto checked = cursor.EndOffset();
    if (!checked.ok()) {
      result = checked.status();
      break;
    }
    now = *checked;
    if (now.value() >= end) break;
  }
  append_wait_us_.fetch_add(static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                                      std::chrono::steady_clock::now() - started)
                                                      .count()),
                            std::memory_order_relaxed);
  waiting_.fetch_sub(1, std::memory_order_relaxed);
  return result;
}

std::vector<SourceStream::BlockRead> SourceStream::ChainRuns(std::vector<BlockRead> reads) const {
  if (config_.shuffle) {  // read in storage order; the documents are permuted after
    std::stable_sort(reads.begin(), reads.end(), [&](const BlockRead& a, const BlockRead& b) {
      return std::tie(a.block.partition, a.block.offset) < std::tie(b.block.partition, b.block.offset);
    });
  }
  // Adjacent blocks of one partition are one run for the cursor.
  for (size_t i = reads.size(); i-- > 1;) {
    const Block& a = reads[i - 1].block;
    const Block& b = reads[i].block;
    if (a.partition == b.partition && b.offset == a.offset + a.count) reads[i - 1].read_end = reads[i].read_end;
  }
  return reads;
}

Status SourceStream::ReadBlocks(uint32_t partition, const std::vector<BlockRead>& blocks, Window* w,
                                std::vector<std::pair<uint32_t, uint64_t>>* read_upto,
                                std::vector<uint32_t>* block_docs, uint64_t* bytes_read) {
  const SourceConfig& c = config_;
  topic::PartitionCursor& cursor = *cursors_[partition];
  std::vector<char>& arena = w->arenas[partition];
  std::vector<StoredDoc>& stored = w->stored[partition];
  std::vector<std::shared_ptr<const void>>& owners = w->owners[partition];
  for (const BlockRead& read : blocks) {
    const Block& b = read.block;
    const Offset end(b.offset + b.count);
    if (c.follow) TF_RETURN_IF_ERROR(WaitForBlock(cursor, b));
    if (cursor.position() != Offset(b.offset)) TF_RETURN_IF_ERROR(cursor.Seek(Offset(b.offset)));
    TF_RETURN_IF_ERROR(cursor.SetReadEnd(Offset(read.read_end)));
    // A block is a range of offsets. On a Kafka topic written in
    // transactions (or compacted) some of them hold no record, so the block
    // is done when the cursor has passed its end, whatever it held.
    uint32_t docs = 0;
    while (cursor.position() < end) {
      const Offset at = cursor.position();
      // No more than the block needs: the next block often starts where
      // this one ends (the same partition, in order), and then the cursor
      // goes on without a seek (which restarts a fetching cursor's fetch).
      TF_ASSIGN_OR_RETURN(auto records, cursor.Read(std::chrono::milliseconds(5000), end - at, end));
      if (records.empty()) {
        if (cursor.position() >= end) break;  // the rest of the block holds no record
        return Status::TimedOut(c.uri + " partition " + std::to_string(b.partition) + ": nothing read at offset " +
                                ToString(cursor.position()) + " within 5 s, though the snapshot holds offsets up to " +
                                ToString(end));
      }
      std::shared_ptr<const void> owner = cursor.RecordsOwner();
      if (owner != nullptr && (owners.empty() || owners.back() != owner)) owners.push_back(owner);
      Offset next = at;  // the lowest offset the next record may have
      for (const topic::StoredRecordView& r : records) {
        if (r.offset < next || r.offset >= end) {
          return Status::Corruption(c.uri + " partition " + std::to_string(b.partition) + ": a record at offset " +
                                    ToString(r.offset) + " where offsets " + ToString(next) + " to " +
                                    std::to_string(end.value() - 1) + " were read");
        }
        next = r.offset + 1;
        *bytes_read += r.bytes.size();
        auto view = record::RecordView::Parse(r.bytes);
        if (!view.ok()) {
          return view.status().WithContext(c.uri + " partition " + std::to_string(b.partition) + " offset " +
                                           ToString(r.offset));
        }
        const uint32_t count = static_cast<uint32_t>(view->ids().size());
        const uint8_t width = static_cast<uint8_t>(view->ids().width_bytes());
        if (owner != nullptr) {
          // Bytes that stay readable while the window holds their owner (a
          // memory-mapped segment): the document points at them, no copy.
          stored.push_back(
              {0, reinterpret_cast<const uint8_t*>(view->ids().data()), count, width, r.append_time_ms, r.offset.value()});
        } else {
          // Keep the ids 4-aligned in the arena, as the record had them.
          const size_t at_byte = (arena.size() + 3) & ~size_t{3};
          arena.insert(arena.end(), at_byte - arena.size(), '\0');
          const char* ids = reinterpret_cast<const char*>(view->ids().data());
          arena.insert(arena.end(), ids, ids + size_t{count} * width);
          stored.push_back({at_byte, nullptr, count, width, r.append_time_ms, r.offset.value()});
        }
        ++docs;
      }
    }
    block_docs->push_back(docs);
    read_upto->emplace_back(b.partition, b.offset + b.count);
  }
  return Status::OK();
}

Status SourceStream::CountBlocks(uint32_t partition, const std::vector<BlockRead>& blocks, Window* w,
                                 std::vector<std::pair<uint32_t, uint64_t>>* read_upto,
                                 std::vector<uint32_t>* block_docs, uint64_t* records_read, uint64_t* bytes_read) {
  const SourceConfig& c = config_;
  std::vector<StoredDoc>& stored = w->stored[partition];
  std::vector<Offset> offsets;
  for (const BlockRead& read : blocks) {
    const Block& b = read.block;
    offsets.clear();
    for (uint64_t o = b.offset; o <= b.offset + b.count; ++o) offsets.push_back(Offset(o));
    // (Opened by SetLengthsOnly, which checked that each covers the snapshot.)
    TF_ASSIGN_OR_RETURN(topic::TokenIndexRead counted, index_readers_[b.partition]->Read(offsets));
    *records_read += counted.records_read;
    *bytes_read += counted.bytes_read;
    uint32_t docs = 0;
    for (uint32_t i = 0; i < b.count; ++i) {
      // An offset that holds no record to read (a Kafka transaction marker,
      // an aborted or compacted record) counts none.
      if (counted.points[i + 1].records == counted.points[i].records) continue;
      const uint64_t ids = counted.points[i + 1].tokens - counted.points[i].tokens;
      if (ids > UINT32_MAX) {
        return Status::Corruption(c.uri + " partition " + std::to_string(b.partition) + ": the token index gives " +
                                  "the record at offset " + std::to_string(b.offset + i) + " " +
                                  std::to_string(ids) + " ids, more than a record holds");
      }
      stored.push_back({0, nullptr, static_cast<uint32_t>(ids), 0, -1, b.offset + i});
      ++docs;
    }
    block_docs->push_back(docs);
    read_upto->emplace_back(b.partition, b.offset + b.count);
  }
  return Status::OK();
}

void SourceStream::ReadWindow(uint64_t epoch, uint64_t window, Window* w) {
  try {
    ReadWindowOrThrow(epoch, window, w);
  } catch (const std::bad_alloc&) {
    w->status = Status::ResourceExhausted("out of memory reading window " + std::to_string(window) + " of epoch " +
                                          std::to_string(epoch) + " of " + config_.uri +
                                          ": lower window_blocks or block_records, or free memory");
  } catch (const std::exception& e) {
    w->status = Status::Internal("reading window " + std::to_string(window) + " of epoch " + std::to_string(epoch) +
                                 " of " + config_.uri + ": " + e.what());
  }
}

void SourceStream::ReadWindowOrThrow(uint64_t epoch, uint64_t window, Window* w) {
  const SourceConfig& c = config_;
  w->epoch = epoch;
  w->window = window;
  w->arenas.resize(cursors_.size());
  w->stored.resize(cursors_.size());
  w->owners.resize(cursors_.size());
  for (auto& a : w->arenas) a.clear();
  for (auto& d : w->stored) d.clear();
  for (auto& o : w->owners) o.clear();
  w->docs.clear();
  w->order.clear();
  w->read_upto.clear();
  w->records_read = w->bytes_read = 0;
  w->status = Status::OK();
  w->lengths_only = lengths_only_;
  const std::vector<BlockRead> reading = WindowReads(epoch, window);
  // Each partition's blocks are read by a thread of its own (its own cursor)
  // into the partition's arena; the documents are then listed in reading
  // order.
  std::vector<std::vector<BlockRead>> by_partition(cursors_.size());
  std::vector<std::pair<uint32_t, size_t>> slot_of_block;  // partition, index among its blocks
  std::vector<uint64_t> epoch_of_block;                     // in reading order, as slot_of_block
  for (const BlockRead& read : reading) {
    const Block& b = read.block;
    slot_of_block.emplace_back(b.partition, by_partition[b.partition].size());
    epoch_of_block.push_back(read.epoch);
    by_partition[b.partition].push_back(read);
  }
  std::vector<std::vector<std::pair<uint32_t, uint64_t>>> read_upto(cursors_.size());
  std::vector<std::vector<uint32_t>> block_docs(cursors_.size());  // by partition, per block read
  std::vector<uint64_t> bytes_read(cursors_.size(), 0);
  std::vector<uint64_t> index_records_read(cursors_.size(), 0);  // lengths only: what the index lacked
  std::vector<Status> results(cursors_.size());
  std::vector<std::thread> threads;
  size_t busy = 0;
  for (const auto& blocks : by_partition) busy += !blocks.empty();
  // Each helper reports an exception (out of memory) as its Status: one
  // escaping a thread would end the process.
  auto read_partition = [this, &by_partition, w, &read_upto, &block_docs, &bytes_read, &index_records_read,
                         &results](uint32_t p) noexcept {
    try {
      results[p] = w->lengths_only ? CountBlocks(p, by_partition[p], w, &read_upto[p], &block_docs[p],
                                                 &index_records_read[p], &bytes_read[p])
                                   : ReadBlocks(p, by_partition[p], w, &read_upto[p], &block_docs[p], &bytes_read[p]);
    } catch (const std::bad_alloc&) {
      results[p] = Status::ResourceExhausted("out of memory reading " + config_.uri + " partition " +
                                             std::to_string(p) + ": lower window_blocks or block_records");
    } catch (const std::exception& e) {
      results[p] = Status::Internal("reading " + config_.uri + " partition " + std::to_string(p) + ": " + e.what());
    }
  };
  threads.reserve(by_partition.size());
  for (uint32_t p = 0; p < by_partition.size(); ++p) {
    if (by_partition[p].empty()) continue;
    bool started = false;
    if (busy > 1) {
      try {
        threads.emplace_back(read_partition, p);
        started = true;
      } catch (const std::system_error&) {
        // No thread to be had: read this partition here instead.
      }
    }
    if (!started) read_partition(p);
  }
  for (auto& t : threads) t.join();
  for (uint32_t p = 0; p < results.size(); ++p) {
    if (!results[p].ok()) {
      w->status = results[p];
      return;
    }
  }
  // Where each block's documents start in its partition's window.
  std::vector<std::vector<size_t>> first_doc(cursors_.size());
  for (uint32_t p = 0; p < by_partition.size(); ++p) {
    size_t at = 0;
    for (uint32_t docs : block_docs[p]) {
      first_doc[p].push_back(at);
      at += docs;
    }
  }
  for (const auto& r : read_upto) w->read_upto.insert(w->read_upto.end(), r.begin(), r.end());
  for (uint32_t p = 0; p < cursors_.size(); ++p) {
    w->bytes_read += bytes_read[p];
    w->records_read += index_records_read[p];
    if (!w->lengths_only) {
      for (uint32_t docs : block_docs[p]) w->records_read += docs;
    }
  }
  records_read_ += w->records_read;
  bytes_read_ += w->bytes_read;
  // The arenas are complete: their addresses no longer change.
  for (size_t i = 0; i < slot_of_block.size(); ++i) {
    const auto [p, k] = slot_of_block[i];
    const size_t from = first_doc[p][k], count = block_docs[p][k];
    const uint8_t* arena = reinterpret_cast<const uint8_t*>(w->arenas[p].data());
    for (size_t d = from; d < from + count; ++d) {
      const StoredDoc& sd = w->stored[p][d];
      // A window made from the index holds no ids: null, never a stale arena.
      const uint8_t* ids = sd.direct != nullptr ? sd.direct : w->lengths_only ? nullptr : arena + sd.ids_at;
      w->docs.push_back({ids, sd.count, sd.width, sd.append_ms, p, sd.offset, epoch_of_block[i]});
    }
  }
  // A shard's windows have keys of their own: epochs never reach 2^62
  // (pass windows: 2^40), shards 2^16.
  const uint64_t key = c.pass_windows ? (uint64_t{3} << 62) | (uint64_t{c.shard} << 40) | epoch
                       : sharded()    ? (uint64_t{1} << 63) | c.shard
                                      : epoch;
  w->order = WindowRecordOrder(static_cast<uint32_t>(w->docs.size()), c.shuffle, c.seed, c.source_index, key,
                               window);
}

void SourceStream::JoinPrefetch() {
  if (prefetch_.joinable()) prefetch_.join();
}

void SourceStream::StartPrefetch() {
  uint64_t epoch = pos_.epoch, window = pos_.window + 1;
  // (Pass windows: passes that give this shard none are skipped; within
  // `shards` passes one gives it a window.)
  for (uint64_t skipped = 0; window >= WindowsIn(epoch); ++skipped) {
    if (skipped > config_.shards) return;
    ++epoch;
    window = 0;
  }
  if (epoch_end_ != 0 && epoch >= epoch_end_ && !(repeat_ && repeat_())) return;
  if (sharded() && std::make_pair(epoch, window) > read_ahead_end_) return;
  next_window_bytes_ = next_window_.capacity_bytes();
  // The epoch plans are touched by the prefetch thread alone until joined.
  try {
    prefetch_ = std::thread([this, epoch, window] { ReadWindow(epoch, window, &next_window_); });
  } catch (const std::system_error&) {
    // No thread to be had: the window is read when it is needed.
  }
}

Status SourceStream::LoadWindow() {
  JoinPrefetch();
  next_window_bytes_ = next_window_.capacity_bytes();
  // The topic must still hold what the snapshot names (a deleted or
  // shortened topic is an error, never a hang). Where that check is cheap
  // (the embedded log: a few file checks) it runs each window; elsewhere
  // (a round trip to a cluster) the cursor reports a vanished topic or offset.
  // Windows made from the token index read no record: their check is
  // made by the first window read from the records after them.
  if (cheap_snapshot_check_ && !lengths_only_) TF_RETURN_IF_ERROR(CheckSnapshotStillHolds());
  if (next_window_.epoch == pos_.epoch && next_window_.window == pos_.window && next_window_.status.ok() &&
      next_window_.lengths_only == lengths_only_) {
    std::swap(cur_window_, next_window_);
  } else {
    ReadWindow(pos_.epoch, pos_.window, &cur_window_);
  }
  next_window_.epoch = UINT64_MAX;
  if (!cur_window_.status.ok() && cur_window_.lengths_only) {
    // The index failed us (damaged, cut back under us): the records say
    // the same, and for this stream they are read from here on.
    index_covers_ = false;
    lengths_only_ = false;
    if (cheap_snapshot_check_) TF_RETURN_IF_ERROR(CheckSnapshotStillHolds());
    ReadWindow(pos_.epoch, pos_.window, &cur_window_);
  }
  if (!cur_window_.status.ok()) {
    Status s = cur_window_.status;
    cur_window_.epoch = UINT64_MAX;
    return s;
  }
  for (auto [p, upto] : cur_window_.read_upto) read_upto_[p] = upto;
  loaded_ = true;
  StartPrefetch();
  return Status::OK();
}

std::vector<Block> SourceStream::WindowBlocks(uint64_t epoch, uint64_t window) {
  std::vector<Block> blocks;
  for (const BlockRead& read : WindowReads(epoch, window)) blocks.push_back(read.block);
  return blocks;
}

Result<std::vector<SourceStream::RecordKey>> SourceStream::WindowVisitOrder(uint64_t epoch, uint64_t window) {
  Window w;
  ReadWindow(epoch, window, &w);
  TF_RETURN_IF_ERROR(w.status);
  std::vector<RecordKey> keys;
  keys.reserve(w.order.size());
  for (uint32_t i : w.order) keys.push_back({w.docs[i].partition, w.docs[i].offset, w.docs[i].count});
  return keys;
}

std::vector<uint64_t> SourceStream::Lag() const {
  std::vector<uint64_t> out;
  for (size_t p = 0; p < read_upto_.size(); ++p) {
    out.push_back(topic_end_[p] > read_upto_[p] ? topic_end_[p] - read_upto_[p] : 0);
  }
  return out;
}

}  // namespace tokenfeed::loader
