// The ingest pipeline (ingest.h): one reader thread, tokenizing workers, and
// the calling thread writing partitions in document order.
//
//   reader:  documents -> clean -> dedup -> partition -> chunks (bounded queue)
//   workers: chunk -> token ids
//   writer:  chunks in order -> records -> per-partition batches -> topic
//
// Everything that decides what a record holds or where it goes happens on the
// reader thread in document order, so the result does not depend on threads.
#include "tokenfeed/ingest.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "base/json_writer.h"
#include "base/thread_guard.h"
#include "base/usable_cpus.h"
#include "document/document_encoder.h"
#include "ingest/progress_reporter.h"
#include "ingest/record_attributes.h"
#include "ingest/resume_plan.h"
#include "text/arrow_stream_text_column.h"
#include "text/binary_input.h"
#include "text/cleaner.h"
#include "text/content_dedup.h"
#include "text/document_reader.h"
#include "text/object_store.h"
#include "text/source_set.h"
#include "tokenfeed/record.h"
#include "tokenfeed/tokenizer.h"

namespace tokenfeed::ingest {
namespace {

using Clock = std::chrono::steady_clock;

// A slice of documents that travels through the pipeline together.
struct Chunk {
  uint64_t index = 0;
  std::string text;
  struct Doc {
    uint32_t text_begin, text_len;
    uint32_t file_index;
    uint32_t partition_slot;
    uint64_t line, byte_offset, sequence;
  };
  std::vector<Doc> docs;
  std::vector<uint32_t> ids;      // every document's ids, one after the other
  std::vector<uint32_t> id_ends;  // end of each document's ids in `ids`
  // The first document the tokenizer failed on (a regex search past its
  // limits), with its file and line; the writer stops the run there.
  Status error;
};

constexpr size_t kChunkTextBytes = 4 << 20;
constexpr size_t kChunkDocs = 4096;

// Chunks waiting for a worker, and chunks done, handed to the writer in order.
class ChunkPipe {
 public:
  explicit ChunkPipe(size_t capacity) : capacity_(capacity) {}

  // Blocks while `capacity` chunks are in flight (backpressure on the reader).
  bool PushWork(std::unique_ptr<Chunk> c) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return in_flight_ < capacity_ || cancelled_; });
    if (cancelled_) return false;
    ++in_flight_;
    work_.push_back(std::move(c));
    cv_.notify_all();
    return true;
  }
  std::unique_ptr<Chunk> PopWork() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !work_.empty() || closed_ || cancelled_; });
    if (work_.empty() || cancelled_) return nullptr;
    auto c = std::move(work_.front());
    work_.pop_front();
    return c;
  }
  void PushDone(std::unique_ptr<Chunk> c) {
    std::lock_guard lock(mu_);
    done_.emplace(c->index, std::move(c));
    cv_.notify_all();
  }
  // The chunk with the next index, or null once the reader closed the pipe
  // and everything was handed over.
  std::unique_ptr<Chunk> PopDoneInOrder() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] {
      return cancelled_ || done_.count(next_) || (closed_ && total_ == next_);
    });
    if (cancelled_) return nullptr;
    auto it = done_.find(next_);
    if (it == done_.end()) return nullptr;
    auto c = std::move(it->second);
    done_.erase(it);
    ++next_;
    --in_flight_;
    cv_.notify_all();
    return c;
  }
  void Close(uint64_t total_chunks) {
    std::lock_guard lock(mu_);
    closed_ = true;
    total_ = total_chunks;
    cv_.notify_all();
  }
  void Cancel() {
    std::lock_guard lock(mu_);
    cancelled_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  size_t capacity_;
  size_t in_flight_ = 0;
  std::deque<std::unique_ptr<Chunk>> work_;
  std::map<uint64_t, std::unique_ptr<Chunk>> done_;
  uint64_t next_ = 0;
  uint64_t total_ = 0;
  bool closed_ = false;
  bool cancelled_ = false;
};

