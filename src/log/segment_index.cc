#include "log/segment_index.h"

#include <algorithm>

#include "base/little_endian.h"
#include "log/log_format.h"

namespace tokenfeed::log {

namespace f = format;

Result<SegmentIndex> SegmentIndex::Load(FileSystem* fs, const std::string& path, Offset base) {
  TF_ASSIGN_OR_RETURN(std::string bytes, ReadFileToString(fs, path));
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  if (bytes.size() < f::kIndexHeaderSize) {
    return Status::Corruption("index file '" + path + "' is " + std::to_string(bytes.size()) +
                              " bytes, too short for its header");
  }
  std::string bad = f::CheckFileHeader(f::kIndexMagic, f::kIndexVersion, base, p);
  if (!bad.empty()) return Status::Corruption("index file '" + path + "': " + bad);
  const size_t count = (bytes.size() - f::kIndexHeaderSize) / f::kIndexEntrySize;
  std::vector<IndexEntry> entries;
  entries.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const uint8_t* e = p + f::kIndexHeaderSize + i * f::kIndexEntrySize;
    IndexEntry entry{base + LoadLittleEndian<uint32_t>(e), LoadLittleEndian<uint32_t>(e + 4)};
    if (!entries.empty() && (entry.offset <= entries.back().offset || entry.position <= entries.back().position)) {
      return Status::Corruption("index file '" + path + "': entry " + std::to_string(i) +
                                " does not increase; the index will be rebuilt from the segment");
    }
    entries.push_back(entry);
  }
  return SegmentIndex(std::move(entries));
}

std::optional<IndexEntry> SegmentIndex::Find(Offset offset) const {
  auto it = std::upper_bound(entries_.begin(), entries_.end(), offset,
                             [](Offset o, const IndexEntry& e) { return o < e.offset; });
  if (it == entries_.begin()) return std::nullopt;
  return *std::prev(it);
}

void SegmentIndex::EncodeEntry(Offset base, const IndexEntry& e, uint8_t* out) {
  StoreLittleEndian<uint32_t>(out, static_cast<uint32_t>(e.offset - base));
  StoreLittleEndian<uint32_t>(out + 4, static_cast<uint32_t>(e.position));
}

std::string SegmentIndex::Encode(Offset base, const std::vector<IndexEntry>& entries) {
  std::string out(f::kIndexHeaderSize + entries.size() * f::kIndexEntrySize, '\0');
  auto* p = reinterpret_cast<uint8_t*>(out.data());
  f::EncodeFileHeader(f::kIndexMagic, f::kIndexVersion, base, p);
  for (size_t i = 0; i < entries.size(); ++i) EncodeEntry(base, entries[i], p + f::kIndexHeaderSize + i * f::kIndexEntrySize);
  return out;
}

}  // namespace tokenfeed::log
