// DocumentEncoder: the one "document text -> token ids of a record" stage that
// the ingest, `serve` and `tokenize` share: the special-token policy (text
// that spells a special token is split as plain text unless kept), the
// document-start and document-end tokens put around each document, the
// tokenizer's post-processor, and the UTF-8 policy. Not the reading or
// cleaning of documents (text/), nor the record framing (record/).
// Immutable after Create: Encode and EncodeBatch may run on many threads.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenfeed/document_options.h"
#include "tokenfeed/record.h"
#include "tokenfeed/status.h"
#include "tokenfeed/tokenizer.h"
#include "tokenfeed/utf8_policy.h"

namespace tokenfeed::document {

class DocumentEncoder {
 public:
  // `tokenizer_name` (its file) is named in errors.
  static Result<DocumentEncoder> Create(std::shared_ptr<const Tokenizer> tokenizer, const DocumentOptions& options,
                                        std::string_view tokenizer_name);

  // Appends the document's ids to `ids`: BOS, the text's tokens, EOS.
  // InvalidArgument when the tokenizer refuses the text (invalid UTF-8 under
  // kReject, a regex search past its limits); `ids` then holds a partial
  // document and the caller drops it.
  Status Encode(std::string_view text, std::vector<TokenId>* ids) const;

  // Each text's ids in `out` (assigned), on up to `threads` threads (0: all
  // cores). Fails with the lowest failing text's error ("text N: ..."), or
  // Aborted once `stop` is set.
  Status EncodeBatch(std::span<const std::string_view> texts, std::vector<std::vector<TokenId>>* out, int threads,
                     const std::atomic<bool>* stop = nullptr) const;

  const Tokenizer& tokenizer() const { return *tokenizer_; }
  const DocumentOptions& options() const { return options_; }
  std::optional<TokenId> bos() const { return bos_; }
  std::optional<TokenId> eos() const { return eos_; }
  // The record attribute that says which of BOS/EOS this stage adds
  // (record::kEndsAttribute: "bos", "eos" or "bos,eos"); nullopt when it adds
  // neither, and then the records carry none.
  std::optional<record::Attribute> ends_attribute() const;

 private:
  DocumentEncoder(std::shared_ptr<const Tokenizer> tokenizer, const DocumentOptions& options);

  std::shared_ptr<const Tokenizer> tokenizer_;
  DocumentOptions options_;
  EncodeOptions encode_;
  std::optional<TokenId> bos_, eos_;
};

}  // namespace tokenfeed::document
