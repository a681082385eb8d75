// SourceStream: one source's documents in the loader's order
// (document_order.h), read window by window through topic cursors, with BOS/
// EOS added around each document if configured. The position is a small
// value (epoch, window, document in window, token in document) that can be
// saved and sought back to. While a window is consumed, the next one is read
// in the background, each partition's blocks on a thread of their own, so
// the round trips of a remote topic overlap. Not thread-safe: used by the
// loader's prefetch thread only (its own helper threads touch only cursors
// and the window being filled; nothing else reads that window until they are
// joined). An exception on a helper thread (out of memory) becomes the
// window's Status, never the end of the process.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <thread>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "loader/document_order.h"
#include "loader/pass_deal.h"
#include "tokenfeed/status.h"
#include "tokenfeed/token_index.h"
#include "tokenfeed/topic.h"

namespace tokenfeed::loader {

struct SourceConfig {
  std::string uri;
  uint32_t source_index = 0;
  std::vector<PartitionRange> partitions;  // the snapshot
  uint32_t block_records = 256;
  uint32_t window_blocks = 16;
  bool shuffle = true;
  uint64_t seed = 0;
  uint32_t epochs = 1;  // passes in the first round; 0: forever (see SetEpochEnd)
  std::optional<uint32_t> bos, eos;
  topic::TopicConfig topic;
  // Shards (docs/loader.md, "Shards"): with shards > 1 this stream is shard
  // `shard` of the source: the blocks at positions shard, shard + shards,
  // shard + 2 * shards, ... of the endless sequence of epochs' block orders,
  // in windows of window_blocks of them. It never ends (epochs must be 0);
  // a position's epoch is 0 and its window counts this shard's windows.
  uint32_t shard = 0;
  uint32_t shards = 1;
  // With shards > 1, windows within passes (a finite sharded run,
  // docs/loader.md "Finite epochs"): the blocks `dealer` deals this shard in
  // pass e (pass_deal.h), in windows of window_blocks, the pass's last one
  // shorter; a position's epoch is the pass and its window counts the
  // shard's windows of that pass (a pass may give a shard none). The stream
  // still never ends.
  bool pass_windows = false;
  std::shared_ptr<PassDealer> dealer;
  // Follow (docs/loader.md, "Live topics"): instead of the snapshot's
  // epochs, one endless pass over the partitions as they grow, from the
  // snapshot's starts: position g of the sequence is block g / P of
  // partition g % P (P partitions), a complete block of block_records
  // offsets, waited for until the partition's end passes it, for at most
  // follow_timeout. Epochs must be 0; shards deal this sequence as above.
  bool follow = false;
  std::chrono::milliseconds follow_timeout{600000};
};

struct SourcePosition {
  uint64_t epoch = 0;
  uint64_t window = 0;
  uint32_t doc = 0;    // index in the window's shuffled order
  uint32_t token = 0;  // tokens of that document already consumed (BOS counted)
  friend bool operator==(const SourcePosition&, const SourcePosition&) = default;
};

// What a stream has put into rows in one epoch of its source: tokens (BOS/
// EOS added by the loader included, a pack=false row's truncated tail not)
// and documents begun (whose first token went into a row). The epoch is the
// pass over the source the document's block belongs to (sharded: the pass of
// the endless sequence; following: 0).
struct EpochTally {
  uint64_t epoch = 0;
  uint64_t tokens = 0;
  uint64_t documents = 0;
  friend bool operator==(const EpochTally&, const EpochTally&) = default;
};

class SourceStream {
 public:
  static Result<std::unique_ptr<SourceStream>> Open(SourceConfig config);
  ~SourceStream();

  // Goes to `p`; the window is read on the next Ready().
  void Seek(const SourcePosition& p);
  // The stream ends at the start of epoch `end` (0: never), unless `repeat`
  // (when set) says, at that point, that it should go on into further
  // epochs: the loader lets a source that finished its passes be read
  // again while another source has not finished its own.
  void SetEpochEnd(uint64_t end) { epoch_end_ = end; }
  uint64_t epoch_end() const { return epoch_end_; }
  void SetRepeatGate(std::function<bool()> repeat) { repeat_ = std::move(repeat); }
  // Sharded: windows past (epoch, window) (this shard's) are not read
  // ahead, only when needed: a finite run's last window in its round
  // (sharded_end.h). UINT64_MAX: read ahead always.
  void SetReadAheadEnd(uint64_t epoch, uint64_t window) { read_ahead_end_ = {epoch, window}; }
  // Lengths only (replay counting steps past, step_replayer.h): windows
  // are then made from the source's token index (token_index.h) instead of
  // its records: every document's length, partition and offset, and no
  // token (TokenAt and CopyTokens must not be called). The order, the
  // position and the counts are those of the records' windows. Where the
  // transport keeps no index (Kafka), where the index does not cover the
  // snapshot (a topic written before it; `tokenfeed index` builds it), or
  // the stream follows a live topic, the records are read as always.
  // Switching reads the current window again, in the new way, at the same
  // position. An index window that fails (a damaged index) leaves the index
  // for good: the window and the rest are read from the records.
  void SetLengthsOnly(bool on);
  // Makes the current document available, reading windows and starting
  // epochs as needed. false: the last epoch is done. Errors name the URI,
  // partition and offset; a source whose records hold no token at all is
  // an error, not an endless search.
  Result<bool> Ready();

