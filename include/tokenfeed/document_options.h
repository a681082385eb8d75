// DocumentOptions: how a document's text becomes a record's token ids — the
// BOS/EOS around it, the special-token policy, the post-processor and the
// UTF-8 policy — as the ingest, serve, tokenize and Python set them. Only the
// settings; the stage that applies them is document::DocumentEncoder
// (src/document/). A plain value type.
#pragma once

#include "tokenfeed/utf8_policy.h"

namespace tokenfeed::document {

struct DocumentOptions {
  // Put the tokenizer's document-start (BOS) / document-end (EOS) token around
  // each document; an error at Create when the tokenizer has none.
  bool add_bos = false;
  bool add_eos = false;
  // Tokenize special-token text inside documents as the special token itself
  // (the reference's default). Off for training data: document text must not
  // inject control tokens.
  bool keep_special_tokens = false;
  // Run the tokenizer's post-processor (e.g. a template that adds BOS/EOS
  // itself): what `tokenize --add-special-tokens` asks for.
  bool post_processor = false;
  Utf8Policy utf8 = Utf8Policy::kReplace;
};

}  // namespace tokenfeed::document
