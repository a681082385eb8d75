// Synthetic embedded-log topics for the loader's tests, and helpers that
// drain a loader into rows. Document d has length 1 + d % 37 and tokens
// 1000*d + i, so every token says which document and position it came from.
// Test code only; not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/scoped_temp_dir.h"
#include "log/log.h"
#include "tokenfeed/loader.h"
#include "tokenfeed/record.h"
#include "tokenfeed/topic.h"

namespace tokenfeed {

// Document d of a topic has length 1 + d % 37 and tokens 1000*d + i, so every
// token says which document and position it came from.
inline constexpr uint32_t kStride = 1000;
inline uint32_t DocLen(uint32_t d) { return 1 + d % 37; }

// Documents [first_doc, first_doc + docs) as records, document d in the
// batch of partition d % partitions.
inline std::vector<log::BatchBuilder> DocBatches(uint32_t partitions, uint32_t first_doc, uint32_t docs) {
  std::vector<log::BatchBuilder> batches(partitions);
  std::string rec;
  for (uint32_t d = first_doc; d < first_doc + docs; ++d) {
    std::vector<uint32_t> ids(DocLen(d));
    for (uint32_t i = 0; i < ids.size(); ++i) ids[i] = kStride * d + i;
    record::RecordFields f;
    f.source_path = "synthetic";
    f.doc_seq = d;
    EXPECT_TRUE(record::EncodeRecord(f, ids, &rec).ok());
    batches[d % partitions].Add(rec);
  }
  return batches;
}

// Appends each partition's batch (if any) to `topic` and closes its writer.
inline void WriteBatches(log::TopicDirectory& topic, std::vector<log::BatchBuilder>& batches) {
  for (uint32_t p = 0; p < batches.size(); ++p) {
    auto w = topic.OpenWriter(PartitionId(p));
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    if (!batches[p].empty()) {
      EXPECT_TRUE((*w)->Append(&batches[p]).ok());
    }
    EXPECT_TRUE((*w)->Close().ok());
  }
}

inline std::string MakeTopic(const ScopedTempDir& dir, const std::string& name, uint32_t partitions, uint32_t docs,
                             uint32_t first_doc = 0) {
  std::string uri = "log:" + dir.Join(name);
  log::TopicOptions to;
  to.partitions = partitions;
  auto topic = log::TopicDirectory::Create(uri, to);
  EXPECT_TRUE(topic.ok()) << topic.status().ToString();
  if (!topic.ok()) return uri;
  std::vector<log::BatchBuilder> batches = DocBatches(partitions, first_doc, docs);
  WriteBatches(**topic, batches);
  return uri;
}

// Appends documents [first_doc, first_doc + docs) to an existing topic of
// MakeTopic's, document d to partition d % partitions, as one batch per partition.
inline void AppendDocs(const std::string& uri, uint32_t partitions, uint32_t first_doc, uint32_t docs) {
  auto topic = log::TopicDirectory::Open(uri);
  ASSERT_TRUE(topic.ok()) << topic.status().ToString();
  std::vector<log::BatchBuilder> batches = DocBatches(partitions, first_doc, docs);
  WriteBatches(**topic, batches);
}

// Opening a topic writer builds the token index of a topic written without
// one (MakeTopic writes the log directly).
inline void BuildTokenIndex(const std::string& uri, uint32_t partitions) {
  topic::WriterConfig config;
  config.partitions = partitions;
  auto w = topic::OpenTopicWriter(uri, config);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_TRUE((*w)->Close().ok());
}

inline LoaderOptions Opts(std::vector<LoaderSource> sources, uint32_t T, uint32_t B) {
  LoaderOptions o;
  o.sources = std::move(sources);
  o.seq_len = T;
  o.batch_size = B;
  o.block_records = 16;
  o.window_blocks = 4;
  o.seed = 7;
  return o;
}

inline std::vector<int64_t> Row(Batch& b, uint32_t r) {
  auto ids = b.input_ids64();
  return std::vector<int64_t>(ids.begin() + r * b.seq_len, ids.begin() + (r + 1) * b.seq_len);
}

// All batches of a loader (at most `limit`), as rows.
inline std::vector<std::vector<int64_t>> Drain(Loader& l, size_t limit = SIZE_MAX,
                                                std::vector<Batch>* keep = nullptr) {
  std::vector<std::vector<int64_t>> rows;
  for (size_t n = 0; n < limit; ++n) {
    auto b = l.Next();
    EXPECT_TRUE(b.ok()) << b.status().ToString();
    if (!b.ok() || !*b) break;
    for (uint32_t r = 0; r < (*b)->batch_size; ++r) rows.push_back(Row(**b, r));
    if (keep) keep->push_back(std::move(**b));
  }
  return rows;
}

inline std::unique_ptr<Loader> Make(const LoaderOptions& o) {
  auto l = Loader::Create(o);
  EXPECT_TRUE(l.ok()) << l.status().ToString();
  return l.ok() ? std::move(l).value() : nullptr;
}

}  // namespace tokenfeed