  // The current document (after Ready() returned true): its length with BOS/
  // EOS, and its token i.
  uint32_t length() const { return cur_len_; }
  uint32_t token_offset() const { return pos_.token; }
  uint32_t TokenAt(uint32_t i) const;
  template <typename T>
  void CopyTokens(uint32_t from, uint32_t n, T* out) const;
  // Consumes n tokens of the current document (n <= what is left) into a
  // row, counting them (consumed()); at its end, moves to the next document.
  void Advance(uint32_t n);
  // Moves past the rest of the current document, which goes into no row (a
  // pack=false row's truncated tail): not counted.
  void DropRest();

  // Per epoch, in increasing order: what Advance consumed so far, from the
  // counts given to SetConsumed on (a state's, or none). Saved and restored
  // with the position.
  const std::vector<EpochTally>& consumed() const { return consumed_; }
  void SetConsumed(std::vector<EpochTally> consumed) { consumed_ = std::move(consumed); }

  // The record the current document is (after Ready() returned true): its
  // partition and offset, and how many token ids it stores (length() adds
  // the configured BOS/EOS). What replay (replay.h) names a row's pieces by.
  struct RecordKey {
    uint32_t partition = 0;
    uint64_t offset = 0;
    uint32_t stored = 0;
  };
  RecordKey record() const { return {cur_->partition, cur_->offset, cur_->count}; }

  // What `seen` (seen.h) names a position's consumed documents by, from
  // the code that reads: the blocks of window (epoch, window) of this stream
  // (its shard's, when sharded), and its records in the order the stream
  // visits them (the window is read for it, apart from the stream's own).
  // Call them on a stream that is not being read.
  std::vector<Block> WindowBlocks(uint64_t epoch, uint64_t window);
  Result<std::vector<RecordKey>> WindowVisitOrder(uint64_t epoch, uint64_t window);
  // Windows in an epoch (UINT64_MAX: sharded or following, one endless sequence).
  uint64_t windows_per_epoch() const { return windows_per_epoch_; }
  // Windows in `epoch`: windows_per_epoch(), or with pass_windows this
  // shard's windows of that pass.
  uint64_t WindowsIn(uint64_t epoch) const;

  const SourcePosition& position() const { return pos_; }
  const SourceConfig& config() const { return config_; }
  // The window in use and the one being read, as measured when its reading
  // began or was joined (reading it now would race its reader).
  uint64_t buffered_bytes() const { return cur_window_.capacity_bytes() + next_window_bytes_; }
  // Per partition: records from the end of the last block read to the
  // topic's end (as last checked, at a window load).
  std::vector<uint64_t> Lag() const;
  // Records read from the topic, and their bytes, so far: every window read
  // whole, the one read ahead included. Any thread.
  uint64_t records_read() const { return records_read_.load(std::memory_order_relaxed); }
  // Returns once the window being read ahead, if any, is read (and counted
  // in records_read()). Owner's thread.
  void WaitForReadAhead() { JoinPrefetch(); }
  uint64_t bytes_read() const { return bytes_read_.load(std::memory_order_relaxed); }
  // Following: for each document finished since the last call (placed
  // whole in the steps built so far), the seconds from its record's append
  // time to then, appended to *out. Prefetch thread only.
  void TakeFreshness(std::vector<double>* out) {
    out->insert(out->end(), freshness_.begin(), freshness_.end());
    freshness_.clear();
  }
  // Following: per partition, the freshness of the last document of it
  // finished (as above), or -1 before any. Prefetch thread only.
  const std::vector<double>& PartitionFreshness() const { return partition_freshness_; }
  // Following: time spent waiting for records not yet appended, and whether
  // a reader waits now. Any thread.
  double append_wait_seconds() const { return append_wait_us_.load(std::memory_order_relaxed) / 1e6; }
  bool waiting_for_appends() const { return waiting_.load(std::memory_order_relaxed) > 0; }

