// Test helper: loads one of the tokenizer.json files that scripts/setup.sh
// puts in .cache/tokenizers (or $TOKENFEED_TOKENIZERS_DIR). Returns null when
// the file is absent; with TOKENFEED_REQUIRE_REFERENCE=1 (the test command
// sets it) absence is a test failure instead, so CI never skips silently.
#pragma once

#include <cstdlib>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "tokenfeed/tokenizer.h"

namespace tokenfeed::tokenizer {

inline std::string TestTokenizerPath(const std::string& name) {
  const char* dir = std::getenv("TOKENFEED_TOKENIZERS_DIR");
  std::string base = dir ? dir : std::string(TOKENFEED_SOURCE_DIR) + "/.cache/tokenizers";
  return base + "/" + name + "/tokenizer.json";
}

inline bool ReferenceRequired() {
  const char* v = std::getenv("TOKENFEED_REQUIRE_REFERENCE");
  return v && std::string(v) == "1";
}

inline std::shared_ptr<const Tokenizer> LoadTestTokenizer(const std::string& name, TokenizerOptions opts = {}) {
  auto t = Tokenizer::FromFile(TestTokenizerPath(name), opts);
  if (!t.ok()) {
    if (ReferenceRequired()) ADD_FAILURE() << "cannot load " << name << ": " << t.status().ToString();
    return nullptr;
  }
  return *t;
}

}  // namespace tokenfeed::tokenizer