std::string Hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

Result<uint64_t> HashFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Status::FromErrno(errno, "cannot open tokenizer file", path);
  XXH3_state_t* st = XXH3_createState();
  XXH3_64bits_reset(st);
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) XXH3_64bits_update(st, buf, n);
  uint64_t h = XXH3_64bits_digest(st);
  XXH3_freeState(st);
  std::fclose(f);
  return h;
}

// Everything that changes which records the run writes, and where.
// `source_ids`: the inputs as resuming compares them (ComparablePath: the
// same files however they were named), or a stream's name with a nonce.
std::string Fingerprint(const IngestOptions& o, uint64_t tokenizer_hash, const std::vector<std::string>& source_ids,
                        uint32_t partitions) {
  std::string s = "tokenfeed-ingest-v1\n" + Hex64(tokenizer_hash) + "\n";
  for (const auto& id : source_ids) s += id + "\n";
  auto add = [&](auto v) { s += std::to_string(v) + ","; };
  add(o.document.add_bos);
  add(o.document.add_eos);
  add(o.document.keep_special_tokens);
  add(static_cast<int>(o.partition_by));
  add(o.shard.index);
  add(o.shard.count);
  add(partitions);
  add(static_cast<int>(o.reader.format));
  add(static_cast<int>(o.reader.text_mode));
  s += o.reader.json_field + ",";
  add(static_cast<int>(o.reader.utf8));
  add(o.reader.max_document_bytes);
  add(o.clean.drop_controls);
  add(o.clean.normalize_newlines);
  add(o.clean.trim);
  add(o.clean.min_chars);
  add(o.clean.max_chars);
  add(o.clean.min_bytes);
  add(o.clean.max_bytes);
  add(o.dedup);
  return Hex64(XXH3_64bits(s.data(), s.size()));
}

// A value no other stream run shares: the clocks, the process id, a stack
// address and a per-process counter, hashed. std::random_device is not used
// because it may throw (no entropy source), which on the run thread would end
// the process; uniqueness, not unpredictability, is what the fingerprint needs.
uint64_t RunNonce() {
  static std::atomic<uint64_t> runs{0};
  const int local = 0;
  const uint64_t parts[] = {
      static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()),
      static_cast<uint64_t>(Clock::now().time_since_epoch().count()),
      static_cast<uint64_t>(::getpid()),
      static_cast<uint64_t>(reinterpret_cast<uintptr_t>(&local)),
      runs.fetch_add(1, std::memory_order_relaxed),
  };
  return XXH3_64bits(parts, sizeof(parts));
}

class Ingest {
 public:
  // `stream`: the documents come from this Arrow stream's column (already
  // open), not from options.inputs.
  Ingest(const IngestOptions& options, const std::atomic<bool>* stop,
         std::unique_ptr<text::ArrowStreamTextColumn> stream = nullptr)
      : o_(options), stop_(stop), stream_(std::move(stream)) {}