 private:
  struct Doc {
    const uint8_t* ids;  // into one of the window's arenas
    uint32_t count;      // stored ids
    uint8_t width;       // 2 or 4
    int64_t append_ms;   // the record's append time (-1: unknown)
    uint32_t partition;  // where the record is
    uint64_t offset;
    uint64_t epoch;      // the pass its block belongs to (EpochTally)
  };
  // Where a partition's reader put a document: an offset into the
  // partition's arena, which may still grow while it reads, or the record's
  // own bytes where their owner keeps them readable.
  struct StoredDoc {
    size_t ids_at;
    const uint8_t* direct;  // null: in the arena
    uint32_t count;
    uint8_t width;
    int64_t append_ms;
    uint64_t offset;  // the record's (the partition is the arena's)
  };
  // One window's records, in memory. Ids read in place from a memory-mapped
  // segment are not copied: the window holds the maps (owners) and the
  // documents point into them. Others are copied into an arena per
  // partition (a vector: moving the window keeps the addresses Doc points
  // to), which keeps its capacity from window to window, so such a window
  // costs one copy of its records and no reallocation once warm.
  struct Window {
    uint64_t epoch = UINT64_MAX, window = UINT64_MAX;
    std::vector<std::vector<char>> arenas;       // by partition
    std::vector<std::vector<StoredDoc>> stored;  // by partition, in reading order
    std::vector<std::vector<std::shared_ptr<const void>>> owners;  // by partition: of direct documents' bytes
    std::vector<Doc> docs;           // in stored order
    std::vector<uint32_t> order;     // shuffled visiting order
    std::vector<std::pair<uint32_t, uint64_t>> read_upto;  // partition, end of a block read
    uint64_t records_read = 0, bytes_read = 0;  // the records read for it, and their bytes
    bool lengths_only = false;  // made from the token index: its documents hold no ids
    Status status;
    uint64_t capacity_bytes() const {
      uint64_t n = 0;
      for (const auto& a : arenas) n += a.capacity();
      return n;
    }
  };

  explicit SourceStream(SourceConfig config);
  // Reads window (epoch, window) into *w (on the calling thread, with one
  // helper thread per partition that has blocks in it).
  void ReadWindow(uint64_t epoch, uint64_t window, Window* w);
  void ReadWindowOrThrow(uint64_t epoch, uint64_t window, Window* w);
  // One epoch's block order and, per block, where the run of adjacent
  // blocks that one cursor reads after it without a seek ends (across
  // windows: unshuffled, a whole partition is one run). The cursor is told
  // that end, so that a cursor that fetches ahead stops there and nowhere else.
  struct EpochPlan {
    std::vector<uint32_t> order;     // block indices in visiting order
    std::vector<uint64_t> read_end;  // by block index
  };
  // A block as a window reads it: where the cursor may stop fetching.
  struct BlockRead {
    Block block;
    uint64_t read_end = 0;  // the end of the run of adjacent blocks it starts or continues
    uint64_t epoch = 0;     // the pass of the source it belongs to (EpochTally)
  };
  // Appends the blocks' documents to w->arenas[partition] and
  // w->stored[partition], where each block ends to *read_upto, and how many
  // documents each block held to *block_docs (fewer than its offsets where
  // some hold no record: a Kafka topic written in transactions).
  Status ReadBlocks(uint32_t partition, const std::vector<BlockRead>& blocks, Window* w,
                    std::vector<std::pair<uint32_t, uint64_t>>* read_upto, std::vector<uint32_t>* block_docs,
                    uint64_t* bytes_read);
  // Lengths only: as ReadBlocks, from the token index; *records_read and
  // *bytes_read count what the index lacked and was read instead.
  Status CountBlocks(uint32_t partition, const std::vector<BlockRead>& blocks, Window* w,
                     std::vector<std::pair<uint32_t, uint64_t>>* read_upto, std::vector<uint32_t>* block_docs,
                     uint64_t* records_read, uint64_t* bytes_read);
  const EpochPlan& Plan(uint64_t epoch);
  // The blocks of a window in the order they are read.
  std::vector<uint32_t> WindowReadingOrder(const std::vector<uint32_t>& order, uint64_t window) const;
  std::vector<BlockRead> WindowReads(uint64_t epoch, uint64_t window);
  // Sorts a window's blocks into reading order (shuffled: storage order) and
  // gives adjacent ones of a partition one read end.
  std::vector<BlockRead> ChainRuns(std::vector<BlockRead> reads) const;
  // Following: the window's blocks of the growing partitions.
  std::vector<BlockRead> FollowWindowReads(uint64_t window) const;
  // Following: returns once the partition's end has passed `block`, or
  // TimedOut after follow_timeout, naming the partition and the offset.
  Status WaitForBlock(topic::PartitionCursor& cursor, const Block& block);
  // This shard's window: its blocks of the endless sequence of epochs.
  std::vector<BlockRead> ShardWindowReads(uint64_t window);
  // With pass_windows: a window of this shard's blocks of pass `epoch`.
  std::vector<BlockRead> ShardPassWindowReads(uint64_t epoch, uint64_t window);
  bool sharded() const { return config_.shards > 1; }
  // The topic still has the snapshot's partitions and offsets (embedded log).
  Status CheckSnapshotStillHolds();
  Status LoadWindow();
  void StartPrefetch();
  void JoinPrefetch();
  void SelectDoc();
  // The current document is done (whole or its rest dropped): the next one.
  void FinishDoc();

