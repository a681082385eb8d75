#include "loader/row_packer.h"

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include <gtest/gtest.h>

namespace tokenfeed::loader {
namespace {

// Documents in memory, read as SourceStream reads a window.
class FakeStream {
 public:
  explicit FakeStream(std::vector<std::vector<uint32_t>> docs) : docs_(std::move(docs)) {}
  Result<bool> Ready() {
    if (fail_at_ && doc_ == *fail_at_) return Status::Corruption("bad record");
    return doc_ < docs_.size();
  }
  uint32_t length() const { return static_cast<uint32_t>(docs_[doc_].size()); }
  uint32_t token_offset() const { return token_; }
  uint32_t TokenAt(uint32_t i) const { return docs_[doc_][i]; }
  template <typename T>
  void CopyTokens(uint32_t from, uint32_t n, T* out) const {
    for (uint32_t k = 0; k < n; ++k) out[k] = static_cast<T>(docs_[doc_][from + k]);
  }
  void Advance(uint32_t n) {
    token_ += n;
    if (token_ == length()) {
      ++doc_;
      token_ = 0;
    }
  }
  void DropRest() {
    if (token_ > 0 && token_ < length()) {
      ++doc_;
      token_ = 0;
    }
  }
  size_t doc() const { return doc_; }
  void FailAt(size_t doc) { fail_at_ = doc; }

