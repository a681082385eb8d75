// The whole of DeepSeek-V3's pre-tokenizer in one pass: its three Split
// stages (digits, CJK, main -- fast_matchers.h -- all "Isolated") cut text
// into the same pieces as running them one after another, each on the
// pieces the previous one left, as the reference does. Not a general stage
// fuser: PreTokenizer uses it only for exactly that sequence of stages.
// A pure function: safe on any thread.
#pragma once

#include <string_view>
#include <vector>

namespace tokenfeed::tokenizer {

// Appends the pieces of valid UTF-8 `text` to `pieces`, in order, as views
// of `text`. No piece is empty.
// HOT PATH: one pass over the text; a character is classified again only at
// a piece's boundary (the last of a match, the one after a whitespace run).
void SplitDeepSeekV3(std::string_view text, std::vector<std::string_view>* pieces);

}  // namespace tokenfeed::tokenizer
