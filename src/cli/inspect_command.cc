// tokenfeed inspect: prints the records of a topic, from the state it is in
// when the command starts (records appended meanwhile are not waited for).
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <memory>
#include <optional>

#include "cli/command.h"
#include "base/json_writer.h"
#include "cli/terminal_text.h"
#include "cli/topic_options.h"
#include "tokenfeed/record.h"
#include "tokenfeed/tokenizer.h"
#include "tokenfeed/topic.h"

#if TOKENFEED_HAS_KAFKA
#include "base/heap_tuning.h"
#endif

namespace tokenfeed::cli {
namespace {

struct InspectOptions {
  std::string uri;
  std::optional<uint32_t> partition;
  std::optional<uint64_t> offset;
  std::optional<uint64_t> count;
  bool json = false;
  bool decode = false;
  std::string tokenizer;
  KafkaCliOptions kafka;
};

void PrintRecord(const InspectOptions& o, PartitionId p, Offset off, const record::RecordView& r,
                 const Tokenizer* tok, std::string* out) {
  std::vector<TokenId> ids(r.ids().size());
  r.ids().CopyTo(ids.data());
  std::string text;
  if (tok) {
    auto decoded = tok->Decode(ids);
    text = decoded.ok() ? *decoded : "<" + decoded.status().ToString() + ">";
  }
  out->clear();
  if (o.json) {
    JsonWriter j(out);
    j.BeginObject();
    j.Key("partition").Uint(p.value());
    j.Key("offset").Uint(off.value());
    j.Key("source").BeginObject();
    if (r.source_kind() == record::SourceKind::kMessage) {
      j.Key("kind").String("message");
      j.Key("topic").String(r.source_path());
      j.Key("partition").Uint(r.source_line());
      j.Key("offset").Uint(r.source_byte_offset());
    } else {
      j.Key("kind").String("file");
      j.Key("path").String(r.source_path());
      j.Key("line").Uint(r.source_line());
      j.Key("byte_offset").Uint(r.source_byte_offset());
    }
    j.EndObject();
    j.Key("doc_seq").Uint(r.doc_seq());
    j.Key("attributes").BeginObject();
    for (record::Attribute a : r.attributes()) j.Key(a.key).String(a.value);
    j.EndObject();
    j.Key("num_ids").Uint(ids.size());
    j.Key("ids").BeginArray();
    for (TokenId id : ids) j.Uint(id);
    j.EndArray();
    if (tok) j.Key("text").String(text);
    j.EndObject();
    out->push_back('\n');
    return;
  }
  char head[160];
  std::snprintf(head, sizeof(head), "partition %u offset %llu: ", p.value(),
                static_cast<unsigned long long>(off.value()));
  *out += head;
  // Whatever a topic holds is escaped before it reaches a terminal.
  AppendEscapedForTerminal(r.source_path(), out);
  if (r.source_kind() == record::SourceKind::kMessage) {
    *out += " partition " + std::to_string(r.source_line()) + " offset " + std::to_string(r.source_byte_offset()) +
            ", " + std::to_string(ids.size()) + " ids [";
  } else {
    *out += ":" + std::to_string(r.source_line()) + " (byte " + std::to_string(r.source_byte_offset()) + ", doc " +
            std::to_string(r.doc_seq()) + "), " + std::to_string(ids.size()) + " ids [";
  }
  for (size_t i = 0; i < ids.size() && i < 16; ++i) *out += (i ? "," : "") + std::to_string(ids[i]);
  *out += ids.size() > 16 ? ",...]\n" : "]\n";
  if (tok) {
    const std::string_view shown = Utf8Prefix(text, 240);
    *out += "    ";
    AppendEscapedForTerminal(shown, out);
    *out += shown.size() < text.size() ? "...\n" : "\n";
  }
}

// The checks of a topic command's arguments that need no topic: the URI's
// form and the Kafka options.
Status CheckTopicArguments(const std::string& uri, const KafkaCliOptions& kafka, topic::TopicConfig* config) {
  TF_RETURN_IF_ERROR(topic::KindOf(uri).status());
  return ApplyKafkaOptions(kafka, config);
}

// Usage errors (exit 2): the arguments, and a --partition or --offset the
// topic does not have; everything else is a failure of the command.
CommandResult RunInspect(const InspectOptions& o) {
#if TOKENFEED_HAS_KAFKA
  // Reading a compressed Kafka topic fast: keep librdkafka's decompression
  // buffers in the heap (base/heap_tuning.h).
  (void)KeepLargeBuffersInHeap();
#endif
  topic::TopicConfig config;
  if (Status s = CheckTopicArguments(o.uri, o.kafka, &config); !s.ok()) return CommandResult::Usage(std::move(s));
  if (o.decode && o.tokenizer.empty()) {
    return CommandResult::Usage(Status::InvalidArgument("--decode needs --tokenizer FILE"));
  }
  std::shared_ptr<const Tokenizer> tok;
  if (o.decode) {
    TF_ASSIGN_OR_RETURN(tok, Tokenizer::FromFile(o.tokenizer));
  }
  TF_ASSIGN_OR_RETURN(topic::TopicSummary summary, topic::DescribeTopic(o.uri, config));
  std::vector<PartitionId> partitions;
  if (o.partition) {
    if (*o.partition >= summary.partitions.size()) {
      return CommandResult::Usage(Status::OutOfRange(o.uri + " has " + std::to_string(summary.partitions.size()) +
                                                     " partitions; there is no partition " +
                                                     std::to_string(*o.partition) + " (--partition counts from 0)"));
    }
    partitions.emplace_back(*o.partition);
  } else {
    for (const auto& p : summary.partitions) partitions.push_back(p.partition);
  }
  if (o.offset) {
    // An offset past a partition's end leaves that partition out; past the
    // end of every partition asked for, it is a mistake worth naming.
    Offset last_end(0);
    for (PartitionId p : partitions) last_end = std::max(last_end, summary.partitions[p.value()].end_offset);
    if (Offset(*o.offset) > last_end) {
      return CommandResult::Usage(
          Status::OutOfRange(o.uri + (o.partition ? " partition " + ToString(partitions[0]) : std::string()) +
                             " ends at offset " + ToString(last_end) + "; --offset " + std::to_string(*o.offset) +
                             " is past it"));
    }
  }
  uint64_t printed = 0;
  std::string out;
  for (PartitionId p : partitions) {
    const topic::PartitionSummary& ps = summary.partitions[p.value()];
    Offset start = o.offset ? std::max(Offset(*o.offset), ps.start_offset) : ps.start_offset;
    const Offset end = ps.end_offset;  // the end as of the start of the command
    if (start >= end) continue;
    TF_ASSIGN_OR_RETURN(auto cursor, topic::OpenPartitionCursor(o.uri, p, config));
    TF_RETURN_IF_ERROR(cursor->Seek(start));
    while (cursor->position() < end && (!o.count || printed < *o.count)) {
      TF_ASSIGN_OR_RETURN(auto records, cursor->Read(std::chrono::milliseconds(2000)));
      if (records.empty()) {
        // Kafka: transaction markers after the last record move the position
        // to the end without a record.
        if (cursor->position() >= end) break;
        return Status::TimedOut(o.uri + " partition " + ToString(p) + ": no record at offset " +
                                ToString(cursor->position()) + " although the topic said it ends at " +
                                ToString(end));
      }
      for (const topic::StoredRecordView& rec : records) {
        if (rec.offset >= end || (o.count && printed >= *o.count)) break;
        auto view = record::RecordView::Parse(rec.bytes);
        if (!view.ok()) {
          return view.status().WithContext(o.uri + " partition " + ToString(p) + " offset " + ToString(rec.offset));
        }
        PrintRecord(o, p, rec.offset, *view, tok.get(), &out);
        std::fwrite(out.data(), 1, out.size(), stdout);
        ++printed;
      }
    }
    if (o.count && printed >= *o.count) break;
  }
  return Status::OK();
}

CommandResult RunTopics(const std::string& uri, bool json, const KafkaCliOptions& kafka) {
  topic::TopicConfig config;
  if (Status s = CheckTopicArguments(uri, kafka, &config); !s.ok()) return CommandResult::Usage(std::move(s));
  TF_ASSIGN_OR_RETURN(topic::TopicSummary s, topic::DescribeTopic(uri, config));
  uint64_t records = 0, bytes = 0;
  for (const auto& p : s.partitions) {
    records += p.records();
    bytes += p.bytes;
  }
  std::string out;
  if (json) {
    JsonWriter j(&out);
    j.BeginObject();
    j.Key("uri").String(s.uri);
    j.Key("details").String(s.details);
    j.Key("records").Uint(records);
    j.Key("bytes").Uint(bytes);
    j.Key("partitions").BeginArray();
    for (const auto& p : s.partitions) {
      j.BeginObject();
      j.Key("partition").Uint(p.partition.value());
      j.Key("start_offset").Uint(p.start_offset.value());
      j.Key("end_offset").Uint(p.end_offset.value());
      j.Key("records").Uint(p.records());
      j.Key("bytes").Uint(p.bytes);
      j.EndObject();
    }
    j.EndArray();
    j.EndObject();
    out.push_back('\n');
  } else {
    out = s.uri + " (" + s.details + ")\n";
    char line[160];
    std::snprintf(line, sizeof(line), "%9s %14s %14s %14s %14s\n", "partition", "start", "end", "records", "bytes");
    out += line;
    for (const auto& p : s.partitions) {
      std::snprintf(line, sizeof(line), "%9u %14llu %14llu %14llu %14llu\n", p.partition.value(),
                    static_cast<unsigned long long>(p.start_offset.value()),
                    static_cast<unsigned long long>(p.end_offset.value()),
                    static_cast<unsigned long long>(p.records()), static_cast<unsigned long long>(p.bytes));
      out += line;
    }
    std::snprintf(line, sizeof(line), "%9s %14s %14s %14llu %14llu\n", "total", "", "",
                  static_cast<unsigned long long>(records), static_cast<unsigned long long>(bytes));
    out += line;
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return Status::OK();
}

}  // namespace

CommandRunner AddInspectCommand(CLI::App& app) {
  auto o = std::make_shared<InspectOptions>();
  CLI::App* cmd = app.add_subcommand("inspect", "Print the records of a topic (up to its end when the command starts)");
  cmd->add_option("uri", o->uri, "log:DIR/TOPIC or kafka://HOST:PORT/TOPIC")->required();
  cmd->add_option("--partition", o->partition, "only this partition")->check(CLI::NonNegativeNumber);
  cmd->add_option("--offset", o->offset,
                  "start at this offset (default: the start of each partition; a partition that ends before it "
                  "is passed over)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--count", o->count, "print at most this many records")->check(CLI::NonNegativeNumber);
  cmd->add_flag("--json", o->json, "one JSON object per record");
  cmd->add_flag("--decode", o->decode, "also print the text (needs --tokenizer)");
  cmd->add_option("--tokenizer", o->tokenizer, "tokenizer.json for --decode");
  AddKafkaOptions(cmd, &o->kafka, /*writing=*/false);
  return [o] { return RunInspect(*o); };
}

CommandRunner AddTopicsCommand(CLI::App& app) {
  auto uri = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  auto kafka = std::make_shared<KafkaCliOptions>();
  CLI::App* cmd = app.add_subcommand("topics", "List a topic's partitions, record counts and bytes");
  cmd->add_option("uri", *uri, "log:DIR/TOPIC or kafka://HOST:PORT/TOPIC")->required();
  cmd->add_flag("--json", *json, "as one JSON object");
  AddKafkaOptions(cmd, kafka.get(), /*writing=*/false);
  return [uri, json, kafka] { return RunTopics(*uri, *json, *kafka); };
}

}  // namespace tokenfeed::cli
