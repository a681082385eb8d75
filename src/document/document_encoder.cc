#include "document/document_encoder.h"

#include <utility>

namespace tokenfeed::document {

DocumentEncoder::DocumentEncoder(std::shared_ptr<const Tokenizer> tokenizer, const DocumentOptions& options)
    : tokenizer_(std::move(tokenizer)), options_(options) {
  encode_.split_special_tokens = !options.keep_special_tokens;
  encode_.add_special_tokens = options.post_processor;
  encode_.utf8 = options.utf8;
}

Result<DocumentEncoder> DocumentEncoder::Create(std::shared_ptr<const Tokenizer> tokenizer,
                                                const DocumentOptions& options, std::string_view tokenizer_name) {
  if (!tokenizer) return Status::InvalidArgument("no tokenizer for the document stage");
  DocumentEncoder e(std::move(tokenizer), options);
  if (options.add_bos) {
    if (!e.tokenizer_->bos_id()) {
      return Status::InvalidArgument(std::string(tokenizer_name) + " has no document-start token for --add-bos");
    }
    e.bos_ = *e.tokenizer_->bos_id();
  }
  if (options.add_eos) {
    if (!e.tokenizer_->eos_id()) {
      return Status::InvalidArgument(std::string(tokenizer_name) + " has no document-end token for --add-eos");
    }
    e.eos_ = *e.tokenizer_->eos_id();
  }
  return e;
}

std::optional<record::Attribute> DocumentEncoder::ends_attribute() const {
  if (bos_ && eos_) return record::Attribute{record::kEndsAttribute, "bos,eos"};
  if (bos_) return record::Attribute{record::kEndsAttribute, "bos"};
  if (eos_) return record::Attribute{record::kEndsAttribute, "eos"};
  return std::nullopt;
}

Status DocumentEncoder::Encode(std::string_view text, std::vector<TokenId>* ids) const {
  if (bos_) ids->push_back(*bos_);
  TF_RETURN_IF_ERROR(tokenizer_->Encode(text, ids, encode_));
  if (eos_) ids->push_back(*eos_);
  return Status::OK();
}

Status DocumentEncoder::EncodeBatch(std::span<const std::string_view> texts, std::vector<std::vector<TokenId>>* out,
                                    int threads, const std::atomic<bool>* stop) const {
  EncodeOptions options = encode_;
  options.stop = stop;
  TF_RETURN_IF_ERROR(tokenizer_->EncodeBatch(texts, out, options, threads));
  if (bos_ || eos_) {
    for (auto& ids : *out) {
      if (bos_) ids.insert(ids.begin(), *bos_);
      if (eos_) ids.push_back(*eos_);
    }
  }
  return Status::OK();
}

}  // namespace tokenfeed::document
