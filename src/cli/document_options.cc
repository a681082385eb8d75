#include "cli/document_options.h"

namespace tokenfeed::cli {

void AddDocumentOptions(CLI::App* cmd, document::DocumentOptions* options) {
  cmd->add_flag("--add-bos", options->add_bos, "put the tokenizer's document-start token before each document");
  cmd->add_flag("--add-eos", options->add_eos, "put the tokenizer's document-end token after each document");
  cmd->add_flag("--keep-special-tokens", options->keep_special_tokens,
                "turn special-token text found inside documents into special tokens (default: plain text)");
}

}  // namespace tokenfeed::cli
