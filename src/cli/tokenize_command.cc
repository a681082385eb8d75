// tokenfeed tokenize: JSONL in (plain, gzip or zstd), one JSON array of token
// ids per non-blank line out, in input order (blank lines are skipped, as
// ingest skips them). Lines are read in blocks; each block is parsed and encoded on
// all threads, then written in order, so memory stays bounded by the block
// size whatever the input size.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "base/thread_guard.h"
#include "base/usable_cpus.h"
#include "base/utf8.h"
#include "cli/command.h"
#include "document/document_encoder.h"
#include "text/byte_source.h"
#include "text/line_window.h"
#include "text/json_text_field.h"
#include "tokenfeed/tokenizer.h"

namespace tokenfeed::cli {
namespace {

struct TokenizeOptions {
  std::string tokenizer;
  std::vector<std::string> inputs;
  std::string field = "text";
  int threads = 0;
  std::string utf8 = "replace";
  bool add_special_tokens = false;
  bool split_special_tokens = false;
};

constexpr size_t kBlockBytes = 8 << 20;
// As the ingest's default --max-doc-bytes.
constexpr size_t kMaxLineBytes = size_t{64} << 20;

bool IsBlank(std::string_view line) {
  return line.find_first_not_of(" \t\r\v\f") == std::string_view::npos;
}

// The text of one JSONL line, after the UTF-8 policy (applied to the whole
// line, so that a bad byte inside a string is repaired or named rather than
// failing the JSON parse). `buffer` holds the line with the parser's padding.
Result<std::string> ExtractText(text::JsonTextField& field, std::string_view line, Utf8Policy policy,
                                std::string* buffer) {
  buffer->clear();
  const size_t bad = FindInvalidUtf8(line);
  if (bad != std::string_view::npos) {
    if (policy == Utf8Policy::kReject) {
      return Status::InvalidArgument("invalid UTF-8 at byte offset " + std::to_string(bad) +
                                     " of the line (use --utf8 replace to turn it into U+FFFD)");
    }
    AppendRepairedUtf8(line, buffer);
  } else {
    buffer->append(line);
  }
  const size_t size = buffer->size();
  buffer->append(64, '\0');  // simdjson reads up to 64 bytes past the end
  text::JsonTextField::Outcome out = field.Extract(std::string_view(buffer->data(), size));
  if (!out.ok) return Status::InvalidArgument(out.message);
  return std::string(out.text);
}

void AppendIds(const std::vector<TokenId>& ids, std::string* out) {
  out->push_back('[');
  char buf[16];
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out->push_back(',');
    auto r = std::to_chars(buf, buf + sizeof(buf), ids[i]);
    out->append(buf, r.ptr);
  }
  out->append("]\n");
}

Status RunTokenize(const TokenizeOptions& opts) {
  TokenizerOptions topts;
  TF_ASSIGN_OR_RETURN(auto tokenizer, Tokenizer::FromFile(opts.tokenizer, topts));
  // The reference's semantics: special-token text is the token unless
  // --split-special-tokens; no BOS/EOS beyond what the post-processor adds.
  document::DocumentOptions stage;
  stage.post_processor = opts.add_special_tokens;
  stage.keep_special_tokens = !opts.split_special_tokens;
  TF_ASSIGN_OR_RETURN(stage.utf8, ParseUtf8Policy(opts.utf8));
  TF_ASSIGN_OR_RETURN(const document::DocumentEncoder encoder,
                      document::DocumentEncoder::Create(std::move(tokenizer), stage, opts.tokenizer));
  unsigned threads = opts.threads > 0 ? static_cast<unsigned>(opts.threads)
                                      : UsableCpuCount();

  std::vector<std::string> inputs = opts.inputs;
  if (inputs.empty()) inputs.push_back("-");
  std::string storage, out;
  std::vector<size_t> starts;      // of each line in storage
  std::vector<uint64_t> numbers;   // each line's number in its input
  std::vector<std::string_view> lines;
  std::vector<std::vector<TokenId>> ids;
  std::vector<Status> errors;
  std::vector<char> skipped;  // blank lines, which give no output
  std::vector<std::unique_ptr<text::JsonTextField>> fields;
  std::vector<std::string> buffers(threads);
  for (unsigned t = 0; t < threads; ++t) fields.push_back(std::make_unique<text::JsonTextField>(opts.field));

  for (const std::string& input : inputs) {
    const std::string name = input == "-" ? "<stdin>" : input;
    std::unique_ptr<text::ByteSource> source;
    if (input == "-") {
      source = text::ByteSource::OpenStandardInput();
    } else {
      TF_ASSIGN_OR_RETURN(source, text::ByteSource::Open(input));
    }
    // The ingest's line splitting: a leading byte order mark and one CR
    // before each LF are not part of the text; a line longer than
    // kMaxLineBytes is an error naming it (memory stays bounded).
    text::LineWindow window(source.get(), kMaxLineBytes, kBlockBytes);
    bool more = true;
    while (more) {
      // Up to about kBlockBytes of complete lines, copied out of the window
      // so that the workers can take them together.
      storage.clear();
      starts.clear();
      numbers.clear();
      while (storage.size() < kBlockBytes) {
        text::Line line;
        TF_ASSIGN_OR_RETURN(more, window.Next(&line));
        if (!more) break;
        if (line.too_long) {
          return Status::InvalidArgument(name + ":" + std::to_string(line.number) + ": the line is " +
                                         std::to_string(line.length) + " bytes, more than the " +
                                         std::to_string(kMaxLineBytes) + " a document may have");
        }
        starts.push_back(storage.size());
        numbers.push_back(line.number);
        storage.append(line.text);
      }
      if (starts.empty()) break;
      lines.clear();
      for (size_t i = 0; i < starts.size(); ++i) {
        const size_t end = i + 1 < starts.size() ? starts[i + 1] : storage.size();
        lines.push_back(std::string_view(storage).substr(starts[i], end - starts[i]));
      }
      ids.assign(lines.size(), {});
      errors.assign(lines.size(), Status());
      skipped.assign(lines.size(), 0);
      std::atomic<size_t> next{0};
      auto work = [&](unsigned t) {
        text::JsonTextField& field = *fields[t];
        while (true) {
          size_t i = next.fetch_add(1);
          if (i >= lines.size()) return Status::OK();
          const std::string_view line = lines[i];
          if (IsBlank(line)) {
            skipped[i] = 1;
            continue;
          }
          auto text = ExtractText(field, line, stage.utf8, &buffers[t]);
          if (!text.ok()) {
            errors[i] = text.status();
            continue;
          }
          errors[i] = encoder.Encode(*text, &ids[i]);  // reports what it throws as a Status
        }
      };
      // A worker's failure outside one line's encoding (out of memory reading
      // a JSON field) ends the command with an error, never the process.
      unsigned n = std::min<unsigned>(threads, static_cast<unsigned>(lines.size()));
      Status pool = RunWorkers(n, name + ": tokenizing lines " + std::to_string(numbers.front()) + " to " +
                                      std::to_string(numbers.back()), work);
      TF_RETURN_IF_ERROR(pool);
      out.clear();
      for (size_t i = 0; i < lines.size(); ++i) {
        if (!errors[i].ok()) {
          std::fwrite(out.data(), 1, out.size(), stdout);
          return Status(errors[i].code(), name + ":" + std::to_string(numbers[i]) + ": " + errors[i].message());
        }
        if (!skipped[i]) AppendIds(ids[i], &out);
      }
      if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size()) {
        return Status::IoError(std::string("cannot write the output: ") + std::strerror(errno));
      }
    }
  }
  if (std::fflush(stdout) != 0) return Status::IoError(std::string("cannot write the output: ") + std::strerror(errno));
  return Status::OK();
}

}  // namespace

