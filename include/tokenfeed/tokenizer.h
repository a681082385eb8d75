// tokenfeed::Tokenizer: an exact reimplementation of Hugging Face byte-level
// BPE tokenizers, loaded from a tokenizer.json. Encode gives the ids that
// tokenizers' `Tokenizer.encode(text, add_special_tokens=...)` gives, token for
// token; it is many times faster. WordPiece, Unigram and any component it
// does not implement are load-time errors that name the component.
// A Tokenizer is immutable once loaded: every method is const and may be
// called from many threads at once (each thread keeps its own small cache).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenfeed/status.h"
#include "tokenfeed/utf8_policy.h"

namespace tokenfeed {

using TokenId = uint32_t;


struct TokenizerOptions {
  // Use the hand-written pre-tokenizer scanners for the patterns that have
  // one (identical results, much faster). false runs every pattern through
  // the general regex engine.
  bool fast_pretokenizers = true;
  // The word cache's bound, per encoding thread and tokenizer: the BPE
  // results of up to this many distinct pre-tokenized words are kept, so a
  // word seen before costs a lookup instead of a merge loop. Memory grows
  // with the words seen: a table of 32-byte slots (32 MiB at the default,
  // once full), plus 4 bytes an id of words of several tokens and the bytes
  // of words over 16 bytes, within a budget of 32 bytes a word of the bound
  // (about 44 MB a thread in all once full on mixed multilingual text; at
  // most about 80 MiB whatever the text). When full, the words found again
  // since the last time it was full stay (up to half the bound) and the rest
  // go. EncodeBatch keeps its workers' caches between calls, up to one a
  // core, for the tokenizer's life. Larger suits a long run over text of a
  // wide vocabulary; smaller bounds memory with many threads. 1 to 2^26; ids
  // never depend on it.
  size_t word_cache_entries = size_t{1} << 19;
};

struct EncodeOptions {
  // Run the post-processor (e.g. TemplateProcessing adds BOS/EOS).
  bool add_special_tokens = false;
  // Treat special added tokens that occur in the text as plain text, so that
  // document text cannot inject control tokens (the reference's
  // encode_special_tokens). Off by default, as in the reference.
  bool split_special_tokens = false;
  Utf8Policy utf8 = Utf8Policy::kReplace;
  // EncodeBatch looks at it between texts: once it is true, the call ends
  // with Aborted, the texts not yet encoded left empty (a stop request need
  // not wait for a batch of slow texts). Null: never.
  const std::atomic<bool>* stop = nullptr;
};

struct DecodeOptions {
  bool skip_special_tokens = false;
};

class Tokenizer {
 public:
  // Loads a tokenizer.json. Errors name the file and the JSON path of what
  // is wrong or unsupported (e.g. "model.type: WordPiece is not supported").
  static Result<std::shared_ptr<const Tokenizer>> FromFile(const std::string& path,
                                                           const TokenizerOptions& options = {});
  // The same from JSON text; `origin` names it in error messages.
  static Result<std::shared_ptr<const Tokenizer>> FromJson(std::string_view json, std::string_view origin,
                                                           const TokenizerOptions& options = {});

  virtual ~Tokenizer() = default;

  // Appends the ids of `text` to `ids`. Fails only for invalid UTF-8 under
  // Utf8Policy::kReject; `ids` is then unchanged.
  virtual Status Encode(std::string_view text, std::vector<TokenId>* ids,
                        const EncodeOptions& options = {}) const = 0;

  // Encodes into a caller-provided buffer and returns the number of ids. When
  // they do not fit, returns OutOfRange naming the number needed; the
  // buffer's contents are then unspecified.
  virtual Result<size_t> EncodeInto(std::string_view text, std::span<TokenId> out,
                                    const EncodeOptions& options = {}) const = 0;

  // Encodes many texts on up to `threads` threads (0: every CPU this process
  // may use: its affinity mask, lowered to its cgroup CPU quota); results in
  // input order. On failure, the status names the index of the first text
  // that failed.
  virtual Status EncodeBatch(std::span<const std::string_view> texts, std::vector<std::vector<TokenId>>* out,
                             const EncodeOptions& options = {}, int threads = 0) const = 0;

  // Ids back to text (the ByteLevel decoder; invalid UTF-8 becomes U+FFFD).
  // An id outside the vocabulary is InvalidArgument naming it.
  virtual Result<std::string> Decode(std::span<const TokenId> ids, const DecodeOptions& options = {}) const = 0;

  virtual std::optional<TokenId> TokenToId(std::string_view token) const = 0;
  virtual std::optional<std::string> IdToToken(TokenId id) const = 0;
  virtual bool IsSpecial(TokenId id) const = 0;

  // One past the largest id, added tokens included (the embedding size a
  // model needs).
  virtual uint32_t id_limit() const = 0;
  // The usual document-start / document-end tokens of this vocabulary, when
  // it has them: from the post-processor's template, else from well-known
  // names (<｜begin▁of▁sentence｜>, <|begin_of_text|>, <|endoftext|>, <s>, </s>, ...).
  virtual std::optional<TokenId> bos_id() const = 0;
  virtual std::optional<TokenId> eos_id() const = 0;

  // A one-line description of the pipeline, e.g. for logs and benchmarks:
  // which pre-tokenizer stages run on the fast path.
  virtual std::string Describe() const = 0;
};

}  // namespace tokenfeed
