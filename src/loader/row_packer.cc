#include "loader/row_packer.h"

namespace tokenfeed::loader {

Batch RowPacker::StartBatch(uint32_t batch_size, uint64_t step) const {
  Batch batch;
  batch.batch_size = batch_size;
  batch.seq_len = o_.seq_len;
  batch.int32 = o_.int32_ids;
  batch.step = step;
  const size_t n = size_t{batch_size} * o_.seq_len;
  if (o_.int32_ids) {
    batch.tokens32.resize(3 * n);
  } else {
    batch.tokens64.resize(3 * n);
  }
  batch.document_ids.resize(n);
  if (!o_.pack) batch.attention_mask.resize(n);
  batch.cu_seqlens.push_back(0);
  batch.source_of_row.resize(batch_size);
  return batch;
}

uint64_t RowPacker::BatchBytes(const Batch& b) {
  return b.tokens64.size() * 8 + (b.tokens32.size() + b.document_ids.size() + b.cu_seqlens.size()) * 4 +
         b.attention_mask.size();
}

}  // namespace tokenfeed::loader
