// tokenfeed::Loader: packed [batch_size, seq_len] training batches from one or
// more topics (log: or kafka://), prefetched by a background thread.
//
// The data order is a pure function of the sources, the seed and the
// options below -- never of the world size: documents are cut into one global
// stream of seq_len-token samples (shuffled by blocks of records and within
// windows of blocks, mixed across sources by weight), and global step k is
// samples [k*B*W, (k+1)*B*W), of which rank r takes the B starting at
// k*B*W + r*B. Every rank computes the whole stream (it reads every record's
// header, but copies only its own samples' tokens), so ranks always agree on
// where the data ends and stop at the same step without talking to each
// other, and a checkpoint taken at step k resumes exactly -- with the same or
// a different world size or batch size. With LoaderOptions::shards > 1 the
// stream is cut into shards instead and each rank reads only its own (an
// endless stream; see shards).
//
// Thread-safety: Next, LoadState and StartNextRound are called from one
// thread (the training loop); State, Metrics and MetricsPort from any (the
// metrics endpoint calls Metrics from its own thread). The prefetch thread
// is internal, and an error or exception in it reaches the caller as the
// Status of Next(). Destroying a Loader stops its threads.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenfeed/status.h"

namespace tokenfeed {

struct LoaderSource {
  std::string uri;      // log:DIR/TOPIC or kafka://HOST:PORT/TOPIC
  double weight = 1.0;  // share of samples (hence tokens) drawn from this source
};

struct LoaderOptions {
  std::vector<LoaderSource> sources;
  uint32_t seq_len = 2048;
  uint32_t batch_size = 8;
  uint32_t rank = 0;
  uint32_t world_size = 1;
  uint64_t seed = 0;
  bool shuffle = true;
  // Shuffling: the records of each partition are cut into blocks of
  // block_records; each epoch visits the blocks of all partitions in a new
  // random order, and shuffles the documents within each window of
  // window_blocks consecutive blocks. 0: by the source's transport, 1024
  // records for the embedded log and 4096 for Kafka (where each block's seek
  // restarts a fetch and decompresses a whole producer batch; larger blocks
  // read it about twice as fast, shuffling more coarsely).
  uint32_t block_records = 0;
  uint32_t window_blocks = 8;
  // 0: repeat forever, reshuffled each epoch. N: the stream ends when every
  // source has completed N passes. With several sources, one that completes
  // its N passes while another has not goes on into further (reshuffled)
  // passes, so the weights hold to the end; the source that ends the stream
  // is the last to complete N passes (LoaderMetrics::ended_source). The last
  // global step that can be filled is the last one.
  uint32_t epochs = 1;
  // 1: one stream, which every rank computes whole (it reads every record of
  // the sources; any world size). S > 1: the stream is S shards -- each
  // source's blocks dealt in turn to S sub-streams, each packed and mixed on
  // its own, global sample j taken from shard j % S -- and rank r reads only
  // the shards s with s % world_size == r, so all ranks together read each
  // record about once. world_size must divide S (the world sizes a run can
  // move between are the divisors of S), epochs N > 0 ends after the step by
  // which every shard has made its N passes -- found from the sources' token
  // index (token_index.h) without reading another rank's shards, so Kafka
  // sources, which keep none yet, need epochs 0 -- and State() holds
  // this rank's shards only: merge all ranks' states (MergeLoaderStates) to
  // restart with another world size. docs/loader.md, "Shards".
  uint32_t shards = 1;
  // false: the stream is built on the snapshot taken at start (records
  // appended later are not seen). true: a live topic -- one endless pass over
  // each source's partitions as they grow, from the snapshot's start offsets:
  // complete blocks of block_records offsets taken in a fixed order (block 0
  // of every partition, then block 1, ...), each window's records shuffled
  // by the seed, so the stream depends on the records alone, never on when
  // they arrived, and resumes exactly. A block not yet complete is waited
  // for, at most follow_timeout_ms, then the step fails with TimedOut naming
  // the partition (LoaderMetrics says while it waits). epochs must be 0.
  bool follow = false;
  uint32_t follow_timeout_ms = 600000;
  // true: documents are packed end to end. false: one document per row,
  // truncated to seq_len or padded with pad_id (attention_mask marks it).
  bool pack = true;
  std::optional<uint32_t> bos_id;  // put before each document (when the records lack it)
  std::optional<uint32_t> eos_id;  // put after each document
  uint32_t pad_id = 0;
  int64_t ignore_index = -100;     // the label where there is nothing to predict
  // true: a document's last token is trained to predict the next document's
  // first token (plain causal LM over the packed row); false: it gets
  // ignore_index (document-separated attention).
  bool cross_document_labels = false;
  bool int32_ids = false;          // input_ids/labels/position_ids as int32 instead of int64
  // The prefetch thread keeps ready batches and buffered records within this
  // many bytes (at least two batches and one window are always allowed).
  uint64_t memory_budget_bytes = uint64_t{256} << 20;
  uint32_t prefetch_batches = 4;
  // The topics' partitions and offsets the stream is built on, as State()
  // prints them ("snapshot"); empty: read from the topics now. Ranks of one
  // job must agree, so the Python layer passes rank 0's to everyone.
  std::string snapshot_json;
  // Kafka client properties (key=value), when a source is kafka://.
  std::vector<std::string> kafka_properties;
  // How long one Kafka step (connecting, metadata, a fetch) may wait for the
  // cluster before it fails.
  uint32_t kafka_timeout_ms = 30000;
  // Prometheus: with a port, the loader serves its metrics (Metrics(), in
  // the text exposition format, names in docs/metrics.md) at
  // http://metrics_address:metrics_port/metrics from a thread of its own,
  // for as long as it lives; 0 picks a free port (Loader::MetricsPort says
  // which). nullopt: no endpoint. One per rank: give each rank its own port
  // (e.g. a base plus the local rank), or 0. The address is an IPv4
  // address: the default, loopback, is reachable from this machine only;
  // 0.0.0.0 listens on every interface (for a scraper on another machine).
  std::optional<uint32_t> metrics_port;
  std::string metrics_address = "127.0.0.1";
};

// Checks every option against its limits; InvalidArgument names the option,
// its value and the limit. Loader::Create calls it; bindings call it to
// report bad options before touching any topic.
Status ValidateLoaderOptions(const LoaderOptions& options);

// The limits of the whole-number options that have limits of their own, the
// one table ValidateLoaderOptions checks. A binding whose integers are wider
// than the fields (Python) checks a value against it before narrowing it, so
// that a value of any size or sign is reported against the real range, in
// the words of LoaderOptionOutOfRange.
struct LoaderOptionRange {
  uint64_t lo = 0;
  uint64_t hi = 0;
};
// The range of option `name` (seq_len: 1 to 2^24, ...), or nullopt for an
// option whose only limit is its type (rank, seed, epochs, pad_id, ...).
std::optional<LoaderOptionRange> FindLoaderOptionRange(std::string_view name);
// InvalidArgument "<name> must be between <lo> and <hi>, not <value>", with
// `value` as written (a binding's value may fit no C++ integer).
Status LoaderOptionOutOfRange(std::string_view name, LoaderOptionRange range, std::string_view value);

// A vector whose resize() leaves new elements uninitialised: batch buffers
// are written in full right after, so zero-filling them would be wasted.
template <typename T>
struct UninitializedAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <typename U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
template <typename T>
using BatchBuffer = std::vector<T, UninitializedAllocator<T>>;

// One batch, owning its arrays (row-major [batch_size, seq_len] unless said).
// The three token arrays share one allocation, [3][batch_size][seq_len]:
// input_ids, labels, position_ids.
struct Batch {
  uint32_t batch_size = 0, seq_len = 0;
  bool int32 = false;
  BatchBuffer<int64_t> tokens64;  // when !int32
  BatchBuffer<int32_t> tokens32;  // when int32
  BatchBuffer<int32_t> document_ids;  // index of each token's document within its row
  std::vector<int32_t> cu_seqlens;    // document boundaries over the flattened batch, starting with 0
  int32_t max_seqlen = 0;             // the longest document piece in the batch
  BatchBuffer<int8_t> attention_mask;  // only when pack == false
  std::vector<uint32_t> source_of_row;  // index into LoaderOptions::sources
  uint64_t step = 0;                    // the global step this batch belongs to
  uint64_t tokens = 0;                  // tokens of this rank's rows that are not padding

