// Tokenizer::EncodeBatch on a tokenizer whose general-path regex can be made
// slow or to fail: which failure is reported, and the stop flag.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "base/usable_cpus.h"
#include "base/utf8.h"
#include "tokenfeed/tokenizer.h"
#include "tokenizer/byte_level_alphabet.h"
#include "tokenizer/test_tokenizers.h"
#include "tokenizer/tokenizer_impl.h"

namespace tokenfeed {
namespace {

// The 256 single bytes and no merges, with one Split stage whose pattern
// backtracks about n*n/2 times on n spaces without a line break.
std::shared_ptr<const Tokenizer> Backtracking() {
  std::string vocab;
  for (int b = 0; b < 256; ++b) {
    if (b) vocab += ",";
    vocab += "\"";
    const char32_t c = tokenizer::kByteLevelAlphabet.byte_to_char[static_cast<size_t>(b)];
    if (c == U'"' || c == U'\\') vocab += "\\";
    AppendUtf8(c, &vocab);
    vocab += "\":" + std::to_string(b);
  }
  const std::string json = R"J({"version":"1.0","added_tokens":[],"normalizer":null,
    "pre_tokenizer":{"type":"Sequence","pretokenizers":[
      {"type":"Split","pattern":{"Regex":"(?:\\s*\\s*[\\r\\n]|\\s+)"},"behavior":"Isolated","invert":false},
      {"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":false}]},
    "post_processor":null,"decoder":{"type":"ByteLevel"},
    "model":{"type":"BPE","dropout":null,"unk_token":null,"continuing_subword_prefix":null,
             "end_of_word_suffix":null,"fuse_unk":false,"byte_fallback":false,"vocab":{)J" +
                           vocab + R"J(},"merges":[]}})J";
  auto tok = Tokenizer::FromJson(json, "backtracking.json");
  EXPECT_TRUE(tok.ok()) << tok.status().ToString();
  return tok.ok() ? *tok : nullptr;
}

TEST(EncodeBatchTest, TheLowestFailingTextIsReportedWithItsOwnMessage) {
  auto tok = Backtracking();
  ASSERT_NE(tok, nullptr);
  std::vector<std::string> texts(200, "fine text");
  texts[150] = std::string(6000, ' ') + "b";
  texts[40] = std::string(6000, ' ') + "c";
  std::vector<std::string_view> views(texts.begin(), texts.end());
  std::vector<std::vector<TokenId>> out;
  Status s = tok->EncodeBatch(views, &out, {}, 2);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message().rfind("text 40: ", 0), 0u) << s.ToString();
  EXPECT_NE(s.message().find("retry-limit-in-match over"), std::string::npos) << s.ToString();
  EXPECT_EQ(out[0].size(), 9u);  // the others were encoded
}

TEST(EncodeBatchTest, AStopRequestEndsABatchOfSlowTextsEarly) {
  auto tok = Backtracking();
  ASSERT_NE(tok, nullptr);
  // Each text fails only after its backtracking limit: a minute or more for
  // the batch on two threads.
  std::vector<std::string> texts(400, std::string(6000, ' ') + "b");
  std::vector<std::string_view> views(texts.begin(), texts.end());
  std::atomic<bool> stop{false};
  EncodeOptions options;
  options.stop = &stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    stop.store(true);
  });
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::vector<TokenId>> out;
  Status s = tok->EncodeBatch(views, &out, options, 2);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  stopper.join();
  EXPECT_EQ(s.code(), StatusCode::kAborted) << s.ToString();
  EXPECT_LT(seconds, 20.0);
}

// A batch's worker threads are new each call, but the scratches they encode
// with (word caches included) are lent by the tokenizer and kept: the next
// call takes the same ones, at most one per usable CPU are kept, and the ids are the
// same as the single-text path's every time.
TEST(EncodeBatchTest, WorkersScratchesAndTheirWordCachesAreKeptBetweenCalls) {
  auto tok = tokenizer::LoadTestTokenizer("deepseek_v3");
  if (!tok) GTEST_SKIP() << "tokenizer files not present (run scripts/setup.sh)";
  const auto& impl = static_cast<const tokenizer::TokenizerImpl&>(*tok);
  std::vector<std::string> texts;
  for (int i = 0; i < 1000; ++i) {
    std::string t;
    for (int w = 0; w < 120; ++w) t += " word" + std::to_string((i * 131 + w * 7) % 997) + (w % 9 ? "" : ",");
    texts.push_back(t);  // about 1 KB each: enough for 16 workers of 64 KiB
  }
  std::vector<std::string_view> views(texts.begin(), texts.end());
  std::vector<std::vector<TokenId>> want(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) ASSERT_TRUE(tok->Encode(texts[i], &want[i]).ok());
  EXPECT_TRUE(impl.kept_batch_scratches().empty());
  const size_t cores = UsableCpuCount();
  std::vector<std::vector<TokenId>> got;
  ASSERT_TRUE(tok->EncodeBatch(views, &got, {}, 2).ok());
  EXPECT_EQ(got, want);
  const std::vector<const tokenizer::EncodeScratch*> first = impl.kept_batch_scratches();
  ASSERT_EQ(first.size(), std::min<size_t>(2, cores));
  // Warm: a worker that started late may have found no text left, but one
  // did the work.
  size_t cached = 0;
  for (const tokenizer::EncodeScratch* s : first) cached += s->bpe.cache.size();
  EXPECT_GT(cached, 0u);
  ASSERT_TRUE(tok->EncodeBatch(views, &got, {}, 2).ok());
  EXPECT_EQ(got, want);
  std::vector<const tokenizer::EncodeScratch*> second = impl.kept_batch_scratches();
  std::sort(second.begin(), second.end());
  std::vector<const tokenizer::EncodeScratch*> sorted_first = first;
  std::sort(sorted_first.begin(), sorted_first.end());
  if (cores >= 2) {
    EXPECT_EQ(second, sorted_first);  // the same scratches, not new ones
  } else {
    // One kept for two workers: the second worker makes a new one, and
    // whichever returns first is kept (it may be one that found no text).
    EXPECT_EQ(second.size(), 1u);
  }
  // 16 workers, each with a scratch: no more than one per usable CPU is kept.
  ASSERT_TRUE(tok->EncodeBatch(views, &got, {}, 16).ok());
  EXPECT_EQ(got, want);
  EXPECT_EQ(impl.kept_batch_scratches().size(), std::min<size_t>(16, cores));
}

}  // namespace
}  // namespace tokenfeed
