// PreTokenizer: the "pre_tokenizer" section of a tokenizer.json (Sequence of
// Split, Digits and Metaspace steps, and for byte-level BPE a final
// ByteLevel), which cuts normalized text into the pieces BPE encodes; no
// steps at all leave the whole text one piece. Stages run as in the reference: each stage
// sees only the pieces the previous stage produced, one at a time -- or, for
// a known whole sequence of stages (DeepSeek-V3's), in one fused pass proven
// to give the same pieces.
// Immutable after construction: Run may run on many threads at once, each
// with its own PreTokenizeScratch.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/split_matcher.h"

namespace tokenfeed::tokenizer {

enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

// Where Metaspace puts its replacement character in front of a piece.
enum class PrependScheme { kAlways, kFirst, kNever };

struct PreTokenizerStage {
  enum class Kind { kSplit, kDigits, kByteLevel, kMetaspace };
  Kind kind = Kind::kSplit;
  // kSplit (and kByteLevel with use_regex, which splits with the GPT-2 regex).
  std::unique_ptr<SplitMatcher> matcher;
  SplitBehavior behavior = SplitBehavior::kIsolated;
  bool invert = false;
  // kDigits
  bool individual_digits = false;
  // kByteLevel
  bool add_prefix_space = false;
  // kMetaspace: spaces become `replacement`, which is put in front as
  // `prepend` says (kFirst: only in front of the input's first piece), and
  // with `split` every replacement starts a new piece.
  std::string replacement;
  PrependScheme prepend = PrependScheme::kAlways;
  bool split = true;
};

struct PreTokenizeScratch {
  std::vector<std::vector<Span>> matches;  // one per stage
  struct Range {
    uint32_t begin, end;
    bool is_match;
  };
  std::vector<std::vector<Range>> ranges;  // one per stage
  std::deque<std::string> owned;           // pieces a stage rewrote (prefix space, Metaspace)
  const char* input_start = nullptr;       // where the input's first piece starts, if this text holds it
};

class PreTokenizer {
 public:
  // `allow_fused` = false always runs the stages one after another (tests
  // compare the two ways).
  explicit PreTokenizer(std::vector<PreTokenizerStage> stages, bool allow_fused = true);

  // Appends the pieces of `text` to `pieces`, in order; they are views of
  // `text` or of strings owned by `scratch` (valid until its next use).
  // `at_input_start`: `text` begins the input (no added token or other text
  // before it), which Metaspace's "first" prepend scheme asks.
  // HOT PATH: one matcher call per piece per stage, no allocation once the
  // scratch vectors have grown.
  void Run(std::string_view text, bool at_input_start, PreTokenizeScratch* scratch,
           std::vector<std::string_view>* pieces) const;

  std::string Describe() const { return description_; }
  // The stages that do something (a ByteLevel stage that adds no space and
  // splits nothing leaves every piece as it is).
  size_t stage_count() const { return stages_.size(); }
  bool fused() const { return fused_ != Fused::kNone; }

 private:
  void RunStage(size_t stage, std::string_view piece, PreTokenizeScratch* scratch,
                std::vector<std::string_view>* pieces) const;
  void Emit(size_t stage, std::string_view piece, PreTokenizeScratch* scratch,
            std::vector<std::string_view>* pieces) const;
  void RunMetaspace(size_t stage, std::string_view piece, PreTokenizeScratch* scratch,
                    std::vector<std::string_view>* pieces) const;

  enum class Fused { kNone, kDeepSeekV3 };

  std::vector<PreTokenizerStage> stages_;
  Fused fused_ = Fused::kNone;
  std::string description_;
};

}  // namespace tokenfeed::tokenizer
