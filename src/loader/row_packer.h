// RowPacker: fills a Batch's [seq_len] rows from a stream of documents. Packed,
// a row is the next seq_len tokens and each document piece is its own span of
// cu_seqlens, position_ids and document_ids; unpacked, a row is one document,
// truncated or followed by padding that is a piece of its own. Not the stream
// (BOS/EOS are source_stream.h's) nor the choice of source (source_mixer.h).
// Holds only options, thread-safe; a stream and batch are used on one thread.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>

#include "tokenfeed/loader.h"
#include "tokenfeed/status.h"

namespace tokenfeed::loader {

// What the packer needs of a stream (SourceStream has it): Ready() makes the
// current document available (false: the stream ended); length() counts its
// tokens (never 0), token_offset() those consumed; Advance(n) consumes n
// into a row, moving to the next document at the end of this one; DropRest()
// moves past what is left of the current document without putting it in a
// row (a truncated pack=false row: the stream counts only what rows hold).
template <typename S>
concept DocumentStream = requires(S& s, const S& cs, uint32_t i, int32_t* out32, int64_t* out64) {
  { s.Ready() } -> std::same_as<Result<bool>>;
  { cs.length() } -> std::convertible_to<uint32_t>;
  { cs.token_offset() } -> std::convertible_to<uint32_t>;
  { cs.TokenAt(i) } -> std::convertible_to<uint32_t>;
  cs.CopyTokens(i, i, out32);
  cs.CopyTokens(i, i, out64);
  s.Advance(i);
  s.DropRest();
};

struct RowPackerOptions {
  uint32_t seq_len = 2048;
  bool pack = true;
  uint32_t pad_id = 0;
  int64_t ignore_index = -100;
  bool cross_document_labels = false;
  bool int32_ids = false;
};

class RowPacker {
 public:
  explicit RowPacker(RowPackerOptions options) : o_(options) {}

  // A batch of `batch_size` rows to fill: buffers sized, cu_seqlens {0}.
  Batch StartBatch(uint32_t batch_size, uint64_t step) const;

  // Fills row `row` of *b (rows in order, from 0) with the stream's next
  // documents. false: the stream ended first (the row is then unusable).
  template <DocumentStream S>
  Result<bool> FillRow(S& s, uint32_t row, Batch* b) const;
  // Consumes what FillRow would put in a row, without copying tokens.
  template <DocumentStream S>
  Result<bool> SkipRow(S& s) const;

  // The bytes a batch's buffers hold (the prefetcher's memory budget).
  static uint64_t BatchBytes(const Batch& b);

 private:
  template <typename T, DocumentStream S>
  Result<bool> FillRowAs(S& s, uint32_t row, Batch* b, T* ids, T* labels, T* positions) const;