  Result<IngestStats> Run() {
    const auto started = Clock::now();
    std::vector<std::string> source_ids;
    if (stream_) {
      stream_source_ = true;
      sources_ = text::SourceSet::FromNames({kArrowStreamSource});
      record_paths_ = {kArrowStreamSource};
      // A stream is not read again, so nothing can show that a later call
      // gives the same rows: each run is its own (a topic holding another
      // run's records refuses it) rather than a resume that would skip rows.
      source_ids = {std::string(kArrowStreamSource) + " " + Hex64(RunNonce())};
    } else {
      TF_ASSIGN_OR_RETURN(sources_, text::SourceSet::Expand(o_.inputs, o_.shard));
      // Every input is looked at before anything else happens, so that a file
      // that is not text stops the run before a record (or the topic) exists.
      if (Status s = text::CheckTextInputs(sources_, o_.reader.format); !s.ok()) {
        return Status(s.code(), s.message() + "\nNothing was read or written.");
      }
      for (const auto& f : sources_.files()) {
        source_ids.push_back(ComparablePath(f.path));
        record_paths_.push_back(source_ids.back());
      }
    }
    TF_ASSIGN_OR_RETURN(cleaner_, text::Cleaner::Create(o_.clean));
    TF_ASSIGN_OR_RETURN(std::shared_ptr<const Tokenizer> tokenizer, Tokenizer::FromFile(o_.tokenizer_path));
    TF_ASSIGN_OR_RETURN(document::DocumentEncoder encoder,
                        document::DocumentEncoder::Create(std::move(tokenizer), o_.document, o_.tokenizer_path));
    encoder_.emplace(std::move(encoder));
    TF_ASSIGN_OR_RETURN(uint64_t tokenizer_hash, HashFile(o_.tokenizer_path));

    // Open the topic first: a wrong URI or an unwritable directory stops the
    // run before anything is read.
    topic::WriterConfig wc = o_.writer;
    TF_ASSIGN_OR_RETURN(auto probe_partitions, PartitionCount());
    wc.partitions = probe_partitions;
    std::vector<PartitionId> owned;
    for (uint32_t p = 0; p < probe_partitions; ++p) {
      if (p % o_.shard.count == o_.shard.index) owned.emplace_back(p);
    }
    if (owned.empty()) {
      return Status::InvalidArgument("--shard " + o_.shard.ToString() + " owns no partition of " +
                                     std::to_string(probe_partitions) + ": use at least as many partitions as shards");
    }
    TF_ASSIGN_OR_RETURN(writer_, topic::OpenTopicWriter(o_.to_uri, wc, owned));
    stats_.recovered = writer_->RecoveryNotes();
    owned_ = owned;
    fingerprint_ = Fingerprint(o_, tokenizer_hash, source_ids, writer_->partition_count());
    TF_ASSIGN_OR_RETURN(plan_, PlanResume(*writer_, owned_, {fingerprint_}, sources_, stream_source_));
    stats_.resumed = !plan_.fresh;
    stats_.files = sources_.files().size();

    if (!o_.rejects_path.empty()) {
      rejects_ = std::fopen(o_.rejects_path.c_str(), "wb");
      if (!rejects_) return Status::FromErrno(errno, "cannot create the rejects file", o_.rejects_path);
    }
    uint64_t total_bytes = 0;  // a stream's size is not known ahead
    for (const auto& f : sources_.files()) total_bytes += f.size_bytes;
    progress_ = std::make_unique<ProgressReporter>(o_.progress, total_bytes);

    unsigned threads = o_.threads > 0 ? static_cast<unsigned>(o_.threads)
                                      : UsableCpuCount();
    pipe_ = std::make_unique<ChunkPipe>(2 * threads + 2);
    // Nothing may leave a thread (an exception there ends the process): what a
    // worker or the reader throws (out of memory) becomes the run's error and
    // cancels the pipe, so that no other thread waits for it forever.
    auto work = [this] {
      Status s = RunGuarded("tokenizing", [this] {
        Work();
        return Status::OK();
      });
      if (!s.ok()) {
        {
          std::lock_guard lock(worker_mu_);
          if (worker_status_.ok()) worker_status_ = s;
        }
        pipe_->Cancel();
      }
    };
    std::vector<std::thread> workers;
    std::thread reader;
    Status start_status;
    try {
      for (unsigned t = 0; t < threads; ++t) workers.emplace_back(work);
    } catch (const std::system_error& e) {
      // Fewer workers than asked: enough while at least one runs.
      if (workers.empty()) start_status = Status::ResourceExhausted(std::string("cannot start a thread: ") + e.what());
    }
    if (start_status.ok()) {
      try {
        reader = std::thread([this] {
          reader_status_ = RunGuarded("reading the inputs", [this] { return Read(); });
          if (!reader_status_.ok()) pipe_->Cancel();
        });
      } catch (const std::system_error& e) {
        start_status = Status::ResourceExhausted(std::string("cannot start a thread: ") + e.what());
      }
    }

    Status write_status = start_status.ok() ? RunGuarded("writing", [this] { return Write(); }) : start_status;
    if (!write_status.ok()) pipe_->Cancel();
    if (reader.joinable()) reader.join();
    pipe_->Cancel();
    for (auto& w : workers) w.join();
    // A cancelled pipe ends the writer early without an error of its own: the
    // failure is the worker's or the reader's.
    if (write_status.ok() && !worker_status_.ok()) write_status = worker_status_;
    Status close_status = writer_->Close();
    progress_->Finish();
    if (rejects_) {
      if (std::fclose(rejects_) != 0 && rejects_status_.ok()) {
        rejects_status_ = Status::FromErrno(errno, "cannot write the rejects file", o_.rejects_path);
      }
      rejects_ = nullptr;
    }

    // The reader's counters are final once it has been joined.
    stats_.cleaning = cleaning_;
    stats_.documents_read = documents_read_;
    stats_.documents_skipped = skipped_;
    stats_.seconds = std::chrono::duration<double>(Clock::now() - started).count();
    Status failed = !write_status.ok()    ? write_status
                    : !reader_status_.ok() ? reader_status_
                    : !close_status.ok()   ? close_status
                                           : rejects_status_;
    // Written however the run ended, so that a stopped run is accounted for.
    if (!o_.stats_json_path.empty()) {
      std::ofstream out(o_.stats_json_path);
      out << stats_.ToJson(failed) << "\n";
      out.flush();
      if (!out && failed.ok()) return Status::IoError("cannot write --stats-json file '" + o_.stats_json_path + "'");
    }
    TF_RETURN_IF_ERROR(failed);
    return stats_;
  }

