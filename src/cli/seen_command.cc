// tokenfeed seen: what a checkpoint has seen -- per source, the records the
// run consumed up to a saved loader state, whole (as offset ranges) and in
// part (with the tokens taken), or whether one document is among them
// (include/tokenfeed/seen.h, docs/replay.md).
#include <charconv>
#include <cstdio>
#include <memory>

#include "base/json_writer.h"
#include "cli/command.h"
#include "cli/state_file.h"
#include "cli/terminal_text.h"
#include "tokenfeed/seen.h"

namespace tokenfeed::cli {
namespace {

struct SeenCliOptions {
  std::string state;
  bool json = false;
  std::string contains;  // FILE:LINE or URI@PARTITION:OFFSET
  std::vector<std::string> kafka_properties;
  int kafka_timeout_ms = 30000;
};

template <typename T>
bool ParseNumber(std::string_view text, T* out) {
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return !text.empty() && ec == std::errc() && p == text.data() + text.size();
}

// URI@PARTITION:OFFSET when the text ends so; else FILE:LINE.
struct ContainsQuery {
  bool record = false;
  std::string uri_or_path;
  std::string head;  // the text before the last ':' (a FILE that holds '@N' too)
  uint32_t partition = 0;
  uint64_t number = 0;  // the offset, or the line
};

Result<ContainsQuery> ParseContains(const std::string& text) {
  ContainsQuery q;
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || !ParseNumber(std::string_view(text).substr(colon + 1), &q.number)) {
    return Status::InvalidArgument("--contains '" + text +
                                   "': give FILE:LINE or URI@PARTITION:OFFSET (numbers in decimal)");
  }
  const std::string head = text.substr(0, colon);
  q.head = head;
  const size_t at = head.rfind('@');
  if (at != std::string::npos && ParseNumber(std::string_view(head).substr(at + 1), &q.partition)) {
    q.record = true;
    q.uri_or_path = head.substr(0, at);
  } else {
    q.uri_or_path = head;
  }
  if (q.uri_or_path.empty()) return Status::InvalidArgument("--contains '" + text + "': no file or URI before ':'");
  return q;
}

void AppendReportJson(const SeenReport& r, std::string* out) {
  JsonWriter j(out);
  j.BeginObject();
  j.Key("samples").Uint(r.samples);
  if (r.step) j.Key("step").Uint(*r.step);
  j.Key("sources").BeginArray();
  for (const SeenSource& s : r.sources) {
    j.BeginObject();
    j.Key("uri").String(s.uri);
    j.Key("all").Bool(s.all);
    j.Key("samples").Uint(s.samples);
    if (s.tokens) j.Key("tokens").Uint(*s.tokens);
    j.Key("whole_records").Uint(s.whole_offsets);
    j.Key("whole").BeginArray();
    for (size_t q = 0; q < s.whole.size(); ++q) {
      j.BeginObject();
      j.Key("partition").Uint(q);
      j.Key("ranges").BeginArray();
      for (const auto& [a, b] : s.whole[q]) {
        j.BeginArray();
        j.Uint(a).Uint(b);
        j.EndArray();
      }
      j.EndArray();
      j.EndObject();
    }
    j.EndArray();
    j.Key("partial").BeginArray();
    for (const SeenPartial& p : s.partial) {
      j.BeginObject();
      j.Key("partition").Uint(p.partition);
      j.Key("offset").Uint(p.offset);
      j.Key("tokens_taken").Uint(p.tokens_taken);
      j.Key("tokens").Uint(p.tokens);
      j.EndObject();
    }
    j.EndArray();
    j.EndObject();
  }
  j.EndArray();
  j.EndObject();
  out->push_back('\n');
}

void AppendReportText(const SeenReport& r, std::string* out) {
  *out += "state at global sample " + std::to_string(r.samples) +
          (r.step ? " (step " + std::to_string(*r.step) + ")" : std::string()) + "\n";
  constexpr size_t kShown = 16;
  for (const SeenSource& s : r.sources) {
    AppendEscapedForTerminal(s.uri, out);
    *out += ": " + std::to_string(s.samples) + " samples" +
            (s.tokens ? ", " + std::to_string(*s.tokens) + " tokens" : std::string()) + "; ";
    if (s.all) {
      *out += "every record seen whole (a pass completed)\n";
      continue;
    }
    *out += std::to_string(s.whole_offsets) + " records whole, " + std::to_string(s.partial.size()) + " in part\n";
    for (size_t q = 0; q < s.whole.size(); ++q) {
      if (s.whole[q].empty()) continue;
      *out += "  partition " + std::to_string(q) + ":";
      for (size_t i = 0; i < std::min(kShown, s.whole[q].size()); ++i) {
        *out += " [" + std::to_string(s.whole[q][i].first) + ", " + std::to_string(s.whole[q][i].second) + ")";
      }
      if (s.whole[q].size() > kShown) {
        *out += " ... (" + std::to_string(s.whole[q].size() - kShown) + " more ranges; --json lists all)";
      }
      *out += "\n";
    }
    for (const SeenPartial& p : s.partial) {
      *out += "  in part: partition " + std::to_string(p.partition) + " offset " + std::to_string(p.offset) + ", " +
              std::to_string(p.tokens_taken) + " of " + std::to_string(p.tokens) + " tokens\n";
    }
  }
}

CommandResult RunSeen(const SeenCliOptions& o) {
  if (o.kafka_timeout_ms <= 0) {
    return CommandResult::Usage(Status::InvalidArgument("--kafka-timeout-ms must be positive"));
  }
  std::optional<ContainsQuery> query;
  if (!o.contains.empty()) {
    auto parsed = ParseContains(o.contains);
    if (!parsed.ok()) return CommandResult::Usage(parsed.status());
    query = *parsed;
  }
  TF_ASSIGN_OR_RETURN(std::string state, ReadStateFile(o.state));
  SeenOptions options;
  options.kafka_properties = o.kafka_properties;
  options.kafka_timeout_ms = static_cast<uint32_t>(o.kafka_timeout_ms);
  TF_ASSIGN_OR_RETURN(SeenReport report, Seen(state, options));
  std::string out;
  if (!query) {
    if (o.json) {
      AppendReportJson(report, &out);
    } else {
      AppendReportText(report, &out);
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    return Status::OK();
  }
  // The records the query names, and the answer for each.
  struct Hit {
    std::string uri;
    uint32_t partition;
    uint64_t offset;
    SeenAnswer answer;
  };
  std::vector<Hit> hits;
  if (query->record) {
    bool known = false;
    for (const SeenSource& s : report.sources) known = known || s.uri == query->uri_or_path;
    if (!known && (query->uri_or_path.starts_with("log:") || query->uri_or_path.starts_with("kafka://"))) {
      return CommandResult::Usage(Status::InvalidArgument("--contains: " + query->uri_or_path +
                                                          " is not one of the state's sources"));
    }
    if (!known) {  // not a source: a file whose name holds '@N'
      query->record = false;
      query->uri_or_path = query->head;
    }
  }
  if (query->record) {
    hits.push_back({query->uri_or_path, query->partition, query->number,
                    SeenContains(report, query->uri_or_path, query->partition, query->number)});
  } else {
    TF_ASSIGN_OR_RETURN(auto refs, FindRecordsOfLine(state, query->uri_or_path, query->number, options));
    for (const SeenRecordRef& ref : refs) {
      const std::string& uri = report.sources[ref.source].uri;
      hits.push_back({uri, ref.partition, ref.offset, SeenContains(report, uri, ref.partition, ref.offset)});
    }
  }
  SeenAnswer answer = SeenAnswer::kNo;
  for (const Hit& h : hits) answer = std::max(answer, h.answer);
  if (o.json) {
    JsonWriter j(&out);
    j.BeginObject();
    j.Key("contains").String(o.contains);
    j.Key("answer").String(SeenAnswerName(answer));
    j.Key("records").BeginArray();
    for (const Hit& h : hits) {
      j.BeginObject();
      j.Key("uri").String(h.uri);
      j.Key("partition").Uint(h.partition);
      j.Key("offset").Uint(h.offset);
      j.Key("answer").String(SeenAnswerName(h.answer));
      j.EndObject();
    }
    j.EndArray();
    j.EndObject();
    out += "\n";
  } else {
    out = std::string(SeenAnswerName(answer)) + "\n";
    if (hits.empty()) out += "  no record of the sources' snapshot is that document\n";
    for (const Hit& h : hits) {
      out += "  ";
      AppendEscapedForTerminal(h.uri, &out);
      out += " partition " + std::to_string(h.partition) + " offset " + std::to_string(h.offset) + ": " +
             SeenAnswerName(h.answer) + "\n";
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return Status::OK();
}

}  // namespace

CommandRunner AddSeenCommand(CLI::App& app) {
  auto o = std::make_shared<SeenCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "seen", "what a checkpoint has seen: per source, the documents the run consumed up to a saved loader state");
  cmd->add_option("--state", o->state, "the loader state (JSON) a checkpoint saved")->required();
  cmd->add_flag("--json", o->json, "as one JSON object");
  cmd->add_option("--contains", o->contains,
                  "answer yes, partly or no for one document: FILE:LINE (as its records store the path) or "
                  "URI@PARTITION:OFFSET");
  cmd->add_option("-X", o->kafka_properties, "Kafka client property key=value, for kafka:// sources (repeatable)");
  cmd->add_option("--kafka-timeout-ms", o->kafka_timeout_ms, "how long to wait for the Kafka cluster")
      ->capture_default_str();
  return [o] { return RunSeen(*o); };
}

}  // namespace tokenfeed::cli
