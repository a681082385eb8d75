#include <algorithm>
#include <atomic>
#include <mutex>
#include <new>
#include <string>

#include "base/thread_guard.h"
#include "base/usable_cpus.h"
#include "base/utf8.h"
#include "tokenizer/split_matcher.h"
#include "tokenizer/tokenizer_impl.h"

namespace tokenfeed::tokenizer {
namespace {

std::atomic<uint64_t> g_next_uid{1};

// The first of `names` that is a special added token (Gemma 3 has a plain
// added token "</s>" beside its special "<eos>").
std::optional<TokenId> FirstKnown(const AddedVocabulary& added, std::initializer_list<std::string_view> names) {
  for (std::string_view n : names) {
    const AddedTokenSpec* t = added.FindByContent(n);
    if (t != nullptr && t->special) return t->id;
  }
  return std::nullopt;
}

}  // namespace

TokenizerImpl::TokenizerImpl(std::unique_ptr<Normalizer> normalizer, std::unique_ptr<PreTokenizer> pre_tokenizer,
                             std::vector<AddedTokenSpec> added_tokens, BpeModel model, PostProcessorSpec post,
                             DecoderKind decoder, std::unique_ptr<TokenDecoder> token_decoder,
                             std::string decoder_name, std::string origin)
    : normalizer_(std::move(normalizer)),
      pre_tokenizer_(std::move(pre_tokenizer)),
      added_(std::move(added_tokens), normalizer_.get()),
      model_(std::move(model)),
      post_(std::move(post)),
      decoder_(decoder),
      token_decoder_(std::move(token_decoder)),
      decoder_name_(std::move(decoder_name)),
      origin_(std::move(origin)),
      uid_(g_next_uid.fetch_add(1)) {
  id_limit_ = model_.id_limit();
  for (const AddedTokenSpec& t : added_.tokens()) {
    added_decoded_.push_back(ByteLevelTokenBytes(t.content));
    id_limit_ = std::max(id_limit_, t.id + 1);
  }
  if (!post_.prefix.empty()) bos_ = post_.prefix.front();
  if (!post_.suffix.empty()) eos_ = post_.suffix.back();
  if (!bos_) {
    bos_ = FirstKnown(added_, {"<\xEF\xBD\x9C" "begin\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>",
                               "<|begin_of_text|>", "<s>", "<|startoftext|>", "<bos>"});
  }
  if (!eos_) {
    eos_ = FirstKnown(added_, {"<\xEF\xBD\x9C" "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>",
                               "<|end_of_text|>", "<|endoftext|>", "</s>", "<eos>"});
  }
}

EncodeScratch* TokenizerImpl::ThreadScratch() const {
  // A few slots per thread, so a thread that alternates between tokenizers
  // keeps each one's word cache.
  struct Slot {
    uint64_t uid = 0;
    std::unique_ptr<EncodeScratch> scratch;
  };
  thread_local Slot slots[4];
  thread_local unsigned next_victim = 0;
  for (Slot& s : slots) {
    if (s.uid == uid_) return s.scratch.get();
  }
  Slot& s = slots[next_victim++ % 4];
  s.uid = uid_;
  s.scratch = std::make_unique<EncodeScratch>(word_cache_entries_);
  return s.scratch.get();
}

void TokenizerImpl::EncodeValid(std::string_view text, bool split_special, EncodeScratch* scratch,
                                std::vector<TokenId>* ids) const {
  auto& raw = scratch->raw_splits;
  raw.clear();
  added_.raw_matcher().Split(text, split_special, &raw);
  for (size_t i = 0; i < raw.size(); ++i) {
    const AddedSplit s = raw[i];
    if (s.id >= 0) {
      ids->push_back(static_cast<TokenId>(s.id));
      continue;
    }
    if (s.begin == s.end) continue;
    std::string_view segment = text.substr(s.begin, s.end - s.begin);
    std::string_view norm = normalizer_ ? normalizer_->Normalize(segment, &scratch->normalized) : segment;
    auto& normalized_splits = scratch->normalized_splits;
    normalized_splits.clear();
    added_.normalized_matcher().Split(norm, split_special, &normalized_splits);
    for (const AddedSplit& t : normalized_splits) {
      if (t.id >= 0) {
        ids->push_back(static_cast<TokenId>(t.id));
        continue;
      }
      if (t.begin == t.end) continue;
      scratch->pieces.clear();
      // Whether this text starts the input, as Metaspace's "first" scheme asks.
      const bool at_input_start = s.begin == 0 && t.begin == 0;
      pre_tokenizer_->Run(norm.substr(t.begin, t.end - t.begin), at_input_start, &scratch->pre, &scratch->pieces);
      // The pieces go in blocks of kBlock: first every piece's key is made
      // and its word-cache slot fetched, then each is looked up. On text
      // seen before the probes' memory waits overlap, up to kBlock of them,
      // and the probe starts without the hash (a ring fetching 8 pieces
      // ahead was 4-10 % slower, blocks of 64 and 128 level with 32;
      // docs/tokenizer.md). A piece's key may read 16 bytes from its start
      // when they lie in the text (not near its end, and not for a piece a
      // pre-tokenizer wrote into a buffer of its own): one unsigned compare
      // tells.
      constexpr size_t kBlock = 32;
      const std::vector<std::string_view>& pieces = scratch->pieces;
      const size_t n = pieces.size();
      const auto text_begin = reinterpret_cast<uintptr_t>(norm.data());
      const size_t padded_before = norm.size() >= 16 ? norm.size() - 15 : 0;
      WordCache::Key keys[kBlock];
      for (size_t first = 0; first < n; first += kBlock) {
        const size_t count = std::min(kBlock, n - first);
        const std::string_view* block = pieces.data() + first;
        for (size_t j = 0; j < count; ++j) {
          const bool padded = reinterpret_cast<uintptr_t>(block[j].data()) - text_begin < padded_before;
          keys[j] = model_.PrefetchPiece(block[j], padded, &scratch->bpe);
        }
        for (size_t j = 0; j < count; ++j) model_.EncodeKeyedPiece(block[j], keys[j], &scratch->bpe, ids);
      }
    }
  }
}

std::unique_ptr<EncodeScratch> TokenizerImpl::BorrowBatchScratch() const {
  {
    std::lock_guard<std::mutex> lock(batch_scratch_mu_);
    if (!batch_scratches_.empty()) {
      std::unique_ptr<EncodeScratch> s = std::move(batch_scratches_.back());
      batch_scratches_.pop_back();
      return s;
    }
  }
  return std::make_unique<EncodeScratch>(word_cache_entries_);
}

void TokenizerImpl::ReturnBatchScratch(std::unique_ptr<EncodeScratch> scratch) const noexcept {
  static const size_t keep = UsableCpuCount();
  std::lock_guard<std::mutex> lock(batch_scratch_mu_);
  if (batch_scratches_.size() >= keep) return;  // more workers than usable CPUs: this one is freed
  try {
    batch_scratches_.push_back(std::move(scratch));
  } catch (...) {
    // No room to keep it: it is freed, and the next call makes a new one.
  }
}

std::vector<const EncodeScratch*> TokenizerImpl::kept_batch_scratches() const {
  std::lock_guard<std::mutex> lock(batch_scratch_mu_);
  std::vector<const EncodeScratch*> kept;
  for (const auto& s : batch_scratches_) kept.push_back(s.get());
  return kept;
}

Status TokenizerImpl::EncodeWith(std::string_view text, const EncodeOptions& options, EncodeScratch* scratch,
                                 std::vector<TokenId>* ids) const {
  try {
    const RegexDocumentBudget budget(text.size());
    std::string_view valid = text;
    size_t bad = FindInvalidUtf8(text);
    if (bad != std::string_view::npos) {
      if (options.utf8 == Utf8Policy::kReject) {
        return Status::InvalidArgument("invalid UTF-8 at byte offset " + std::to_string(bad) +
                                       " (use the 'replace' UTF-8 policy to turn invalid bytes into U+FFFD)");
      }
      scratch->repaired.clear();
      AppendRepairedUtf8(text, &scratch->repaired);
      valid = scratch->repaired;
    }
    if (options.add_special_tokens) ids->insert(ids->end(), post_.prefix.begin(), post_.prefix.end());
    EncodeValid(valid, options.split_special_tokens, scratch, ids);
    if (options.add_special_tokens) ids->insert(ids->end(), post_.suffix.begin(), post_.suffix.end());
    return Status::OK();
  } catch (const RegexSearchError& e) {
    return Status::InvalidArgument(e.what());
  } catch (const std::bad_alloc&) {
    return Status::ResourceExhausted("out of memory while encoding a text of " + std::to_string(text.size()) +
                                     " bytes with " + origin_);
  } catch (...) {
    return StatusOfCurrentException("encoding a text of " + std::to_string(text.size()) + " bytes with " + origin_);
  }
}

Status TokenizerImpl::Encode(std::string_view text, std::vector<TokenId>* ids, const EncodeOptions& options) const {
  EncodeScratch* scratch;
  try {
    scratch = ThreadScratch();
  } catch (...) {
    return StatusOfCurrentException("encoding");
  }
  return EncodeWith(text, options, scratch, ids);
}

Result<size_t> TokenizerImpl::EncodeInto(std::string_view text, std::span<TokenId> out,
                                         const EncodeOptions& options) const {
  EncodeScratch* scratch;
  try {
    scratch = ThreadScratch();
  } catch (...) {
    return StatusOfCurrentException("encoding");
  }
  scratch->into.clear();
  TF_RETURN_IF_ERROR(EncodeWith(text, options, scratch, &scratch->into));
  if (scratch->into.size() > out.size()) {
    return Status::OutOfRange("the text has " + std::to_string(scratch->into.size()) +
                              " tokens but the buffer holds " + std::to_string(out.size()));
  }
  std::copy(scratch->into.begin(), scratch->into.end(), out.begin());
  return scratch->into.size();
}

Status TokenizerImpl::EncodeBatch(std::span<const std::string_view> texts, std::vector<std::vector<TokenId>>* out,
                                  const EncodeOptions& options, int threads) const {
  out->assign(texts.size(), {});
  unsigned n = threads > 0 ? static_cast<unsigned>(threads) : UsableCpuCount();
  size_t total_bytes = 0;
  for (auto t : texts) total_bytes += t.size();
  // Small batches are not worth a thread start.
  n = static_cast<unsigned>(std::min<size_t>({n, texts.size(), std::max<size_t>(1, total_bytes / (64 << 10))}));
  std::atomic<size_t> next{0};
  // The failure of the first failing text (by index); later texts still run,
  // so that which one is reported does not depend on the threads' timing.
  std::atomic<bool> stopped{false};
  std::mutex failure_mu;
  size_t failed_index = texts.size();
  Status failure;
  auto fail = [&](size_t i, Status s) {
    std::lock_guard<std::mutex> lock(failure_mu);
    if (i < failed_index) {
      failed_index = i;
      failure = std::move(s);
    }
  };
  // Nothing may leave a worker thread (RunWorkers keeps what escapes); a text
  // whose encoding throws fails alone (EncodeWith turns it into its Status).
  Status pool = RunWorkers(n, "encoding a batch", [&](unsigned) {
    // A kept scratch, so that a word cache warmed by one call serves the
    // next (the worker threads themselves are new each call).
    struct Lent {
      const TokenizerImpl* owner;
      std::unique_ptr<EncodeScratch> scratch;
      ~Lent() { owner->ReturnBatchScratch(std::move(scratch)); }
    } lent{this, BorrowBatchScratch()};
    EncodeScratch* scratch = lent.scratch.get();
    constexpr size_t kChunk = 16;
    while (true) {
      size_t begin = next.fetch_add(kChunk);
      if (begin >= texts.size()) return Status::OK();
      size_t end = std::min(texts.size(), begin + kChunk);
      for (size_t i = begin; i < end; ++i) {
        if (options.stop != nullptr && options.stop->load(std::memory_order_relaxed)) {
          stopped.store(true);
          return Status::OK();
        }
        // EncodeWith catches what encoding throws (no allocation per text here).
        Status s = EncodeWith(texts[i], options, scratch, &(*out)[i]);
        if (!s.ok()) fail(i, std::move(s));
      }
    }
  });
  if (stopped.load()) return Status::Aborted("encoding a batch of " + std::to_string(texts.size()) + " texts: stopped");
  if (failed_index < texts.size()) return failure.WithContext("text " + std::to_string(failed_index));
  return pool;
}

Result<std::string> TokenizerImpl::Decode(std::span<const TokenId> ids, const DecodeOptions& options) const {
  if (decoder_ == DecoderKind::kUnsupported) {
    return Status::Unsupported(origin_ + ": decoder '" + decoder_name_ + "' is not supported; encoding works");
  }
  if (decoder_ == DecoderKind::kChain) return DecodeTokenTexts(ids, options);
  std::string bytes;
  std::vector<std::string_view> words;
  for (size_t i = 0; i < ids.size(); ++i) {
    TokenId id = ids[i];
    std::string_view piece;
    std::string_view text;
    if (const AddedTokenSpec* t = added_.FindById(id)) {
      if (t->special && options.skip_special_tokens) continue;
      piece = added_decoded_[static_cast<size_t>(t - added_.tokens().data())];
      text = t->content;
    } else {
      text = model_.TokenText(id);
      if (text.empty()) {
        return Status::InvalidArgument("cannot decode id " + std::to_string(id) + " at position " + std::to_string(i) +
                                       ": it is not in the vocabulary of " + origin_);
      }
      piece = model_.DecodedBytes(id);
    }
    if (decoder_ == DecoderKind::kByteLevel) {
      bytes.append(piece);
    } else {
      words.push_back(text);
    }
  }
  if (decoder_ == DecoderKind::kNone) {
    // Without a decoder the reference joins the tokens with spaces.
    for (size_t i = 0; i < words.size(); ++i) {
      if (i) bytes.push_back(' ');
      bytes.append(words[i]);
    }
    return bytes;
  }
  if (IsValidUtf8(bytes)) return bytes;
  std::string repaired;
  AppendRepairedUtf8(bytes, &repaired);
  return repaired;
}

Result<std::string> TokenizerImpl::DecodeTokenTexts(std::span<const TokenId> ids, const DecodeOptions& options) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    const TokenId id = ids[i];
    if (const AddedTokenSpec* t = added_.FindById(id)) {
      if (!(t->special && options.skip_special_tokens)) tokens.push_back(t->content);
      continue;
    }
    std::string_view text = model_.TokenText(id);
    if (text.empty()) {
      return Status::InvalidArgument("cannot decode id " + std::to_string(id) + " at position " + std::to_string(i) +
                                     ": it is not in the vocabulary of " + origin_);
    }
    tokens.emplace_back(text);
  }
  std::string text = token_decoder_->Decode(std::move(tokens));
  if (IsValidUtf8(text)) return text;
  std::string repaired;
  AppendRepairedUtf8(text, &repaired);
  return repaired;
}

std::optional<TokenId> TokenizerImpl::TokenToId(std::string_view token) const {
  if (const AddedTokenSpec* t = added_.FindByContent(token)) return t->id;
  return model_.TextToId(token);
}

std::optional<std::string> TokenizerImpl::IdToToken(TokenId id) const {
  if (const AddedTokenSpec* t = added_.FindById(id)) return t->content;
  std::string_view text = model_.TokenText(id);
  if (text.empty()) return std::nullopt;
  return std::string(text);
}

bool TokenizerImpl::IsSpecial(TokenId id) const {
  const AddedTokenSpec* t = added_.FindById(id);
  return t && t->special;
}

std::string TokenizerImpl::Describe() const {
  std::string s = "normalizer=" + (normalizer_ ? normalizer_->Describe() : std::string("none"));
  s += " pre_tokenizer=" + pre_tokenizer_->Describe();
  s += " model=BPE(vocab=" + std::to_string(model_.vocab_size()) + ", merges=" + std::to_string(model_.merge_count()) +
       ")";
  s += " added_tokens=" + std::to_string(added_.tokens().size());
  s += " post_processor=" + post_.description;
  s += " decoder=" + decoder_name_;
  return s;
}

}  // namespace tokenfeed::tokenizer
