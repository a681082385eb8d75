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
#include <thread>
#include <vector>

#include "base/thread_guard.h"
#include "base/utf8.h"
#include "cli/command.h"
#include "document/document_encoder.h"
#include "text/byte_source.h"
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

bool IsBlank(std::string_view line) {
  return line.find_first_not_of(" \t\r\v\f") == std::string_view::npos;
}

// Reads whole lines, a block at a time, from standard input or from a file
// through text::ByteSource (which decompresses .gz and .zst).
class LineBlockReader {
 public:
  LineBlockReader(std::FILE* f, std::string name) : f_(f), name_(std::move(name)) {}
  LineBlockReader(std::unique_ptr<text::ByteSource> source, std::string name)
      : source_(std::move(source)), name_(std::move(name)) {}

  // Fills `lines` with up to about kBlockBytes of complete lines (without
  // their "\n"). Returns false at the end of the input.
  Result<bool> Next(std::string* storage, std::vector<std::string_view>* lines) {
    lines->clear();
    storage->swap(carry_);
    carry_.clear();
    while (storage->size() < kBlockBytes && !eof_) {
      size_t old = storage->size();
      storage->resize(old + (1 << 20));
      size_t n = 0;
      if (source_) {
        TF_ASSIGN_OR_RETURN(n, source_->Read(storage->data() + old, 1 << 20));
      } else {
        n = std::fread(storage->data() + old, 1, 1 << 20, f_);
        if (n == 0 && std::ferror(f_)) {
          return Status::IoError("cannot read '" + name_ + "': " + std::strerror(errno));
        }
      }
      storage->resize(old + n);
      if (n == 0) eof_ = true;
    }
    // Keep a trailing partial line for the next block unless the input ended.
    size_t end = storage->size();
    if (!eof_) {
      size_t last_nl = storage->rfind('\n');
      end = last_nl == std::string::npos ? 0 : last_nl + 1;
      carry_.assign(*storage, end, std::string::npos);
      if (end == 0 && storage->size() >= kBlockBytes) {
        // One line longer than a block: keep reading it into the carry.
        carry_.swap(*storage);
        storage->clear();
        return Next(storage, lines);
      }
      storage->resize(end);
    }
    std::string_view data(*storage);
    size_t pos = 0;
    while (pos < data.size()) {
      size_t nl = data.find('\n', pos);
      if (nl == std::string_view::npos) nl = data.size();
      lines->push_back(data.substr(pos, nl - pos));
      pos = nl + 1;
    }
    return !lines->empty() || !eof_;
  }

 private:
  std::FILE* f_ = nullptr;
  std::unique_ptr<text::ByteSource> source_;
  std::string name_;
  std::string carry_;
  bool eof_ = false;
};

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
                                      : std::max(1u, std::thread::hardware_concurrency());

  std::vector<std::string> inputs = opts.inputs;
  if (inputs.empty()) inputs.push_back("-");
  std::string storage, out;
  std::vector<std::string_view> lines;
  std::vector<std::vector<TokenId>> ids;
  std::vector<Status> errors;
  std::vector<char> skipped;  // blank lines, which give no output
  std::vector<std::unique_ptr<text::JsonTextField>> fields;
  std::vector<std::string> buffers(threads);
  for (unsigned t = 0; t < threads; ++t) fields.push_back(std::make_unique<text::JsonTextField>(opts.field));

  for (const std::string& input : inputs) {
    const std::string name = input == "-" ? "<stdin>" : input;
    std::unique_ptr<LineBlockReader> block_reader;
    if (input == "-") {
      block_reader = std::make_unique<LineBlockReader>(stdin, name);
    } else {
      TF_ASSIGN_OR_RETURN(auto source, text::ByteSource::Open(input));
      block_reader = std::make_unique<LineBlockReader>(std::move(source), name);
    }
    LineBlockReader& reader = *block_reader;
    uint64_t first_line = 1;
    Status status;
    while (true) {
      auto more = reader.Next(&storage, &lines);
      if (!more.ok()) {
        status = more.status();
        break;
      }
      if (!*more) break;
      ids.assign(lines.size(), {});
      errors.assign(lines.size(), Status());
      skipped.assign(lines.size(), 0);
      std::atomic<size_t> next{0};
      auto work = [&](unsigned t) {
        text::JsonTextField& field = *fields[t];
        while (true) {
          size_t i = next.fetch_add(1);
          if (i >= lines.size()) return Status::OK();
          std::string_view line = lines[i];
          if (first_line + i == 1 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);
          if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
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
      Status pool = RunWorkers(n, name + ": tokenizing lines " + std::to_string(first_line) + " to " +
                                      std::to_string(first_line + lines.size() - 1), work);
      TF_RETURN_IF_ERROR(pool);
      out.clear();
      for (size_t i = 0; i < lines.size(); ++i) {
        if (!errors[i].ok()) {
          std::fwrite(out.data(), 1, out.size(), stdout);
          return Status(errors[i].code(), name + ":" + std::to_string(first_line + i) + ": " + errors[i].message());
        }
        if (!skipped[i]) AppendIds(ids[i], &out);
      }
      if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size()) {
        status = Status::IoError(std::string("cannot write the output: ") + std::strerror(errno));
        break;
      }
      first_line += lines.size();
    }
    TF_RETURN_IF_ERROR(status);
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
  cmd->add_option("--threads", opts->threads, "encoding threads (0: all cores)")
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
