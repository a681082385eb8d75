#include "loader/source_stream.h"

#include <algorithm>
#include <cstring>
#include <tuple>

#include "tokenfeed/record.h"

namespace tokenfeed::loader {

SourceStream::SourceStream(SourceConfig config) : config_(std::move(config)) {}

Result<std::unique_ptr<SourceStream>> SourceStream::Open(SourceConfig config) {
  std::unique_ptr<SourceStream> s(new SourceStream(std::move(config)));
  const SourceConfig& c = s->config_;
  s->blocks_ = MakeBlocks(c.partitions, c.block_records);
  s->windows_per_epoch_ = (s->blocks_.size() + c.window_blocks - 1) / c.window_blocks;
  for (uint32_t p = 0; p < c.partitions.size(); ++p) {
    TF_ASSIGN_OR_RETURN(auto cursor, topic::OpenPartitionCursor(c.uri, PartitionId(p), c.topic));
    s->cursors_.push_back(std::move(cursor));
  }
  s->read_upto_.resize(c.partitions.size());
  s->topic_end_.resize(c.partitions.size());
  for (uint32_t p = 0; p < c.partitions.size(); ++p) {
    s->read_upto_[p] = c.partitions[p].start;
    s->topic_end_[p] = c.partitions[p].end;
  }
  return s;
}

void SourceStream::Seek(const SourcePosition& p) {
  pos_ = p;
  loaded_ = loaded_epoch_ == p.epoch && loaded_window_ == p.window;
  cur_ = nullptr;
  if (loaded_ && pos_.doc < order_.size()) SelectDoc();
}

uint32_t SourceStream::TokenAt(uint32_t i) const {
  uint32_t v;
  CopyTokens(i, 1, &v);
  return v;
}

void SourceStream::SelectDoc() {
  cur_ = &docs_[order_[pos_.doc]];
  cur_len_ = cur_->count + (config_.bos ? 1 : 0) + (config_.eos ? 1 : 0);
}

Result<bool> SourceStream::Ready() {
  while (true) {
    if (config_.epochs != 0 && pos_.epoch >= config_.epochs) return false;
    if (windows_per_epoch_ == 0) return false;  // an empty source
    if (pos_.window >= windows_per_epoch_) {
      pos_ = {pos_.epoch + 1, 0, 0, 0};
      loaded_ = false;
      continue;
    }
    if (!loaded_) {
      TF_RETURN_IF_ERROR(LoadWindow());
      if (pos_.doc < order_.size()) SelectDoc();
    }
    if (pos_.doc >= order_.size()) {
      pos_ = {pos_.epoch, pos_.window + 1, 0, 0};
      loaded_ = false;
      continue;
    }
    if (cur_len_ == 0 || pos_.token >= cur_len_) {  // an empty document (no ids, no BOS/EOS)
      ++pos_.doc;
      pos_.token = 0;
      if (pos_.doc < order_.size()) SelectDoc();
      continue;
    }
    return true;
  }
}

void SourceStream::Advance(uint32_t n) {
  pos_.token += n;
  if (pos_.token >= cur_len_) {
    ++pos_.doc;
    pos_.token = 0;
    if (pos_.doc < order_.size()) SelectDoc();
  }
}

Status SourceStream::CheckSnapshotStillHolds() {
  const SourceConfig& c = config_;
  auto summary = topic::DescribeTopic(c.uri, c.topic);
  if (!summary.ok()) return summary.status().WithContext("the loader's source " + c.uri);
  if (summary->partitions.size() != c.partitions.size()) {
    return Status::InvalidArgument(c.uri + " now has " + std::to_string(summary->partitions.size()) +
                                   " partitions; the loader's snapshot has " + std::to_string(c.partitions.size()));
  }
  for (uint32_t p = 0; p < c.partitions.size(); ++p) {
    const auto& now = summary->partitions[p];
    topic_end_[p] = now.end_offset.value();
    if (now.start_offset.value() > c.partitions[p].start || now.end_offset.value() < c.partitions[p].end) {
      return Status::InvalidArgument(c.uri + " partition " + std::to_string(p) + " now holds offsets [" +
                                     std::to_string(now.start_offset.value()) + ", " +
                                     std::to_string(now.end_offset.value()) + "), not the [" +
                                     std::to_string(c.partitions[p].start) + ", " + std::to_string(c.partitions[p].end) +
                                     ") the loader's snapshot needs");
    }
  }
  return Status::OK();
}

Status SourceStream::LoadWindow() {
  const SourceConfig& c = config_;
  if (order_epoch_ != pos_.epoch) {
    epoch_order_ = EpochBlockOrder(blocks_, c.shuffle, c.seed, c.source_index, pos_.epoch);
    order_epoch_ = pos_.epoch;
  }
  // The topic must still hold what the snapshot names (a deleted or
  // shortened topic is an error, never a hang). For the embedded log this is
  // a few file checks per window; a Kafka cursor reports a vanished topic or
  // offset itself, and asking the cluster each window would cost a round trip.
  if (c.uri.starts_with("log:")) TF_RETURN_IF_ERROR(CheckSnapshotStillHolds());
  arena_.clear();
  docs_.clear();
  const uint64_t first = pos_.window * c.window_blocks;
  const uint64_t last = std::min<uint64_t>(first + c.window_blocks, epoch_order_.size());
  // Shuffled, the window's documents are permuted after reading, so its
  // blocks are read in storage order (fewer, more sequential reads).
  std::vector<uint32_t> reading(epoch_order_.begin() + static_cast<long>(first),
                                epoch_order_.begin() + static_cast<long>(last));
  if (c.shuffle) {
    std::sort(reading.begin(), reading.end(), [&](uint32_t a, uint32_t b) {
      return std::tie(blocks_[a].partition, blocks_[a].offset) < std::tie(blocks_[b].partition, blocks_[b].offset);
    });
  }
  for (uint32_t block_index : reading) {
    const Block& b = blocks_[block_index];
    topic::PartitionCursor& cursor = *cursors_[b.partition];
    if (cursor.position() != Offset(b.offset)) TF_RETURN_IF_ERROR(cursor.Seek(Offset(b.offset)));
    uint32_t got = 0;
    while (got < b.count) {
      TF_ASSIGN_OR_RETURN(auto records, cursor.Read(std::chrono::milliseconds(5000)));
      if (records.empty()) {
        return Status::TimedOut(c.uri + " partition " + std::to_string(b.partition) + ": no record at offset " +
                                std::to_string(b.offset + got) + " within 5 s, though the snapshot includes it");
      }
      for (const topic::StoredRecordView& r : records) {
        if (got == b.count) break;
        const uint64_t want = b.offset + got;
        if (r.offset.value() != want) {
          return Status::Corruption(c.uri + " partition " + std::to_string(b.partition) + ": expected offset " +
                                    std::to_string(want) + ", got " + std::to_string(r.offset.value()));
        }
        auto view = record::RecordView::Parse(r.bytes);
        if (!view.ok()) {
          return view.status().WithContext(c.uri + " partition " + std::to_string(b.partition) + " offset " +
                                           std::to_string(want));
        }
        // Keep the ids 4-aligned in the arena, as the record had them.
        while (arena_.size() % 4) arena_.push_back('\0');
        const size_t at = arena_.size();
        const size_t bytes = view->ids().size() * view->ids().width_bytes();
        arena_.append(reinterpret_cast<const char*>(view->ids().data()), bytes);
        docs_.push_back({at, static_cast<uint32_t>(view->ids().size()),
                         static_cast<uint8_t>(view->ids().width_bytes())});
        ++got;
      }
    }
    read_upto_[b.partition] = b.offset + b.count;
  }
  order_ = WindowRecordOrder(static_cast<uint32_t>(docs_.size()), c.shuffle, c.seed, c.source_index, pos_.epoch,
                             pos_.window);
  loaded_ = true;
  loaded_epoch_ = pos_.epoch;
  loaded_window_ = pos_.window;
  return Status::OK();
}

std::vector<std::string> SourceStream::Lag() const {
  std::vector<std::string> out;
  for (size_t p = 0; p < read_upto_.size(); ++p) {
    uint64_t behind = topic_end_[p] > read_upto_[p] ? topic_end_[p] - read_upto_[p] : 0;
    out.push_back(config_.uri + "#" + std::to_string(p) + ": " + std::to_string(behind) +
                  " records behind the end");
  }
  return out;
}

}  // namespace tokenfeed::loader
