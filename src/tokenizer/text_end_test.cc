// Tokenizer::Encode reads no byte past the end of its text: the word cache's
// keys read 16 bytes from a piece's start when they lie in the text, and
// load within the piece near its end. Every prefix of a mixed text is
// encoded from an allocation of exactly its size (a read past it is a heap
// overflow under the address sanitizer) and from a longer buffer with other
// bytes after it, and both must give the same ids. Prefixes that cut a
// character also cover the repaired text (invalid UTF-8 replaced).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenfeed/tokenizer.h"
#include "tokenizer/test_tokenizers.h"

namespace tokenfeed::tokenizer {
namespace {

TEST(TextEndTest, EncodeReadsNothingPastTheText) {
  const std::string text =
      "a I go, 12345 words\n\n  and   Caf\xC3\xA9 na\xC3\xAFve \xE4\xBD\xA0\xE5\xA5\xBD\xE4\xB8\x96\xE7\x95\x8C "
      "x\xF0\x9F\x98\x80y internationalization! \xD0\xBF\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82 end";
  int tested = 0;
  for (const char* name : {"deepseek_v3", "llama3", "qwen3", "gpt4o", "llama2", "gemma3"}) {
    const auto tok = LoadTestTokenizer(name);
    if (!tok) continue;
    ++tested;
    for (size_t n = 0; n <= text.size(); ++n) {
      std::unique_ptr<char[]> exact(new char[n]);
      std::memcpy(exact.get(), text.data(), n);
      std::string with_more = text.substr(0, n) + std::string(32, 'q');
      std::vector<TokenId> alone, followed;
      ASSERT_TRUE(tok->Encode(std::string_view(exact.get(), n), &alone).ok()) << name << " " << n;
      ASSERT_TRUE(tok->Encode(std::string_view(with_more.data(), n), &followed).ok()) << name << " " << n;
      ASSERT_EQ(alone, followed) << name << " " << n;
      if (n == text.size()) EXPECT_GT(alone.size(), 20u) << name;
    }
  }
  if (ReferenceRequired()) EXPECT_EQ(tested, 6);
}

}  // namespace
}  // namespace tokenfeed::tokenizer
