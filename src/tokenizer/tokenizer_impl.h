// TokenizerImpl: the assembled pipeline behind tokenfeed::Tokenizer --
// added tokens, normalizer, pre-tokenizer, BPE, post-processor, decoder --
// and the per-thread scratch that encoding uses. Built by tokenizer_json.cc;
// the encode and decode paths are in tokenizer.cc.
// Immutable after construction but for the batch scratches below; each
// thread encodes with its own scratch: a thread's own for Encode, one lent by
// the tokenizer for each worker of EncodeBatch. The lent ones are kept
// between calls (up to one per usable CPU), so their word caches outlive the
// threads of one call; they are freed with the tokenizer.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tokenfeed/tokenizer.h"
#include "tokenizer/added_vocabulary.h"
#include "tokenizer/bpe_model.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/token_decoder.h"

namespace tokenfeed::tokenizer {

struct PostProcessorSpec {
  std::vector<uint32_t> prefix;  // ids put before the text's ids
  std::vector<uint32_t> suffix;  // and after them
  std::string description = "none";
};

// kByteLevel: the ByteLevel decoder alone (a fast path on bytes); kChain:
// any other supported decoder, run on token texts by a TokenDecoder.
enum class DecoderKind { kByteLevel, kChain, kNone, kUnsupported };

struct EncodeScratch {
  explicit EncodeScratch(size_t word_cache_entries) : bpe(word_cache_entries) {}
  std::string repaired;
  std::string normalized;
  std::vector<AddedSplit> raw_splits;
  std::vector<AddedSplit> normalized_splits;
  PreTokenizeScratch pre;
  std::vector<std::string_view> pieces;
  BpeScratch bpe;
  std::vector<TokenId> into;  // EncodeInto's staging buffer
};

class TokenizerImpl final : public Tokenizer {
 public:
  TokenizerImpl(std::unique_ptr<Normalizer> normalizer, std::unique_ptr<PreTokenizer> pre_tokenizer,
                std::vector<AddedTokenSpec> added_tokens, BpeModel model, PostProcessorSpec post,
                DecoderKind decoder, std::unique_ptr<TokenDecoder> token_decoder, std::string decoder_name,
                std::string origin);

  // TokenizerOptions::word_cache_entries; set before the tokenizer is shared.
  void set_word_cache_entries(size_t n) { word_cache_entries_ = n; }

  Status Encode(std::string_view text, std::vector<TokenId>* ids, const EncodeOptions& options) const override;
  Result<size_t> EncodeInto(std::string_view text, std::span<TokenId> out,
                            const EncodeOptions& options) const override;
  Status EncodeBatch(std::span<const std::string_view> texts, std::vector<std::vector<TokenId>>* out,
                     const EncodeOptions& options, int threads) const override;
  Result<std::string> Decode(std::span<const TokenId> ids, const DecodeOptions& options) const override;
  std::optional<TokenId> TokenToId(std::string_view token) const override;
  std::optional<std::string> IdToToken(TokenId id) const override;
  bool IsSpecial(TokenId id) const override;
  uint32_t id_limit() const override { return id_limit_; }
  std::optional<TokenId> bos_id() const override { return bos_; }
  std::optional<TokenId> eos_id() const override { return eos_; }
  std::string Describe() const override;

  // Encodes valid UTF-8 with the caller's scratch (the batch and benchmark paths).
  void EncodeValid(std::string_view text, bool split_special, EncodeScratch* scratch,
                   std::vector<TokenId>* ids) const;
  Status EncodeWith(std::string_view text, const EncodeOptions& options, EncodeScratch* scratch,
                    std::vector<TokenId>* ids) const;
  EncodeScratch* ThreadScratch() const;
  // A scratch for one EncodeBatch worker: one kept from an earlier call
  // (its word cache warm) or a new one; given back when the worker ends.
  std::unique_ptr<EncodeScratch> BorrowBatchScratch() const;
  void ReturnBatchScratch(std::unique_ptr<EncodeScratch> scratch) const noexcept;
  // The batch scratches kept now (tests).
  std::vector<const EncodeScratch*> kept_batch_scratches() const;
  // Decode for DecoderKind::kChain: token texts through the TokenDecoder.
  Result<std::string> DecodeTokenTexts(std::span<const TokenId> ids, const DecodeOptions& options) const;
  const BpeModel& model() const { return model_; }

 private:
  std::unique_ptr<Normalizer> normalizer_;
  std::unique_ptr<PreTokenizer> pre_tokenizer_;
  AddedVocabulary added_;
  BpeModel model_;
  PostProcessorSpec post_;
  DecoderKind decoder_;
  std::unique_ptr<TokenDecoder> token_decoder_;  // for kChain
  std::string decoder_name_;
  std::string origin_;
  std::vector<std::string> added_decoded_;  // by index in added_.tokens(): what the decoder makes of each
  uint32_t id_limit_ = 0;
  std::optional<TokenId> bos_, eos_;
  uint64_t uid_;
  size_t word_cache_entries_ = WordCache::kDefaultMaxEntries;
  // Batch scratches between calls, at most max(1, hardware threads).
  mutable std::mutex batch_scratch_mu_;
  mutable std::vector<std::unique_ptr<EncodeScratch>> batch_scratches_;
};

}  // namespace tokenfeed::tokenizer
