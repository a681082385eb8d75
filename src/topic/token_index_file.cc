#include "topic/token_index_file.h"

#include <algorithm>
#include <vector>

#include "base/little_endian.h"
#include "log/log_format.h"
#include "tokenfeed/record.h"

namespace tokenfeed::topic {

namespace f = log::format;

namespace {

std::string Num(uint64_t v) { return std::to_string(v); }

// Entries read at a time by CheckOrder (512 KiB).
constexpr uint64_t kCheckChunkEntries = 64 << 10;

}  // namespace

uint64_t RecordTokenCount(std::span<const uint8_t> record) {
  Result<record::RecordView> view = record::RecordView::Parse(record);
  return view.ok() ? view->ids().size() : 0;
}

void EncodeTokenIndexHeader(uint8_t* out) {
  StoreLittleEndian<uint64_t>(out, f::kTokenIndexMagic);
  StoreLittleEndian<uint32_t>(out + 8, f::kTokenIndexVersion);
  StoreLittleEndian<uint32_t>(out + 12, 0);
}

Result<TokenIndexFile> TokenIndexFile::Open(FileSystem* fs, const std::string& path) {
  Result<std::unique_ptr<RandomAccessFile>> opened = fs->OpenReadable(path);
  if (!opened.ok()) {
    if (opened.status().IsNotFound()) return Status::NotFound("token index '" + path + "' does not exist");
    return opened.status().WithContext("token index");  // its message names the file
  }
  TokenIndexFile file(path, std::move(opened).value());
  TF_ASSIGN_OR_RETURN(uint64_t size, file.file_->Size());
  uint8_t header[f::kTokenIndexHeaderSize];
  TF_ASSIGN_OR_RETURN(size_t got, file.file_->ReadAt(0, header));
  if (size < f::kTokenIndexHeaderSize || got < f::kTokenIndexHeaderSize) {
    file.torn_header_ = true;
    return file;
  }
  const uint64_t magic = LoadLittleEndian<uint64_t>(header);
  const uint32_t version = LoadLittleEndian<uint32_t>(header + 8);
  const uint32_t reserved = LoadLittleEndian<uint32_t>(header + 12);
  if (magic != f::kTokenIndexMagic) {
    return Status::Corruption("token index '" + path + "' does not start with the magic \"TFTOKENS\": it is not " +
                              "a token index or it is damaged");
  }
  if (version > f::kTokenIndexVersion) {
    return Status::Unsupported("token index '" + path + "' has format version " + Num(version) +
                               "; this build reads version " + Num(f::kTokenIndexVersion) + ": upgrade tokenfeed");
  }
  if (version == 0 || reserved != 0) {
    return Status::Corruption("token index '" + path + "' has a damaged header (version " + Num(version) +
                              ", reserved " + Num(reserved) + ")");
  }
  file.entry_count_ = (size - f::kTokenIndexHeaderSize) / f::kTokenIndexEntrySize;
  return file;
}

Result<std::optional<uint64_t>> TokenIndexFile::Entry(uint64_t i) {
  uint8_t bytes[f::kTokenIndexEntrySize];
  TF_ASSIGN_OR_RETURN(size_t got, file_->ReadAt(f::kTokenIndexHeaderSize + i * f::kTokenIndexEntrySize, bytes));
  if (got < sizeof bytes) return std::optional<uint64_t>();
  return std::optional<uint64_t>(LoadLittleEndian<uint64_t>(bytes));
}

Result<bool> TokenIndexFile::Entries(uint64_t first, std::span<uint64_t> out) {
  if (out.empty()) return true;
  std::vector<uint8_t> bytes(out.size() * f::kTokenIndexEntrySize);
  TF_ASSIGN_OR_RETURN(size_t got, file_->ReadAt(f::kTokenIndexHeaderSize + first * f::kTokenIndexEntrySize, bytes));
  if (got < bytes.size()) return false;
  for (size_t k = 0; k < out.size(); ++k) out[k] = LoadLittleEndian<uint64_t>(bytes.data() + k * f::kTokenIndexEntrySize);
  return true;
}

Status TokenIndexFile::CheckOrder(uint64_t first, uint64_t end, uint64_t* last) {
  *last = 0;
  if (first >= end) return Status::OK();
  std::vector<uint8_t> chunk(std::min(end - first, kCheckChunkEntries) * f::kTokenIndexEntrySize);
  uint64_t previous = 0;
  for (uint64_t at = first; at < end;) {
    const uint64_t n = std::min(end - at, kCheckChunkEntries);
    std::span<uint8_t> dest(chunk.data(), n * f::kTokenIndexEntrySize);
    const uint64_t position = f::kTokenIndexHeaderSize + at * f::kTokenIndexEntrySize;
    TF_ASSIGN_OR_RETURN(size_t got, file_->ReadAt(position, dest));
    if (got < dest.size()) {
      return Status::Corruption("token index '" + path_ + "' ended at entry " + Num(at + got / f::kTokenIndexEntrySize) +
                                " while it was read; it should hold " + Num(end));
    }
    for (uint64_t k = 0; k < n; ++k) {
      const uint64_t v = LoadLittleEndian<uint64_t>(chunk.data() + k * f::kTokenIndexEntrySize);
      if (at + k > first && v < previous) return Decrease(at + k - 1, previous, at + k, v);
      previous = v;
    }
    at += n;
  }
  *last = previous;
  return Status::OK();
}

Status TokenIndexFile::Decrease(uint64_t before, uint64_t before_value, uint64_t i, uint64_t value) const {
  return Status::Corruption("token index '" + path_ + "' is damaged: entry " + Num(i) + " (token ids through offset " +
                            Num(i) + ") is " + Num(value) + ", less than entry " + Num(before) + " before it (" +
                            Num(before_value) + "), but entries never decrease");
}

}  // namespace tokenfeed::topic
