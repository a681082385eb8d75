// tokenfeed index: builds or repairs the token index of every partition of a
// topic. An embedded log topic's (TOKENS, docs/log_format.md "Token index"):
// by opening the topic's writer for all partitions and closing it again, for
// a topic written before the index existed or after a writer left it off; it
// takes each partition's writer lock while it runs, so it fails while
// another writer holds one. A Kafka topic's (its TOPIC-token-index and
// TOPIC-token-summary topics, docs/kafka.md "Token index"): by reading the
// records past where the index ends and appending chunks and their
// summaries; one such build per topic at a time.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/topic_options.h"
#include "tokenfeed/token_index.h"
#include "tokenfeed/topic.h"

namespace tokenfeed::cli {
namespace {

struct PartitionIndexed {
  PartitionId partition;
  uint64_t records = 0;  // in [start, end)
  uint64_t indexed = 0;  // of those, covered by the index
  uint64_t tokens = 0;
};

CommandResult RunIndex(const std::string& uri, const KafkaCliOptions& kafka,
                       const topic::TokenIndexBuildOptions& build) {
  Result<topic::TopicKind> kind = topic::KindOf(uri);
  if (!kind.ok()) return CommandResult::Usage(kind.status());
  if (!topic::HasTokenIndex(uri)) {
    return CommandResult::Usage(Status::Unsupported(
        "'" + uri + "': this build keeps no token index for this transport, so there is none to build; "
        "readers count such a topic's records instead"));
  }
  topic::WriterConfig config;
  if (Status s = ApplyKafkaOptions(kafka, static_cast<topic::TopicConfig*>(&config)); !s.ok()) {
    return CommandResult::Usage(std::move(s));
  }
  config.partitions = 0;  // as many as the topic has
  config.create_if_missing = false;
  std::vector<std::string> notes;
  if (*kind == topic::TopicKind::kKafka) {
    TF_ASSIGN_OR_RETURN(std::vector<topic::TokenIndexBuild> built, topic::BuildKafkaTokenIndex(uri, config, build));
    uint64_t chunks = 0, summaries = 0, records = 0;
    for (const topic::TokenIndexBuild& b : built) {
      chunks += b.chunks_written;
      summaries += b.summaries_written;
      records += b.records_read;
    }
    notes.push_back("read " + std::to_string(records) + " records past where the index ended and wrote " +
                    std::to_string(chunks) + " chunks to its index topic (the topic's name + \"-token-index\") and " +
                    std::to_string(summaries) + " summaries to its summary topic (+ \"-token-summary\")");
  } else {
    TF_ASSIGN_OR_RETURN(std::unique_ptr<topic::TopicWriter> writer, topic::OpenTopicWriter(uri, config));
    TF_RETURN_IF_ERROR(writer->Close());
    notes = writer->RecoveryNotes();
  }
  TF_ASSIGN_OR_RETURN(topic::TopicSummary summary, topic::DescribeTopic(uri, config));
  std::vector<PartitionIndexed> rows;
  for (const auto& p : summary.partitions) {
    const Offset end[] = {p.end_offset};
    TF_ASSIGN_OR_RETURN(topic::TokenIndexRead read, topic::ReadTokenIndex(uri, p.partition, end, config));
    const topic::IndexPoint& at_end = read.points.front();
    rows.push_back({p.partition, at_end.records, at_end.records - read.records_read, at_end.tokens});
  }

  std::string out = summary.uri + "\n";
  char line[160];
  std::snprintf(line, sizeof(line), "%9s %14s %14s %16s\n", "partition", "records", "indexed", "tokens");
  out += line;
  uint64_t lacking = 0;
  for (const PartitionIndexed& r : rows) {
    std::snprintf(line, sizeof(line), "%9u %14llu %14llu %16llu\n", r.partition.value(),
                  static_cast<unsigned long long>(r.records), static_cast<unsigned long long>(r.indexed),
                  static_cast<unsigned long long>(r.tokens));
    out += line;
    if (r.indexed < r.records) ++lacking;
  }
  for (const std::string& note : notes) out += "note: " + note + "\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (lacking > 0) {
    return Status::IoError(summary.uri + ": the token index of " + std::to_string(lacking) + " of " +
                           std::to_string(rows.size()) + " partitions does not cover all their records (the " +
                           "notes above say why): fix the cause and run this command again");
  }
  return Status::OK();
}

}  // namespace

CommandRunner AddIndexCommand(CLI::App& app) {
  auto uri = std::make_shared<std::string>();
  auto kafka = std::make_shared<KafkaCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "index", "Build or repair the token index of every partition of a topic (log: TOKENS; Kafka: a "
               "TOPIC-token-index and TOPIC-token-summary topics)");
  cmd->add_option("uri", *uri, "log:DIR/TOPIC or kafka://HOST:PORT/TOPIC")->required();
  AddKafkaOptions(cmd, kafka.get(), /*writing=*/false);
  auto build = std::make_shared<topic::TokenIndexBuildOptions>();
  cmd->add_option("--chunk-records", build->chunk_records,
                  "Kafka: records a chunk of TOPIC-token-index lists (one Kafka record each), 1 to 65536")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  cmd->add_option("--summary-group", build->summary_group,
                  "Kafka: offsets a group of TOPIC-token-summary covers, 1 to 1048576; the summaries answer blocks "
                  "of a multiple of it, and every rank of a finite sharded run reads them whole (about 4 bytes a "
                  "group): larger for topics of billions of records (docs/kafka.md)")
      ->check(CLI::Range(1, 1048576))
      ->capture_default_str();
  return [uri, kafka, build] { return RunIndex(*uri, *kafka, *build); };
}

}  // namespace tokenfeed::cli