 private:
  Result<uint32_t> PartitionCount() {
    auto existing = topic::DescribeTopic(o_.to_uri, o_.writer);
    if (existing.ok()) {
      uint32_t have = static_cast<uint32_t>(existing->partitions.size());
      if (o_.writer.partitions != 0 && o_.writer.partitions != have) {
        return Status::InvalidArgument(o_.to_uri + " has " + std::to_string(have) + " partitions, not the " +
                                       std::to_string(o_.writer.partitions) + " --partitions asks for");
      }
      return have;
    }
    if (!existing.status().IsNotFound()) return existing.status();
    return o_.writer.partitions == 0 ? 1u : o_.writer.partitions;
  }

  // ---- reader thread
  Status Read() {
    Status s = ReadInner();
    pipe_->Close(chunks_made_);
    return s;
  }

  // Reads until the end, a stop or an error; the documents taken so far are
  // always handed on, so that what was read is written (or accounted for).
  Status ReadInner() {
    auto chunk = NewChunk();
    Status s = ReadInto(chunk);
    if (!chunk->docs.empty()) Push(std::move(chunk));
    return s;
  }

  Status ReadInto(std::unique_ptr<Chunk>& chunk) {
    // Deduplication needs every earlier document's hash, so with it the run
    // rereads the inputs from the start (tokenizing only what is missing);
    // without it, reading starts at the earliest partition's last document.
    text::ResumePoint start;
    if (!plan_.fresh && !o_.dedup && plan_.start) start = *plan_.start;
    stats_.resumed_from_sequence = plan_.start ? plan_.start_sequence : 0;
    TF_ASSIGN_OR_RETURN(auto reader, stream_ ? text::DocumentReader::OpenColumn(std::move(stream_), kArrowStreamSource,
                                                                                 o_.reader)
                                             : text::DocumentReader::Open(sources_, o_.reader, start));
    text::DedupSet dedup;
    std::string scratch;
    while (true) {
      if (stop_ && stop_->load()) {
        return Status::Aborted(stream_source_
                                   ? "stopped before the end of the Arrow stream; a stream cannot be resumed: "
                                     "write its remaining rows to a new topic"
                                   : "stopped before the end of the input; run the same command again to resume");
      }
      auto event = reader->Next();
      if (!event.ok()) {
        // A whole file failed (unreadable, truncated archive): what came
        // before is kept; the file is named in the summary and the rejects.
        std::string message = event.status().ToString();
        {
          std::lock_guard lock(stats_mu_);
          stats_.incomplete_files.push_back(message);
        }
        WriteFileReject(message);
        if (o_.strict) {
          stats_.stopped_by_strict = "--strict: " + message;
          return Status::OK();
        }
        continue;
      }
      if (*event == text::ReadEvent::kEnd) break;
      if (*event == text::ReadEvent::kFileEnd) {
        progress_->FileDone(sources_.files()[reader->file_end().file_index].size_bytes);
        continue;
      }
      if (*event == text::ReadEvent::kReject) {
        ++documents_read_;
        const text::Reject& r = reader->reject();
        cleaning_.RecordReject(r.reason);
        if (Dropped(r)) return Status::OK();
        continue;
      }
      const text::Document& d = reader->document();
      ++documents_read_;
      progress_->Document(d.text.size());
      text::CleanResult c = cleaner_.Clean(d.text, &scratch, &cleaning_);
      if (!c.kept) {
        if (Dropped(CleaningReject(c.reason, d))) return Status::OK();
        continue;
      }
      text::ContentHash hash{};
      if (o_.dedup || o_.partition_by == PartitionBy::kHash) hash = text::HashContent(c.text);
      if (o_.dedup && !dedup.Admit(hash)) {
        cleaning_.RecordDuplicate(c.text.size());
        if (Dropped(CleaningReject(text::DropReason::kDuplicate, d))) return Status::OK();
        continue;
      }
      const size_t slot = o_.partition_by == PartitionBy::kHash ? hash.low % owned_.size()
                                                                : d.sequence % owned_.size();
      if (!plan_.fresh && plan_.Written(slot, d.sequence)) {
        ++skipped_;
        continue;
      }
      Chunk::Doc doc{static_cast<uint32_t>(chunk->text.size()), static_cast<uint32_t>(c.text.size()),
                     d.position.file_index, static_cast<uint32_t>(slot), d.position.line, d.position.byte_offset,
                     d.sequence};
      chunk->text.append(c.text);
      chunk->docs.push_back(doc);
      if (chunk->text.size() >= kChunkTextBytes || chunk->docs.size() >= kChunkDocs) {
        if (!Push(std::move(chunk))) return Status::OK();  // the writer failed; it reports why
        chunk = NewChunk();
      }
    }
    return Status::OK();
  }

