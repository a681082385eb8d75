#include "log/log_format.h"

#include <cstdio>

#include "base/crc32c.h"
#include "base/little_endian.h"

namespace tokenfeed::log::format {
namespace {

std::string Num(uint64_t v) { return std::to_string(v); }

std::string ZeroPadded(uint64_t v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%0*llu", digits, static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::string PartitionDirName(PartitionId partition) {
  return std::string(kPartitionDirPrefix) + ZeroPadded(partition.value(), kPartitionDigits);
}

std::string SegmentFileName(Offset base) { return ZeroPadded(base.value(), kOffsetDigits) + std::string(kSegmentSuffix); }

std::string IndexFileName(Offset base) { return ZeroPadded(base.value(), kOffsetDigits) + std::string(kIndexSuffix); }

std::optional<Offset> ParseSegmentFileName(std::string_view name) {
  if (name.size() != kOffsetDigits + kSegmentSuffix.size() || !name.ends_with(kSegmentSuffix)) return std::nullopt;
  uint64_t v = 0;
  for (size_t i = 0; i < kOffsetDigits; ++i) {
    const char c = name[i];
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - digit) / 10) return std::nullopt;
    v = v * 10 + digit;
  }
  return Offset(v);
}

void EncodeFileHeader(uint64_t magic, uint32_t version, Offset base, uint8_t* out) {
  StoreLittleEndian<uint64_t>(out + 0, magic);
  StoreLittleEndian<uint32_t>(out + 8, version);
  StoreLittleEndian<uint32_t>(out + 12, 0);
  StoreLittleEndian<uint64_t>(out + 16, base.value());
  StoreLittleEndian<uint32_t>(out + 24, 0);
  StoreLittleEndian<uint32_t>(out + 28, crc32c::Value(out, 28));
}

std::string CheckFileHeader(uint64_t magic, uint32_t version, Offset base, const uint8_t* header) {
  if (LoadLittleEndian<uint64_t>(header) != magic) return "the file does not start with the expected magic bytes";
  if (LoadLittleEndian<uint32_t>(header + 28) != crc32c::Value(header, 28)) return "the file header's checksum does not match";
  const uint32_t v = LoadLittleEndian<uint32_t>(header + 8);
  if (v != version) {
    return "the file has format version " + Num(v) + " but this build reads version " + Num(version) +
           (v > version ? " (upgrade tokenfeed)" : "");
  }
  const uint64_t b = LoadLittleEndian<uint64_t>(header + 16);
  if (b != base.value()) return "the file header says base offset " + Num(b) + " but its name says " + ToString(base);
  return {};
}

void EncodeBatchHeader(const BatchHeader& h, uint8_t* out) {
  StoreLittleEndian<uint32_t>(out + 0, kBatchMagic);
  StoreLittleEndian<uint32_t>(out + 8, h.batch_length);
  StoreLittleEndian<uint32_t>(out + 12, h.record_count);
  StoreLittleEndian<uint64_t>(out + 16, h.base_offset.value());
  StoreLittleEndian<int64_t>(out + 24, h.append_time_unix_ms);
  StoreLittleEndian<uint32_t>(out + 32, h.flags);
  StoreLittleEndian<uint32_t>(out + 36, h.data_crc);
  StoreLittleEndian<uint32_t>(out + 4, crc32c::Value(out + 8, kBatchHeaderSize - 8));
}

std::string DecodeBatchHeader(const uint8_t* in, BatchHeader* out) {
  if (LoadLittleEndian<uint32_t>(in) != kBatchMagic) return "no batch starts here (wrong magic bytes)";
  if (LoadLittleEndian<uint32_t>(in + 4) != crc32c::Value(in + 8, kBatchHeaderSize - 8)) {
    return "the batch header's checksum does not match";
  }
  BatchHeader h;
  h.batch_length = LoadLittleEndian<uint32_t>(in + 8);
  h.record_count = LoadLittleEndian<uint32_t>(in + 12);
  h.base_offset = Offset(LoadLittleEndian<uint64_t>(in + 16));
  h.append_time_unix_ms = LoadLittleEndian<int64_t>(in + 24);
  h.flags = LoadLittleEndian<uint32_t>(in + 32);
  h.data_crc = LoadLittleEndian<uint32_t>(in + 36);
  // The header checksum matched, so these come from a writer: a violation
  // means a writer bug or a format this build does not know.
  if (h.batch_length < kBatchHeaderSize + kEntryLengthSize || h.batch_length % kRecordAlignment != 0 ||
      h.batch_length > kMaxBatchBytes) {
    return "the batch header gives an impossible length of " + Num(h.batch_length) + " bytes";
  }
  if (h.record_count == 0) return "the batch header says it holds no records";
  if ((h.flags & ~kKnownBatchFlags) != 0) {
    return "the batch has flags " + Num(h.flags) + " that this build does not know (written by a newer tokenfeed?)";
  }
  *out = h;
  return {};
}

std::string CheckBatchBody(std::span<const uint8_t> batch, const BatchHeader& h, bool verify_crc) {
  if (verify_crc) {
    const uint32_t crc = crc32c::Value(batch.data() + kBatchHeaderSize, batch.size() - kBatchHeaderSize);
    if (crc != h.data_crc) return "the batch's data checksum does not match (stored or written bytes are damaged)";
  }
  const uint8_t* p = batch.data() + kBatchHeaderSize;
  const uint8_t* const end = batch.data() + batch.size();
  uint32_t count = 0;
  while (p < end) {
    if (static_cast<size_t>(end - p) < kEntryLengthSize) return "a record entry is cut off at the end of the batch";
    const uint32_t len = LoadLittleEndian<uint32_t>(p);
    if (EntrySize(len) > static_cast<size_t>(end - p)) {
      return "record " + Num(count) + " of the batch claims " + Num(len) + " bytes, past the end of the batch";
    }
    p += EntrySize(len);
    ++count;
  }
  if (count != h.record_count) {
    return "the batch header says " + Num(h.record_count) + " records but the batch holds " + Num(count);
  }
  return {};
}

}  // namespace tokenfeed::log::format
