// tokenfeed replay: one global step of a loader run, produced again from a
// state the run saved, with the record slices of each row and the file and
// line each record came from (include/tokenfeed/replay.h, docs/replay.md).
#include <cstdio>
#include <memory>
#include <optional>

#include "base/json_writer.h"
#include "cli/command.h"
#include "cli/state_file.h"
#include "cli/terminal_text.h"
#include "tokenfeed/replay.h"
#include "tokenfeed/tokenizer.h"

namespace tokenfeed::cli {
namespace {

struct ReplayCliOptions {
  std::string state;
  std::vector<std::string> from_states;
  uint64_t step = 0;
  std::optional<uint32_t> rank, batch_size, world_size;
  bool json = false;
  bool decode = false;
  std::string tokenizer;
  std::vector<std::string> kafka_properties;
  int kafka_timeout_ms = 30000;
};

// The row's text, without its padding.
std::string RowText(const ReplayRow& r, const Tokenizer& tok) {
  std::vector<TokenId> ids;
  const size_t n = r.input_ids.size() - r.padding;
  for (size_t i = 0; i < n; ++i) ids.push_back(static_cast<TokenId>(r.input_ids[i]));
  auto text = tok.Decode(ids);
  return text.ok() ? *text : "<" + text.status().ToString() + ">";
}

void AppendRowJson(const ReplayRow& r, const Tokenizer* tok, std::string* out) {
  JsonWriter j(out);
  j.BeginObject();
  j.Key("step").Uint(r.step);
  j.Key("rank").Uint(r.rank);
  j.Key("row").Uint(r.row);
  j.Key("pieces").BeginArray();
  for (const ReplayPiece& p : r.pieces) {
    j.BeginObject();
    j.Key("uri").String(p.uri);
    j.Key("partition").Uint(p.partition);
    j.Key("offset").Uint(p.offset);
    j.Key("token_start").Uint(p.token_start);
    j.Key("token_end").Uint(p.token_end);
    j.Key("bos").Bool(p.bos);
    j.Key("eos").Bool(p.eos);
    // As `tokenfeed inspect --json` prints a record's source.
    j.Key("source").BeginObject();
    j.Key("kind").String(p.source_kind);
    if (p.source_kind == "message") {
      j.Key("topic").String(p.source_path);
      j.Key("partition").Uint(p.source_line);
      j.Key("offset").Uint(p.source_byte_offset);
    } else {
      j.Key("path").String(p.source_path);
      j.Key("line").Uint(p.source_line);
      j.Key("byte_offset").Uint(p.source_byte_offset);
    }
    j.EndObject();
    j.EndObject();
  }
  j.EndArray();
  j.Key("padding").Uint(r.padding);
  if (tok != nullptr) j.Key("text").String(RowText(r, *tok));
  j.EndObject();
  out->push_back('\n');
}

void AppendRowText(const ReplayRow& r, const Tokenizer* tok, std::string* out) {
  char head[160];
  std::snprintf(head, sizeof(head), "step %llu rank %u row %u: %zu pieces%s\n",
                static_cast<unsigned long long>(r.step), r.rank, r.row, r.pieces.size(),
                r.padding ? (", " + std::to_string(r.padding) + " padding").c_str() : "");
  *out += head;
  for (const ReplayPiece& p : r.pieces) {
    *out += "  ";
    AppendEscapedForTerminal(p.uri, out);
    *out += " partition " + std::to_string(p.partition) + " offset " + std::to_string(p.offset) + " tokens [" +
            std::to_string(p.token_start) + ", " + std::to_string(p.token_end) + ") of " + std::to_string(p.stored) +
            (p.bos ? " +bos" : "") + (p.eos ? " +eos" : "") + "  ";
    AppendEscapedForTerminal(p.source_path, out);
    *out += ":" + std::to_string(p.source_line) + "\n";
  }
  if (tok != nullptr) {
    *out += "  text: ";
    AppendEscapedForTerminal(RowText(r, *tok), out);
    *out += "\n";
  }
}

CommandResult RunReplay(const ReplayCliOptions& o) {
  if (o.decode && o.tokenizer.empty()) {
    return CommandResult::Usage(Status::InvalidArgument("--decode needs --tokenizer FILE"));
  }
  if (o.kafka_timeout_ms <= 0) {
    return CommandResult::Usage(Status::InvalidArgument("--kafka-timeout-ms must be positive"));
  }
  std::shared_ptr<const Tokenizer> tok;
  if (o.decode) {
    TF_ASSIGN_OR_RETURN(tok, Tokenizer::FromFile(o.tokenizer));
  }
  TF_ASSIGN_OR_RETURN(std::string state, ReadStateFile(o.state));
  ReplayOptions options;
  options.rank = o.rank;
  options.batch_size = o.batch_size;
  options.world_size = o.world_size;
  options.kafka_properties = o.kafka_properties;
  options.kafka_timeout_ms = static_cast<uint32_t>(o.kafka_timeout_ms);
  for (const std::string& path : o.from_states) {
    TF_ASSIGN_OR_RETURN(std::string other, ReadStateFile(path));
    options.other_states.push_back(std::move(other));
  }
  // A rank the run did not have is a wrong command line, as inspect's
  // partition past the topic's is.
  if (o.rank) {
    TF_ASSIGN_OR_RETURN(LoaderOptions run, LoaderOptionsFromState(state));
    const uint32_t world = o.world_size.value_or(run.world_size);
    if (*o.rank >= world) {
      return CommandResult::Usage(Status::OutOfRange("--rank " + std::to_string(*o.rank) + ": the run has world_size " +
                                                     std::to_string(world) + " (ranks count from 0)"));
    }
  }
  TF_ASSIGN_OR_RETURN(ReplayedStep step, ReplayStep(state, o.step, options));
  std::string out;
  if (!o.json) {
    out = "# step " + std::to_string(step.step) + " (batch_size " + std::to_string(step.batch_size) +
          " x world_size " + std::to_string(step.world_size) + "), replayed from step " +
          std::to_string(step.started_at_step) + " (" + std::to_string(step.steps_skipped) +
          " steps counted past, " + std::to_string(step.records_read) + " records read)\n";
  }
  for (const ReplayRow& r : step.rows) {
    if (o.json) {
      AppendRowJson(r, tok.get(), &out);
    } else {
      AppendRowText(r, tok.get(), &out);
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return Status::OK();
}

}  // namespace

CommandRunner AddReplayCommand(CLI::App& app) {
  auto o = std::make_shared<ReplayCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "replay", "produce again global step K of the loader run a saved state belongs to, with the records and "
                "source lines of each row");
  cmd->add_option("--state", o->state, "the loader state (JSON) a checkpoint saved")->required();
  cmd->add_option("--step", o->step, "the global step, counting from 0")->required()->check(CLI::NonNegativeNumber);
  cmd->add_option("--from-state", o->from_states,
                  "another state of the same run (an earlier checkpoint; repeatable): replay starts from the latest "
                  "state at or before the step");
  cmd->add_option("--rank", o->rank, "only this rank's rows (default: every rank's)");
  cmd->add_option("--batch-size", o->batch_size, "the run's batch size (default: the state's)");
  cmd->add_option("--world-size", o->world_size, "the run's world size (default: the state's)");
  cmd->add_flag("--json", o->json, "one JSON object per row");
  cmd->add_flag("--decode", o->decode, "also print each row's text (needs --tokenizer)");
  cmd->add_option("--tokenizer", o->tokenizer, "tokenizer.json for --decode");
  cmd->add_option("-X", o->kafka_properties, "Kafka client property key=value, for kafka:// sources (repeatable)");
  cmd->add_option("--kafka-timeout-ms", o->kafka_timeout_ms, "how long to wait for the Kafka cluster")
      ->capture_default_str();
  return [o] { return RunReplay(*o); };
}

}  // namespace tokenfeed::cli