  // A document the cleaner or the deduplication dropped, as a reject line.
  text::Reject CleaningReject(text::DropReason reason, const text::Document& d) const {
    text::Reject r;
    r.reason = reason;
    r.path = sources_.files()[d.position.file_index].path;
    r.file_index = d.position.file_index;
    r.line = d.position.line;
    r.byte_offset = d.position.byte_offset;
    switch (reason) {
      case text::DropReason::kEmpty: r.message = "nothing is left after cleaning"; break;
      case text::DropReason::kTooShort: r.message = "shorter than --min-chars / --min-bytes after cleaning"; break;
      case text::DropReason::kTooLong: r.message = "longer than --max-chars / --max-bytes after cleaning"; break;
      case text::DropReason::kDuplicate:
        r.message = "the same text as an earlier document after cleaning (--no-dedup keeps it)";
        break;
      default: r.message = "dropped by cleaning"; break;
    }
    return r;
  }

  // Lists a dropped document in --rejects; true when --strict stops the run
  // here (the reason is kept for the caller, the documents before are written).
  bool Dropped(const text::Reject& r) {
    if (rejects_) {
      line_.clear();
      text::AppendRejectJsonLine(r, &line_);
      WriteRejectLine();
    }
    if (!o_.strict) return false;
    stats_.stopped_by_strict = "--strict: " + std::string(r.path) + ":" + std::to_string(r.line) + ": " +
                               std::string(text::DropReasonName(r.reason)) + ": " + r.message;
    return true;
  }

