// Fuzzes the tokenizer.json loader (Tokenizer::FromJson) on arbitrary bytes:
// loading returns a tokenizer or an error with a message, never crashes,
// hangs or allocates more than the checked sizes allow (libFuzzer's -rss_limit_mb
// catches the last). A tokenizer it accepts must then encode a fixed
// multilingual text and the input's own first bytes, with special tokens,
// into ids below its id_limit() that decode without error (or are refused as
// Unsupported, for a decoder this build does not know). Aborts on a finding.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "tokenfeed/tokenizer.h"

namespace {

void Fail(const char* what, const tokenfeed::Status& status) {
  std::fprintf(stderr, "tokenizer_json_fuzz: %s: %s\n", what, status.ToString().c_str());
  std::abort();
}

void EncodeChecked(const tokenfeed::Tokenizer& tok, std::string_view text) {
  tokenfeed::EncodeOptions options;
  options.add_special_tokens = true;
  std::vector<tokenfeed::TokenId> ids;
  // Invalid UTF-8 may be refused under the default policy; that is an answer.
  if (!tok.Encode(text, &ids, options).ok()) return;
  for (tokenfeed::TokenId id : ids) {
    if (id >= tok.id_limit()) {
      std::fprintf(stderr, "tokenizer_json_fuzz: id %u is not below id_limit %u\n", static_cast<unsigned>(id),
                   static_cast<unsigned>(tok.id_limit()));
      std::abort();
    }
  }
  auto decoded = tok.Decode(ids);
  // A decoder type this build does not know loads (encoding works) and
  // refuses decoding as Unsupported: that is an answer, not a finding.
  if (!decoded.ok() && decoded.status().code() != tokenfeed::StatusCode::kUnsupported) {
    Fail("decoding its own ids failed", decoded.status());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view json(reinterpret_cast<const char*>(data), size);
  auto loaded = tokenfeed::Tokenizer::FromJson(json, "fuzz/tokenizer.json");
  if (!loaded.ok()) {
    if (loaded.status().message().empty()) Fail("an error without a message", loaded.status());
    return 0;
  }
  const tokenfeed::Tokenizer& tok = **loaded;
  EncodeChecked(tok, "Hello world, 123 4567 — naïve café. 你好，世界！ Привет\n\tend");
  EncodeChecked(tok, json.substr(0, 256));
  return 0;
}