  size_t cells() const { return size_t{batch_size} * seq_len; }
  std::span<int64_t> input_ids64() { return {tokens64.data(), cells()}; }
  std::span<int64_t> labels64() { return {tokens64.data() + cells(), cells()}; }
  std::span<int64_t> position_ids64() { return {tokens64.data() + 2 * cells(), cells()}; }
  std::span<int32_t> input_ids32() { return {tokens32.data(), cells()}; }
  std::span<int32_t> labels32() { return {tokens32.data() + cells(), cells()}; }
  std::span<int32_t> position_ids32() { return {tokens32.data() + 2 * cells(), cells()}; }
};

struct LoaderMetrics {
  uint64_t batches = 0;
  double wait_seconds_total = 0;   // time Next() blocked for the prefetch thread
  double last_wait_seconds = 0;
  // The waits of Next() that returned a batch, as a histogram: how many
  // took at most kWaitBucketBounds[i] seconds (cumulative, as Prometheus
  // has it), and the count of all of them (the +Inf bucket) in
  // wait_count. wait_seconds_total is their sum (with the end's wait).
  static constexpr std::array<double, 12> kWaitBucketBounds = {
      0.0001, 0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5};
  std::array<uint64_t, 12> wait_buckets{};
  uint64_t wait_count = 0;
  uint64_t tokens = 0;             // tokens of this rank's batches delivered (Batch::tokens)
  double tokens_per_second = 0;    // of batches delivered, since the first one
  uint32_t ready_batches = 0;      // prefetched and waiting
  uint32_t ready_capacity = 0;
  uint64_t buffered_bytes = 0;     // records and batches held by the prefetcher
  // Records read from the sources, and their bytes, so far (windows read
  // ahead included): what this rank costs the storage. Sharded
  // (LoaderOptions::shards), about 1/world_size of an unsharded rank's.
  uint64_t records_read = 0;
  uint64_t bytes_read = 0;
  // Following (LoaderOptions::follow): time the reading waited for records
  // not yet appended, and whether it waits now.
  double append_wait_seconds_total = 0;
  bool waiting_for_appends = false;
  // Following: freshness, the seconds from a record's append time (as the
  // transport stamps it) to the building of the step that finishes its
  // document, over the last 4096 documents of the steps built (all ranks'
  // rows when unsharded, this rank's shards' when sharded); 0 before any.
  double freshness_p50_seconds = 0;
  double freshness_p99_seconds = 0;
  struct PartitionLag {
    std::string uri;
    uint32_t partition = 0;
    uint64_t records_behind = 0;  // from the last block read to the topic's end (as last checked)
    // Following: the freshness (as above) of the last document of this
    // partition finished; -1 before any, or when not following.
    double freshness_seconds = -1;
  };
  std::vector<PartitionLag> partition_lag;
  // Per source: passes completed in the current round (see StartNextRound),
  // as of the last batch prefetched.
  std::vector<uint64_t> epochs_completed;
  // Once Next() has returned the end: the source that ran out (index into
  // LoaderOptions::sources); with epochs=N, the last to complete N passes.
  std::optional<uint32_t> ended_source;
  // Token accounting, as of the last batch Next() returned (what State()
  // holds): per source and epoch, the tokens the stream put into rows (BOS/
  // EOS added by the loader included, padding and a pack=false row's
  // truncated tail not) and the documents begun (whose first token went
  // into a row). Unsharded: the whole stream, every rank's rows (the same
  // on every rank); sharded: this rank's shards (sum the ranks). Counted
  // from global sample consumed_from_sample: 0, unless the run resumed from
  // a state written without the counts. docs/loader.md, "Token accounting".
  struct SourceConsumption {
    uint32_t source = 0;  // index into LoaderOptions::sources
    uint64_t epoch = 0;
    uint64_t tokens = 0;
    uint64_t documents = 0;
  };
  std::vector<SourceConsumption> consumed;  // by source, then epoch
  uint64_t consumed_from_sample = 0;
};

class Loader {
 public:
  // InvalidArgument for bad options (naming the option and the limit);
  // errors from opening the topics, naming the URI.
  static Result<std::unique_ptr<Loader>> Create(const LoaderOptions& options);
  virtual ~Loader() = default;