  RowPackerOptions o_;
};

template <DocumentStream S>
Result<bool> RowPacker::SkipRow(S& s) const {
  if (!o_.pack) {
    TF_ASSIGN_OR_RETURN(bool ok, s.Ready());
    if (!ok) return false;
    s.Advance(std::min(s.length() - s.token_offset(), o_.seq_len));
    s.DropRest();
    return true;
  }
  uint32_t left = o_.seq_len;
  while (left > 0) {
    TF_ASSIGN_OR_RETURN(bool ok, s.Ready());
    if (!ok) return false;
    uint32_t take = std::min(left, s.length() - s.token_offset());
    s.Advance(take);
    left -= take;
  }
  return true;
}

template <DocumentStream S>
Result<bool> RowPacker::FillRow(S& s, uint32_t row, Batch* b) const {
  if (o_.int32_ids) {
    return FillRowAs<int32_t>(s, row, b, b->input_ids32().data(), b->labels32().data(), b->position_ids32().data());
  }
  return FillRowAs<int64_t>(s, row, b, b->input_ids64().data(), b->labels64().data(), b->position_ids64().data());
}

template <typename T, DocumentStream S>
Result<bool> RowPacker::FillRowAs(S& s, uint32_t row, Batch* b, T* ids, T* labels, T* positions) const {
  const uint32_t Tn = o_.seq_len;
  const size_t base = size_t{row} * Tn;
  int32_t* docs = b->document_ids.data() + base;
  const int32_t flat_base = static_cast<int32_t>(base);
  if (!o_.pack) {
    TF_ASSIGN_OR_RETURN(bool ok, s.Ready());
    if (!ok) return false;
    const uint32_t len = s.length();
    const uint32_t take = std::min(len, Tn);
    s.CopyTokens(0, take, ids + base);
    // The padding after a short document is a piece of its own (as
    // cu_seqlens has it): document 1 of the row, positions from 0.
    for (uint32_t t = 0; t < Tn; ++t) {
      const bool pad = t >= take;
      positions[base + t] = static_cast<T>(pad ? t - take : t);
      docs[t] = pad ? 1 : 0;
      b->attention_mask[base + t] = pad ? 0 : 1;
      if (pad) ids[base + t] = static_cast<T>(o_.pad_id);
      labels[base + t] = t + 1 < take ? ids[base + t + 1] : static_cast<T>(o_.ignore_index);
    }
    b->tokens += take;
    b->cu_seqlens.push_back(flat_base + static_cast<int32_t>(take));
    if (take < Tn) b->cu_seqlens.push_back(flat_base + static_cast<int32_t>(Tn));  // the padding
    b->max_seqlen = std::max<int32_t>(b->max_seqlen, static_cast<int32_t>(std::max(take, Tn - take)));
    s.Advance(take);
    s.DropRest();
    return true;
  }
  uint32_t t = 0;
  int32_t segment = 0;
  uint32_t ended_inside[64];  // row positions where a document ended before the row did
  uint32_t n_ended = 0;
  bool ended_at_row_end = false;
  while (t < Tn) {
    TF_ASSIGN_OR_RETURN(bool ok, s.Ready());
    if (!ok) return false;
    const uint32_t from = s.token_offset();
    const uint32_t len = s.length();
    const uint32_t take = std::min(Tn - t, len - from);
    // HOT PATH: copies and fills that the compiler vectorizes.
    s.CopyTokens(from, take, ids + base + t);
    T* pos = positions + base + t;
    for (uint32_t k = 0; k < take; ++k) pos[k] = static_cast<T>(k);
    std::fill(docs + t, docs + t + take, segment);
    // Labels: the next token of the same document (the one after the row
    // when the document goes on), else nothing (see cross_document_labels).
    if (take > 1) std::copy(ids + base + t + 1, ids + base + t + take, labels + base + t);
    const bool doc_continues = from + take < len;
    labels[base + t + take - 1] =
        doc_continues ? static_cast<T>(s.TokenAt(from + take)) : static_cast<T>(o_.ignore_index);
    if (!doc_continues) {
      if (t + take < Tn) {
        if (n_ended < 64) ended_inside[n_ended++] = t + take - 1;
      } else {
        ended_at_row_end = true;
      }
    }
    s.Advance(take);
    b->max_seqlen = std::max<int32_t>(b->max_seqlen, static_cast<int32_t>(take));
    b->cu_seqlens.push_back(flat_base + static_cast<int32_t>(t + take));
    t += take;
    ++segment;
  }
  if (o_.cross_document_labels) {
    for (uint32_t k = 0; k < n_ended; ++k) labels[base + ended_inside[k]] = ids[base + ended_inside[k] + 1];
    if (n_ended == 64) {  // more documents than the list holds: find the rest by their ignore label
      for (uint32_t k = 0; k + 1 < Tn; ++k) {
        if (docs[k] != docs[k + 1]) labels[base + k] = ids[base + k + 1];
      }
    }
    if (ended_at_row_end) {
      TF_ASSIGN_OR_RETURN(bool more, s.Ready());
      if (more) labels[base + Tn - 1] = static_cast<T>(s.TokenAt(s.token_offset()));
    }
  }
  b->tokens += Tn;
  return true;
}

}  // namespace tokenfeed::loader