  SourceConfig config_;
  std::vector<Block> blocks_;
  uint64_t windows_per_epoch_ = 0;
  std::map<uint64_t, EpochPlan> epoch_plans_;  // at most two epochs
  std::vector<std::unique_ptr<topic::PartitionCursor>> cursors_;
  SourcePosition pos_;
  uint64_t epoch_end_ = 0;
  std::pair<uint64_t, uint64_t> read_ahead_end_{UINT64_MAX, UINT64_MAX};  // epoch, window
  mutable std::pair<uint64_t, uint64_t> windows_in_{UINT64_MAX, 0};  // pass_windows: epoch, its windows (owner's thread)
  std::function<bool()> repeat_;
  bool loaded_ = false;  // cur_window_ is pos_'s window
  bool cheap_snapshot_check_ = false;  // topic::TransportHints of the source's URI
  // Whether windows can be made from the token index: the transport keeps
  // one, the stream does not follow, and (asked once, at the first
  // SetLengthsOnly(true)) it covers every partition of the snapshot.
  std::optional<bool> index_covers_;
  // Each partition's token index, opened by the check above and kept for
  // the windows made from it (then used only by the thread reading
  // partition p).
  std::vector<std::unique_ptr<topic::TokenIndexReader>> index_readers_;
  bool lengths_only_ = false;  // SetLengthsOnly; read by a window's reader, set with none running
  Window cur_window_, next_window_;
  std::thread prefetch_;
  uint64_t next_window_bytes_ = 0;  // next_window_'s size when last safe to measure
  const Doc* cur_ = nullptr;
  uint32_t cur_len_ = 0;
  std::atomic<uint64_t> records_read_{0}, bytes_read_{0};  // added to by the thread that read a window
  std::atomic<uint64_t> append_wait_us_{0};
  std::atomic<int> waiting_{0};  // readers waiting for appends now
  std::vector<EpochTally> consumed_;
  std::vector<double> partition_freshness_;  // following: by partition, -1 before any
  std::vector<double> freshness_;  // following: seconds, documents finished since TakeFreshness
  std::vector<uint64_t> read_upto_;   // per partition: end of the last block read
  std::vector<uint64_t> topic_end_;   // per partition: the topic's end when last checked
};

template <typename T>
void SourceStream::CopyTokens(uint32_t from, uint32_t n, T* out) const {
  // HOT PATH: widening copy of stored ids (u16 or u32, little-endian), with
  // the BOS and EOS ends handled outside the loop so it vectorizes.
  const uint32_t bos = config_.bos ? 1 : 0;
  const uint8_t* base = cur_->ids;
  uint32_t i = from, k = 0;
  if (bos && i == 0 && k < n) {
    out[k++] = static_cast<T>(*config_.bos);
    ++i;
  }
  const uint32_t stored_end = cur_->count + bos;  // ids occupy [bos, stored_end)
  const uint32_t run = std::min(n - k, stored_end > i ? stored_end - i : 0u);
  // size_t indices and restrict: with 32-bit unsigned indices (which may
  // wrap) or possible aliasing GCC copies one id per iteration.
  T* __restrict dst = out + k;
  const size_t count = run;
  if (cur_->width == 2) {
    const uint8_t* __restrict src = base + 2 * size_t{i - bos};
    for (size_t j = 0; j < count; ++j) {
      uint16_t v;
      __builtin_memcpy(&v, src + 2 * j, 2);
      dst[j] = static_cast<T>(v);
    }
  } else {
    const uint8_t* __restrict src = base + 4 * size_t{i - bos};
    for (size_t j = 0; j < count; ++j) {
      uint32_t v;
      __builtin_memcpy(&v, src + 4 * j, 4);
      dst[j] = static_cast<T>(v);
    }
  }
  k += run;
  if (k < n) out[k] = static_cast<T>(*config_.eos);  // only EOS can follow the ids
}

}  // namespace tokenfeed::loader
