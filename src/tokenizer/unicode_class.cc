#include "tokenizer/unicode_class.h"

namespace tokenfeed::tokenizer::unicode {

#include "tokenizer/unicode_class_table.inc"

}  // namespace tokenfeed::tokenizer::unicode
