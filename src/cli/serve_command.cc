// tokenfeed serve: the streaming preprocessing service (src/serve): raw text
// messages from one Kafka topic to token records in another, exactly once,
// until SIGTERM or SIGINT (then the open transaction commits).
#include <csignal>
#include <memory>

#include "cli/command.h"
#include "cli/document_options.h"
#include "cli/topic_options.h"
#include "base/heap_tuning.h"
#include "serve/preprocess_service.h"

namespace tokenfeed::cli {
namespace {

std::atomic<bool> g_stop{false};

extern "C" void OnServeStopSignal(int) { g_stop.store(true); }

struct ServeCliOptions {
  serve::ServeOptions o;
  std::string format = "auto";
  uint32_t partitions = 0;
  int commit_interval_ms = 500;
  int log_interval_s = 10;
  bool keep_controls = false, keep_newlines = false, no_trim = false, no_create = false;
  KafkaCliOptions kafka;
};

// The command's own checks of its arguments, before any file or cluster is
// touched: what they refuse is a usage error.
Status ConvertArguments(const ServeCliOptions& c, serve::ServeOptions* o) {
  TF_ASSIGN_OR_RETURN(o->format, serve::ParseRawFormat(c.format));
  if (c.commit_interval_ms <= 0) return Status::InvalidArgument("--commit-interval-ms must be positive");
  if (c.log_interval_s <= 0) return Status::InvalidArgument("--log-interval-s must be positive");
  o->commit_interval = std::chrono::milliseconds(c.commit_interval_ms);
  o->log_interval = std::chrono::seconds(c.log_interval_s);
  TF_RETURN_IF_ERROR(ApplyKafkaOptions(c.kafka, &o->output));
  return serve::CheckServeArguments(*o);
}

CommandResult RunServeCommand(ServeCliOptions& c) {
  serve::ServeOptions o = c.o;
  o.clean.drop_controls = !c.keep_controls;
  o.clean.normalize_newlines = !c.keep_newlines;
  o.clean.trim = !c.no_trim;
  o.output.partitions = c.partitions;
  o.output.create_if_missing = !c.no_create;
  if (Status s = ConvertArguments(c, &o); !s.ok()) return CommandResult::Usage(std::move(s));
  // The service reads compressed topics as fast as it can.
  (void)KeepLargeBuffersInHeap();
  std::signal(SIGINT, OnServeStopSignal);
  std::signal(SIGTERM, OnServeStopSignal);
  return serve::RunService(o, &g_stop);
}

}  // namespace

CommandRunner AddServeCommand(CLI::App& app) {
  auto c = std::make_shared<ServeCliOptions>();
  serve::ServeOptions& o = c->o;
  CLI::App* cmd = app.add_subcommand(
      "serve", "Stream raw text from a Kafka topic to token records in another, exactly once (until SIGTERM)");
  cmd->add_option("--from", o.from_uri, "raw topic: kafka://HOST:PORT/RAW (JSON or plain-text messages)")->required();
  cmd->add_option("--to", o.to_uri, "token record topic: kafka://HOST:PORT/TOKENS (same cluster)")->required();
  cmd->add_option("--tokenizer", o.tokenizer_path, "tokenizer.json file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--group", o.group, "consumer group; instances of one group share the partitions")
      ->capture_default_str();
  cmd->add_option("--instance-id", o.instance_id,
                  "stable, distinct per instance (e.g. the pod name): a restarted instance then aborts its "
                  "unfinished transaction at once (default: random)");
  cmd->add_option("--format", c->format, "raw messages: auto (JSON object or plain text), json, text")
      ->check(CLI::IsMember({"auto", "json", "text"}))->capture_default_str();
  cmd->add_option("--field", o.json_field, "JSON field with the text (dotted path)")->capture_default_str();
  cmd->add_option("--threads", o.threads, "tokenizing threads (0: every usable CPU)")
      ->check(CLI::Range(0, 4096))->capture_default_str();
  AddDocumentOptions(cmd, &o.document);
  cmd->add_option("--min-chars", o.clean.min_chars, "drop shorter documents (after cleaning; 0: no limit)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--max-chars", o.clean.max_chars, "drop longer documents (after cleaning; 0: no limit)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--keep-controls", c->keep_controls, "keep NUL and other control characters");
  cmd->add_flag("--keep-newlines", c->keep_newlines, "keep CRLF and CR line endings as they are");
  cmd->add_flag("--no-trim", c->no_trim, "keep white space at the ends of documents");
  cmd->add_option("--partitions", c->partitions, "partitions of a new output topic (default: as the raw topic)")
      ->check(CLI::Range(1u, 1u << 20));
  cmd->add_flag("--no-create", c->no_create, "fail if the output topic does not exist");
  cmd->add_option("--max-transaction-messages", o.max_transaction_messages,
                  "commit after at most this many raw messages")
      ->check(CLI::Range(size_t{1}, size_t{1} << 30))->capture_default_str();
  cmd->add_option("--commit-interval-ms", c->commit_interval_ms, "commit at least this often while busy")
      ->capture_default_str();
  cmd->add_option("--metrics-port", o.metrics_port, "serve Prometheus metrics at http://ADDRESS:PORT/metrics "
                                                   "(0: any free port, logged; default: off)")
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--metrics-address", o.metrics_address, "address of the metrics endpoint")->capture_default_str();
  cmd->add_option("--log-interval-s", c->log_interval_s, "progress line every this many seconds")
      ->capture_default_str();
  AddKafkaOptions(cmd, &c->kafka);
  return [c] { return RunServeCommand(*c); };
}

}  // namespace tokenfeed::cli
