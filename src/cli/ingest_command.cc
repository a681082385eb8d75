// tokenfeed ingest: corpus files -> token records in a topic (src/ingest).
#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>

#include "cli/command.h"
#include "cli/document_options.h"
#include "cli/topic_options.h"
#include "tokenfeed/ingest.h"

namespace tokenfeed::cli {
namespace {

std::atomic<bool> g_stop{false};

extern "C" void OnStopSignal(int) { g_stop.store(true); }

struct IngestCliOptions {
  ingest::IngestOptions o;
  std::string format = "auto", text_mode = "line", utf8 = "replace", partition_by = "round-robin";
  std::string shard = "0/1", fsync = "each-batch", progress = "auto";
  uint32_t partitions = 0;
  bool no_dedup = false, keep_controls = false, keep_newlines = false, no_trim = false, no_create = false;
  KafkaCliOptions kafka;
};

// The command's own checks of its arguments, before anything is read or
// opened: what they refuse is a usage error.
Status ConvertArguments(const IngestCliOptions& c, ingest::IngestOptions* o) {
  TF_ASSIGN_OR_RETURN(o->reader.format, text::ParseInputFormat(c.format));
  TF_ASSIGN_OR_RETURN(o->reader.text_mode, text::ParseTextMode(c.text_mode));
  TF_ASSIGN_OR_RETURN(o->reader.utf8, ParseUtf8Policy(c.utf8));
  TF_ASSIGN_OR_RETURN(o->shard, text::ShardSpec::Parse(c.shard));
  TF_RETURN_IF_ERROR(topic::KindOf(o->to_uri).status());
  return ApplyKafkaOptions(c.kafka, &o->writer);
}

CommandResult RunIngestCommand(IngestCliOptions& c) {
  ingest::IngestOptions o = c.o;
  if (Status s = ConvertArguments(c, &o); !s.ok()) return CommandResult::Usage(std::move(s));
  o.partition_by = c.partition_by == "hash" ? ingest::PartitionBy::kHash : ingest::PartitionBy::kRoundRobin;
  o.progress = c.progress == "always" ? ingest::ProgressMode::kAlways
               : c.progress == "never" ? ingest::ProgressMode::kNever
                                       : ingest::ProgressMode::kAuto;
  o.dedup = !c.no_dedup;
  o.clean.drop_controls = !c.keep_controls;
  o.clean.normalize_newlines = !c.keep_newlines;
  o.clean.trim = !c.no_trim;
  o.writer.partitions = c.partitions;
  o.writer.create_if_missing = !c.no_create;
  o.writer.log.fsync = c.fsync == "none" ? log::FsyncPolicy::kNone
                       : c.fsync == "interval" ? log::FsyncPolicy::kInterval
                                               : log::FsyncPolicy::kEachBatch;

  std::signal(SIGINT, OnStopSignal);
  std::signal(SIGTERM, OnStopSignal);
  TF_ASSIGN_OR_RETURN(ingest::IngestStats stats, ingest::RunIngest(o, &g_stop));
  std::fputs(stats.Summary().c_str(), stderr);
  if (!stats.stopped_by_strict.empty()) {
    return CommandResult::DataRejected(Status::InvalidArgument(
        stats.stopped_by_strict + "; the documents before it were written (fix the input, or drop --strict, and "
                                  "run the same command again to resume)"));
  }
  if (!stats.incomplete_files.empty()) {
    return CommandResult::DataRejected(
        Status::IoError(std::to_string(stats.incomplete_files.size()) +
                        " input file(s) could not be read to the end (listed above); everything before the "
                        "damage was written"));
  }
  return Status::OK();
}

}  // namespace

CommandRunner AddIngestCommand(CLI::App& app) {
  auto c = std::make_shared<IngestCliOptions>();
  ingest::IngestOptions& o = c->o;
  CLI::App* cmd = app.add_subcommand("ingest", "Read, clean and tokenize a corpus into a topic (resumable)");
  cmd->add_option("--tokenizer", o.tokenizer_path, "tokenizer.json file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--input,-i", o.inputs, "files, directories and globs (*, ?, **); .gz and .zst are read as such")
      ->required();
  cmd->add_option("--to", o.to_uri, "destination topic: log:DIR/TOPIC or kafka://HOST:PORT/TOPIC")->required();
  cmd->add_option("--partitions", c->partitions,
                  "partitions of a new topic (default 1; an existing topic keeps its own)")
      ->check(CLI::Range(1u, 1u << 20));
  cmd->add_option("--threads", o.threads, "tokenizing threads (0: every usable CPU)")
      ->check(CLI::Range(0, 4096))->capture_default_str();
  AddDocumentOptions(cmd, &o.document);
  cmd->add_option("--format", c->format,
                  "input format; auto: .jsonl/.json are JSONL, .parquet is Parquet, .arrow/.feather Arrow IPC, "
                  "another binary format's extension (.png, .avro, ...) is refused, anything else is text")
      ->check(CLI::IsMember({"auto", "jsonl", "text", "parquet", "arrow"}))
      ->capture_default_str();
  cmd->add_option("--text-mode", c->text_mode, "plain text: a document per line, per paragraph or per file")
      ->check(CLI::IsMember({"line", "paragraph", "file"}))->capture_default_str();
  cmd->add_option("--field", o.reader.json_field, "JSONL field or Parquet/Arrow column with the text (dotted path)")->capture_default_str();
  cmd->add_option("--utf8", c->utf8, "invalid UTF-8: replace with U+FFFD, or reject the document")
      ->check(CLI::IsMember({"replace", "reject"}))->capture_default_str();
  cmd->add_option("--max-doc-bytes", o.reader.max_document_bytes, "longer documents are rejected as too_long")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  cmd->add_option("--min-chars", o.clean.min_chars, "drop shorter documents (after cleaning; 0: no limit)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-chars", o.clean.max_chars, "drop longer documents (after cleaning; 0: no limit)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--min-bytes", o.clean.min_bytes, "drop shorter documents, in bytes (0: no limit)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-bytes", o.clean.max_bytes, "drop longer documents, in bytes (0: no limit)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--no-dedup", c->no_dedup, "keep exact duplicates (default: drop them)");
  cmd->add_flag("--keep-controls", c->keep_controls, "keep NUL and other control characters");
  cmd->add_flag("--keep-newlines", c->keep_newlines, "keep CRLF and CR line endings as they are");
  cmd->add_flag("--no-trim", c->no_trim, "keep white space at the ends of documents");
  cmd->add_option("--partition-by", c->partition_by, "how documents are spread over partitions")
      ->check(CLI::IsMember({"round-robin", "hash"}))->capture_default_str();
  cmd->add_option("--shard", c->shard, "I/N: this process reads every N-th input file, from the I-th, and writes "
                                       "the partitions p with p % N == I")->capture_default_str();
  cmd->add_option("--rejects", o.rejects_path, "write every rejected document (file, line, reason) as JSONL");
  cmd->add_flag("--strict", o.strict, "stop at the first rejected document or unreadable file");
  cmd->add_option("--stats-json", o.stats_json_path, "write the final statistics as JSON");
  cmd->add_option("--fsync", c->fsync, "embedded log: sync every batch, at intervals, or leave it to the OS")
      ->check(CLI::IsMember({"each-batch", "interval", "none"}))->capture_default_str();
  cmd->add_option("--batch-bytes", o.batch_bytes, "write records to a partition in batches of about this size")
      ->check(CLI::Range(size_t{1}, size_t{1} << 30))->capture_default_str();
  cmd->add_option("--progress", c->progress, "progress on standard error (auto: a bar on a terminal, "
                                             "a line every 10 s otherwise)")
      ->check(CLI::IsMember({"auto", "always", "never"}))->capture_default_str();
  cmd->add_flag("--no-create", c->no_create, "fail if the topic does not exist");
  cmd->add_flag("--discard-after-damage", o.writer.log.discard_after_damage,
                "embedded log: when a partition's last segment holds damaged synced bytes, copy them to a "
                "'.damaged-POSITION' file beside it and cut them off (their records are lost from the topic; the "
                "ingest writes them again on resume); without it such a topic is refused");
  AddKafkaOptions(cmd, &c->kafka);
  return [c] { return RunIngestCommand(*c); };
}

}  // namespace tokenfeed::cli