  // The next batch of this rank; nullopt at the end of the data (the same
  // step on every rank). Errors (a corrupt record, a deleted topic) name the
  // URI, partition and offset.
  virtual Result<std::optional<Batch>> Next() = 0;
  // The position after the last batch Next() returned, as JSON (a few KB):
  // what a checkpoint saves. Unsharded it does not depend on rank or world
  // size; sharded it holds this rank's shards (see shards).
  virtual std::string State() const = 0;
  // Restarts the stream at a State(). InvalidArgument when it comes from
  // other sources or settings (seq_len, seed, ...), or the topics no longer
  // hold what it refers to (partitions added or removed, data deleted).
  // Names the first setting that differs when the state says which.
  virtual Status LoadState(const std::string& state_json) = 0;
  // After Next() returned the end (epochs=N): starts a new round of N
  // passes over every source, each source from the start of a pass it has
  // not made before (so reshuffled). InvalidArgument when the stream has not
  // ended or never ends (epochs=0). The state records where the round
  // began, so a checkpoint taken in any round resumes exactly.
  virtual Status StartNextRound() = 0;
  virtual LoaderMetrics Metrics() const = 0;
  // The port of the metrics endpoint (LoaderOptions::metrics_port; the one
  // chosen when that was 0), or 0 when there is none.
  virtual uint16_t MetricsPort() const = 0;
  // The snapshot this loader uses (to hand rank 0's to the other ranks).
  virtual std::string Snapshot() const = 0;
};

// The states that the ranks of a sharded run (shards > 1) saved at one step,
// merged into one that holds every shard, which any rank of any world size
// dividing the shard count can load. InvalidArgument when they are not of
// one run and step, or a shard is missing.
Result<std::string> MergeLoaderStates(const std::vector<std::string>& states_json);

// The current partitions and offsets of these sources, as a snapshot.
Result<std::string> TakeSnapshot(const std::vector<LoaderSource>& sources,
                                 const std::vector<std::string>& kafka_properties = {});

}  // namespace tokenfeed
