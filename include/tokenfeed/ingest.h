// The ingest: corpus files -> documents -> cleaning and deduplication ->
// tokens -> token records in a topic (tokenfeed ingest). It reads on one
// thread, tokenizes on the others and writes partitions in document order, so
// the records of every partition are the same whatever the thread count.
// Memory is bounded by the in-flight chunks whatever the input size.
// Resumable: every record carries its source position and document sequence
// number, so a run started again with the same settings reads where each
// partition's last record says and adds exactly what is missing.
// RunIngest blocks until done; another thread stops it by setting *stop (the
// topic is then left consistent and resumable). The command (tokenfeed
// ingest) and Python's tokenfeed.ingest both call it.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "tokenfeed/clean_options.h"
#include "tokenfeed/cleaning_stats.h"
#include "tokenfeed/document_options.h"
#include "tokenfeed/reader_options.h"
#include "tokenfeed/shard_spec.h"
#include "tokenfeed/status.h"
#include "tokenfeed/topic.h"

// The Arrow C stream interface (a C ABI: arrow.apache.org/docs/format/
// CStreamInterface.html), defined in src/text/arrow_c_stream.h; callers here
// only pass a pointer through.
struct ArrowArrayStream;

namespace tokenfeed::ingest {

enum class PartitionBy { kRoundRobin, kHash };
enum class ProgressMode { kAuto, kAlways, kNever };

struct IngestOptions {
  std::string tokenizer_path;
  std::vector<std::string> inputs;
  std::string to_uri;
  int threads = 0;  // 0: every CPU this process may use (affinity, cgroup quota)
  // BOS/EOS around each document, special-token text (plain text unless
  // kept); the reader applies the UTF-8 policy before this stage.
  document::DocumentOptions document;
  PartitionBy partition_by = PartitionBy::kRoundRobin;
  text::ShardSpec shard;
  text::ReaderOptions reader;
  text::CleanOptions clean;
  bool dedup = true;
  std::string rejects_path;     // JSONL, one line per rejected document or unreadable file
  bool strict = false;          // stop at the first rejected document or unreadable file
  std::string stats_json_path;
  size_t batch_bytes = 1 << 20;  // records are written to a partition in batches of about this size
  ProgressMode progress = ProgressMode::kAuto;
  // Partitions, creation, fsync policy, Kafka settings. Here partitions is 0
  // unless set: an existing topic's count, and 1 for a new topic; another
  // number must match an existing topic.
  topic::WriterConfig writer = [] {
    topic::WriterConfig w;
    w.partitions = 0;
    return w;
  }();
};

// What a run did. Every document read is accounted for once:
// documents_read = documents_written + documents_skipped + dropped (by reason)
// when the run ends normally (or is stopped by --strict).
struct IngestStats {
  text::CleaningStats cleaning;      // documents offered, kept, dropped by reason
  uint64_t documents_read = 0;       // found by the reader, reader rejects included
  uint64_t documents_written = 0;    // records written by this run
  uint64_t documents_skipped = 0;    // already in the topic from an earlier run
  uint64_t tokens_written = 0;
  uint64_t text_bytes = 0;           // of the documents tokenized
  uint64_t record_bytes = 0;         // written by this run
  uint64_t files = 0;
  std::vector<std::string> incomplete_files;  // could not be read to the end (message each)
  // What opening the topic's writers repaired (a torn tail cut, damage set
  // aside on request): TopicWriter::RecoveryNotes, a line per partition.
  std::vector<std::string> recovered;
  double seconds = 0;
  bool resumed = false;
  uint64_t resumed_from_sequence = 0;
  // Non-empty when --strict stopped the run at a dropped document or an
  // unreadable file: what and where. The documents before it were written.
  std::string stopped_by_strict;
  // One JSON object; `failed` (when not OK) is recorded as "error".
  std::string ToJson(const Status& failed = Status::OK()) const;
  std::string Summary() const;  // a few lines for people
};

// Runs the ingest. An input that is not text (text/binary_input.h) stops
// it before the topic is opened, naming every such file. Errors stop it with
// a Status naming the file, line or partition; the topic then holds a consistent prefix of every partition and
// the same command resumes it. Returns the stats also when some input files
// were incomplete (stats.incomplete_files) or --strict stopped the run
// (stats.stopped_by_strict): the caller reports those. --stats-json is
// written however the run ends once it has started.
Result<IngestStats> RunIngest(const IngestOptions& options, const std::atomic<bool>* stop = nullptr);

// The source name an Arrow C stream's documents carry in records and rejects
// (with the row: line = row index + 1, byte offset = row index).
inline constexpr const char* kArrowStreamSource = "arrow-stream";

// The same ingest over the rows of an Arrow C stream (record batches another
// library in this process hands over: pyarrow, polars, DuckDB) instead of
// options.inputs, which must be empty: one document per row, the text in the
// string column options.reader.json_field, read in place from the batches
// (no copy of the texts before cleaning). The stream is taken over at once
// (stream->release is null on return, whatever happens) and released, with
// every batch, exactly once before this returns. Its schema is read here (a
// missing or non-string column, like a bad reader option, is
// InvalidArgument, before the topic is opened; the column's name follows the
// stream's rules, dots anywhere, not the JSON field's; options.reader.format
// and text_mode do not apply); its batches are read on the ingest's reader thread, so callbacks
// that need a lock the caller holds (Python's GIL) must take it themselves, and
// the caller must not hold it while waiting. A batch the producer fails to give
// or a malformed one ends the reading like a truncated file
// (stats.incomplete_files; what came before is written). A stream cannot be
// read again, so a run cannot be resumed: its fingerprint is new each time
// (a nonce from the clocks, the process and a counter), and a topic that
// already holds records is refused as another ingest's; the messages of a
// stopped or refused run say so.
// options.shard must be 0/1.
Result<IngestStats> RunIngestFromArrowStream(const IngestOptions& options, ArrowArrayStream* stream,
                                             const std::atomic<bool>* stop = nullptr);

// Shuts down what reading inputs from object storage (s3://) started, if
// anything: Arrow's S3 client, which must not be left to static destructors
// (docs/ingest.md, "Object storage"). A program calls it once before it exits,
// after its last RunIngest (the command-line program and the Python module
// do); an s3:// input after it fails. Idempotent; loads nothing.
void ShutdownIngestInputs();

}  // namespace tokenfeed::ingest