CommandRunner AddTokenizeCommand(CLI::App& app) {
  auto opts = std::make_shared<TokenizeOptions>();
  CLI::App* cmd =
      app.add_subcommand("tokenize", "Tokenize JSONL documents: one JSON array of ids per non-blank input line");
  cmd->add_option("--tokenizer", opts->tokenizer, "tokenizer.json file")->required()->check(CLI::ExistingFile);
  cmd->add_option("inputs", opts->inputs,
                  "JSONL files, also .gz and .zst (default: standard input; '-' is standard input); blank lines "
                  "are skipped");
  cmd->add_option("--field", opts->field, "JSON field holding the text (dotted path for nested objects)")
      ->capture_default_str();
  cmd->add_option("--threads", opts->threads, "encoding threads (0: every usable CPU)")
      ->check(CLI::Range(0, 4096))->capture_default_str();
  cmd->add_option("--utf8", opts->utf8, "invalid UTF-8: replace with U+FFFD, or reject the line")
      ->check(CLI::IsMember({"replace", "reject"}))
      ->capture_default_str();
  cmd->add_flag("--add-special-tokens", opts->add_special_tokens, "run the post-processor (e.g. add BOS/EOS)");
  cmd->add_flag("--split-special-tokens", opts->split_special_tokens,
                "treat special-token text inside documents as plain text");
  return [opts] { return RunTokenize(*opts); };
}

}  // namespace tokenfeed::cli