  static std::unique_ptr<Chunk> NewChunk() {
    auto c = std::make_unique<Chunk>();
    c->text.reserve(kChunkTextBytes + (1 << 16));
    return c;
  }

  // Numbers chunks as they are handed on, so the writer knows how many come.
  bool Push(std::unique_ptr<Chunk> c) {
    c->index = chunks_made_++;
    return pipe_->PushWork(std::move(c));
  }

  void WriteFileReject(const std::string& message) {
    if (!rejects_) return;
    line_.clear();
    JsonWriter j(&line_);
    j.BeginObject().Key("reason").String("incomplete_file").Key("message").String(message).EndObject();
    line_.push_back('\n');
    WriteRejectLine();
  }

  // Every write to the rejects file is checked: a file that could not be
  // written whole fails the run (after the documents), naming the file.
  void WriteRejectLine() {
    if (rejects_status_.ok() && std::fwrite(line_.data(), 1, line_.size(), rejects_) != line_.size()) {
      rejects_status_ = Status::FromErrno(errno, "cannot write the rejects file", o_.rejects_path);
    }
  }

  // ---- worker threads
  void Work() {
    while (auto c = pipe_->PopWork()) {
      c->ids.clear();
      c->id_ends.clear();
      for (const Chunk::Doc& d : c->docs) {
        // The reader made the text valid UTF-8; what can still fail is a
        // general-path regex search past its limits.
        Status s = encoder_->Encode(std::string_view(c->text).substr(d.text_begin, d.text_len), &c->ids);
        if (!s.ok() && c->error.ok()) {
          c->error = s.WithContext(sources_.files()[d.file_index].path + ":" + std::to_string(d.line) +
                                   ": the document cannot be tokenized");
        }
        c->id_ends.push_back(static_cast<uint32_t>(c->ids.size()));
      }
      pipe_->PushDone(std::move(c));
    }
  }

  // ---- writer (calling thread)
  // A partition's open batch in the topic writer: its records are encoded in
  // place (Reserve) and committed once they reach --batch-bytes.
  struct Pending {
    uint64_t bytes = 0;  // of the records, as --batch-bytes counts them
    uint64_t records = 0;
  };

  Status Write() {
    std::vector<Pending> pending(owned_.size());
    record::RecordEncoder encoder;
    // The run's fingerprint, and which of BOS/EOS the document stage added
    // (a loader told to add them too refuses).
    std::vector<record::Attribute> attributes{{kRunAttribute, fingerprint_}};
    if (auto ends = encoder_->ends_attribute()) attributes.push_back(*ends);
    while (auto c = pipe_->PopDoneInOrder()) {
      if (!c->error.ok()) return c->error;
      uint32_t begin = 0;
      for (size_t i = 0; i < c->docs.size(); ++i) {
        const Chunk::Doc& d = c->docs[i];
        const uint32_t end = c->id_ends[i];
        record::RecordFields f;
        f.FileSource(record_paths_[d.file_index], d.line, d.byte_offset, d.sequence);
        f.attributes = attributes;
        std::span<const uint32_t> ids(c->ids.data() + begin, end - begin);
        TF_RETURN_IF_ERROR(encoder.Prepare(f, ids)
                               .WithContext(std::string(f.source_path) + ":" + std::to_string(d.line)));
        Result<std::span<uint8_t>> dest = writer_->Reserve(owned_[d.partition_slot], encoder.size());
        if (!dest.ok()) return dest.status().WithContext(std::string(f.source_path) + ":" + std::to_string(d.line));
        encoder.WriteTo(dest->data());
        Pending& p = pending[d.partition_slot];
        p.bytes += encoder.size();
        p.records += 1;
        stats_.tokens_written += end - begin;
        stats_.text_bytes += d.text_len;
        begin = end;
        if (p.bytes >= o_.batch_bytes) TF_RETURN_IF_ERROR(Flush(d.partition_slot, &p));
      }
      progress_->Tokens(c->ids.size());
    }
    for (size_t slot = 0; slot < pending.size(); ++slot) TF_RETURN_IF_ERROR(Flush(slot, &pending[slot]));
    return writer_->Flush();
  }

