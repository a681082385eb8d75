#include "tokenizer/split_matcher.h"