 private:
  std::vector<std::vector<uint32_t>> docs_;
  size_t doc_ = 0;
  uint32_t token_ = 0;
  std::optional<size_t> fail_at_;
};
static_assert(DocumentStream<FakeStream>);

constexpr int64_t kIgnore = -100;

RowPackerOptions Packed(uint32_t seq_len) {
  RowPackerOptions o;
  o.seq_len = seq_len;
  o.ignore_index = kIgnore;
  return o;
}

std::vector<int64_t> Slice(std::span<int64_t> v, uint32_t row, uint32_t T) {
  return {v.begin() + size_t{row} * T, v.begin() + size_t{row + 1} * T};
}
std::vector<int32_t> DocIds(const Batch& b, uint32_t row) {
  return {b.document_ids.data() + size_t{row} * b.seq_len, b.document_ids.data() + size_t{row + 1} * b.seq_len};
}

Batch FillAll(const RowPacker& packer, FakeStream& s, uint32_t rows) {
  Batch b = packer.StartBatch(rows, 0);
  for (uint32_t r = 0; r < rows; ++r) {
    auto filled = packer.FillRow(s, r, &b);
    EXPECT_TRUE(filled.ok() && *filled) << "row " << r;
  }
  return b;
}

TEST(RowPackerTest, StartBatchSizesEveryBuffer) {
  RowPackerOptions o = Packed(8);
  Batch b = RowPacker(o).StartBatch(3, 42);
  EXPECT_EQ(b.step, 42u);
  EXPECT_EQ(b.tokens64.size(), 3u * 3 * 8);
  EXPECT_TRUE(b.tokens32.empty());
  EXPECT_EQ(b.document_ids.size(), 24u);
  EXPECT_TRUE(b.attention_mask.empty());
  EXPECT_EQ(b.cu_seqlens, (std::vector<int32_t>{0}));
  EXPECT_EQ(b.source_of_row.size(), 3u);
  o.pack = false;
  o.int32_ids = true;
  b = RowPacker(o).StartBatch(3, 0);
  EXPECT_EQ(b.tokens32.size(), 72u);
  EXPECT_EQ(b.attention_mask.size(), 24u);
  EXPECT_EQ(RowPacker::BatchBytes(b), 72u * 4 + 24 * 4 + 4 + 24);
}

TEST(RowPackerTest, ADocumentOfExactlySeqLenFillsOneRow) {
  FakeStream s({{1, 2, 3, 4}, {5, 6, 7, 8}});
  RowPacker packer(Packed(4));
  Batch b = FillAll(packer, s, 2);
  EXPECT_EQ(Slice(b.input_ids64(), 0, 4), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(Slice(b.labels64(), 0, 4), (std::vector<int64_t>{2, 3, 4, kIgnore}));
  EXPECT_EQ(Slice(b.position_ids64(), 1, 4), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(DocIds(b, 1), (std::vector<int32_t>{0, 0, 0, 0}));
  EXPECT_EQ(b.cu_seqlens, (std::vector<int32_t>{0, 4, 8}));
  EXPECT_EQ(b.max_seqlen, 4);
  EXPECT_EQ(b.tokens, 8u);
  EXPECT_EQ(s.doc(), 2u);
}

TEST(RowPackerTest, ALongerDocumentGoesOnInTheNextRowWithItsNextTokenAsLabel) {
  FakeStream s({{1, 2, 3, 4, 5, 6}, {7, 8}});
  RowPacker packer(Packed(4));
  Batch b = FillAll(packer, s, 2);
  EXPECT_EQ(Slice(b.input_ids64(), 0, 4), (std::vector<int64_t>{1, 2, 3, 4}));
  EXPECT_EQ(Slice(b.labels64(), 0, 4), (std::vector<int64_t>{2, 3, 4, 5}));  // 5 is in the next row
  EXPECT_EQ(Slice(b.input_ids64(), 1, 4), (std::vector<int64_t>{5, 6, 7, 8}));
  EXPECT_EQ(Slice(b.labels64(), 1, 4), (std::vector<int64_t>{6, kIgnore, 8, kIgnore}));
  EXPECT_EQ(Slice(b.position_ids64(), 1, 4), (std::vector<int64_t>{0, 1, 0, 1}));  // the piece starts at 0
  EXPECT_EQ(DocIds(b, 1), (std::vector<int32_t>{0, 0, 1, 1}));
  EXPECT_EQ(b.cu_seqlens, (std::vector<int32_t>{0, 4, 6, 8}));
  EXPECT_EQ(b.max_seqlen, 4);
}

TEST(RowPackerTest, CrossDocumentLabelsPredictTheNextDocumentAcrossRows) {
  FakeStream s({{1, 2}, {3, 4}, {5, 6, 7, 8}, {9}});
  RowPackerOptions o = Packed(4);
  o.cross_document_labels = true;
  RowPacker packer(o);
  Batch b = FillAll(packer, s, 2);
  EXPECT_EQ(Slice(b.labels64(), 0, 4), (std::vector<int64_t>{2, 3, 4, 5}));  // 5 begins the next row
  EXPECT_EQ(Slice(b.labels64(), 1, 4), (std::vector<int64_t>{6, 7, 8, 9}));
  EXPECT_EQ(DocIds(b, 0), (std::vector<int32_t>{0, 0, 1, 1}));  // still separate documents
}

// More than the 64 document ends a row keeps a list of.
TEST(RowPackerTest, CrossDocumentLabelsInARowOfManyDocuments) {
  std::vector<std::vector<uint32_t>> docs;
  for (uint32_t d = 0; d < 100; ++d) docs.push_back({d});
  FakeStream s(docs);
  RowPackerOptions o = Packed(100);
  o.cross_document_labels = true;
  Batch b = FillAll(RowPacker(o), s, 1);
  for (uint32_t t = 0; t + 1 < 100; ++t) ASSERT_EQ(b.labels64()[t], int64_t{t} + 1) << t;
  EXPECT_EQ(b.labels64()[99], kIgnore);  // the stream ended after the row
  EXPECT_EQ(b.cu_seqlens.size(), 101u);
  EXPECT_EQ(b.max_seqlen, 1);
}

TEST(RowPackerTest, TheStreamEndingInsideARowLeavesItUnfilled) {
  FakeStream s({{1, 2, 3, 4, 5, 6}});
  RowPacker packer(Packed(4));
  Batch b = packer.StartBatch(2, 0);
  EXPECT_TRUE(*packer.FillRow(s, 0, &b));
  auto second = packer.FillRow(s, 1, &b);
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(*second);
  FakeStream empty({});
  EXPECT_FALSE(*packer.FillRow(empty, 0, &b));
  EXPECT_FALSE(*packer.SkipRow(empty));
  FakeStream bad({{1, 2}, {3}});
  bad.FailAt(1);
  EXPECT_EQ(packer.FillRow(bad, 0, &b).status().code(), StatusCode::kCorruption);
}

TEST(RowPackerTest, UnpackedPaddingIsAPieceOfItsOwn) {
  FakeStream s({{1, 2, 3}, {4, 5, 6, 7, 8, 9}, {10, 11, 12, 13}});
  RowPackerOptions o = Packed(4);
  o.pack = false;
  o.pad_id = 99;
  o.int32_ids = true;
  RowPacker packer(o);
  Batch b = packer.StartBatch(3, 0);
  for (uint32_t r = 0; r < 3; ++r) ASSERT_TRUE(*packer.FillRow(s, r, &b));
  auto row = [](std::span<int32_t> v, uint32_t r) {
    return std::vector<int32_t>(v.begin() + r * 4, v.begin() + r * 4 + 4);
  };
  EXPECT_EQ(row(b.input_ids32(), 0), (std::vector<int32_t>{1, 2, 3, 99}));
  EXPECT_EQ(row(b.labels32(), 0), (std::vector<int32_t>{2, 3, kIgnore, kIgnore}));
  EXPECT_EQ(row(b.position_ids32(), 0), (std::vector<int32_t>{0, 1, 2, 0}));
  EXPECT_EQ(DocIds(b, 0), (std::vector<int32_t>{0, 0, 0, 1}));
  EXPECT_EQ(std::vector<int8_t>(b.attention_mask.data(), b.attention_mask.data() + 4),
            (std::vector<int8_t>{1, 1, 1, 0}));
  // Longer than a row: truncated, the rest dropped, no padding piece.
  EXPECT_EQ(row(b.input_ids32(), 1), (std::vector<int32_t>{4, 5, 6, 7}));
  EXPECT_EQ(row(b.labels32(), 1), (std::vector<int32_t>{5, 6, 7, kIgnore}));
  EXPECT_EQ(row(b.input_ids32(), 2), (std::vector<int32_t>{10, 11, 12, 13}));
  EXPECT_EQ(b.cu_seqlens, (std::vector<int32_t>{0, 3, 4, 8, 12}));
  EXPECT_EQ(b.max_seqlen, 4);
  EXPECT_EQ(b.tokens, 11u);  // padding is not counted
  EXPECT_EQ(s.doc(), 3u);
}

// Skipping a row consumes exactly what filling it would.
TEST(RowPackerTest, SkipRowConsumesWhatFillRowWould) {
  for (bool pack : {true, false}) {
    std::vector<std::vector<uint32_t>> docs;
    for (uint32_t d = 0; d < 40; ++d) docs.push_back(std::vector<uint32_t>(1 + d % 9, d));
    RowPackerOptions o = Packed(5);
    o.pack = pack;
    RowPacker packer(o);
    FakeStream filled(docs), skipped(docs);
    Batch b = packer.StartBatch(8, 0);
    for (uint32_t r = 0; r < 8; ++r) {
      ASSERT_TRUE(*packer.FillRow(filled, r, &b));
      ASSERT_TRUE(*packer.SkipRow(skipped));
      ASSERT_EQ(filled.doc(), skipped.doc()) << "pack " << pack << " row " << r;
      ASSERT_EQ(filled.token_offset(), skipped.token_offset());
    }
  }
}

}  // namespace
}  // namespace tokenfeed::loader