  Status Flush(size_t slot, Pending* p) {
    if (p->records == 0) return Status::OK();
    TF_RETURN_IF_ERROR(writer_->Commit(owned_[slot]));
    stats_.documents_written += p->records;
    stats_.record_bytes += p->bytes;
    *p = Pending();
    return Status::OK();
  }

  const IngestOptions& o_;
  const std::atomic<bool>* stop_;
  std::unique_ptr<text::ArrowStreamTextColumn> stream_;  // until the reader takes it
  bool stream_source_ = false;  // the documents come from stream_ (which the reader takes)
  text::SourceSet sources_;
  text::Cleaner cleaner_ = text::Cleaner::Create({}).value();
  std::optional<document::DocumentEncoder> encoder_;  // set before any thread starts
  std::unique_ptr<topic::TopicWriter> writer_;
  std::vector<PartitionId> owned_;
  // Each input's resolved absolute path (ComparablePath), as records name it.
  std::vector<std::string> record_paths_;
  std::string fingerprint_;
  ResumePlan plan_;
  std::unique_ptr<ChunkPipe> pipe_;
  std::unique_ptr<ProgressReporter> progress_;
  std::FILE* rejects_ = nullptr;
  std::string line_;
  Status reader_status_;
  Status rejects_status_;  // written by the reader thread, read after it is joined
  std::mutex worker_mu_;
  Status worker_status_;  // the first failure of a worker thread
  uint64_t chunks_made_ = 0;
  // Reader-thread counters, copied into stats_ at the end.
  text::CleaningStats cleaning_;
  uint64_t documents_read_ = 0;
  uint64_t skipped_ = 0;
  std::mutex stats_mu_;
  IngestStats stats_;
};

}  // namespace

Result<IngestStats> RunIngest(const IngestOptions& options, const std::atomic<bool>* stop) {
  if (options.to_uri.empty()) return Status::InvalidArgument("no destination topic (--to URI)");
  if (options.inputs.empty()) return Status::InvalidArgument("no input (--input PATH...)");
  return Ingest(options, stop).Run();
}

Result<IngestStats> RunIngestFromArrowStream(const IngestOptions& options, ArrowArrayStream* stream,
                                             const std::atomic<bool>* stop) {
  // Taken over first, so that every return below releases it.
  auto column = text::ArrowStreamTextColumn::Open(stream, options.reader.json_field, kArrowStreamSource);
  if (options.to_uri.empty()) return Status::InvalidArgument("no destination topic (--to URI)");
  if (!options.inputs.empty()) {
    return Status::InvalidArgument("an ingest reads an Arrow stream or input files, not both");
  }
  if (options.shard.count != 1) {
    return Status::InvalidArgument("shard " + options.shard.ToString() +
                                   ": an Arrow stream is one input, which is not split among shards; give each "
                                   "process its own stream and topic");
  }
  if (!column.ok()) return column.status();
  // The reader is made on the reader thread, after the topic is opened: its
  // checks of the options are made here first, so that they refuse before.
  TF_RETURN_IF_ERROR(text::DocumentReader::CheckColumnOptions(options.reader));
  return Ingest(options, stop, std::move(*column)).Run();
}

void ShutdownIngestInputs() { text::FinalizeObjectStore(); }

}  // namespace tokenfeed::ingest
