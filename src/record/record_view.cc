#include <cstdio>
#include <cstring>
#include <string>

#include "base/little_endian.h"
#include "base/utf8.h"
#include "tokenfeed/record.h"

namespace tokenfeed::record {

namespace f = format;

namespace {

std::string Num(uint64_t v) { return std::to_string(v); }

std::string Hex(uint8_t v) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "0x%02x", v);
  return buf;
}

Status Truncated(size_t have, size_t need, std::string_view what) {
  return Status::Corruption("token record is " + Num(have) + " bytes but its header needs " + Num(need) + " to hold " +
                            std::string(what) + ": the record is truncated or damaged");
}

// Length of the UTF-8 sequence that a lead byte of a multi-byte character
// opens, or 0 for a byte that opens none (ASCII, a continuation byte, C0/C1,
// F5..FF).
size_t Utf8SequenceLength(uint8_t lead) {
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

// The first character of text that starts `p`: its byte count, or 0 when
// the bytes do not open with a printable ASCII character or a valid
// multi-byte UTF-8 sequence (CJK, "É", a byte-order mark).
size_t LeadingCharacterLength(const uint8_t* p, size_t n) {
  if (p[0] >= 0x20 && p[0] < 0x7F) return 1;
  const size_t len = Utf8SequenceLength(p[0]);
  if (len == 0 || len > n) return 0;
  return IsValidUtf8(std::string_view(reinterpret_cast<const char*>(p), len)) ? len : 0;
}

// Raw text (a JSON object, a line of prose in any script) where a token
// record was expected: a printable or valid UTF-8 first character and no
// control bytes in the header's span. A real header holds zero bytes
// (reserved), so it never looks so, whatever its version byte.
bool LooksLikeText(const uint8_t* p, size_t n) {
  if (LeadingCharacterLength(p, n) == 0) return false;
  const size_t k = n < f::kHeaderSize ? n : f::kHeaderSize;
  for (size_t i = 0; i < k; ++i) {
    if ((p[i] < 0x20 && p[i] != '\t' && p[i] != '\n' && p[i] != '\r') || p[i] == 0x7F) return false;
  }
  return true;
}

// How a message names the first character of text: quoted, except a
// byte-order mark, which prints as nothing.
std::string DescribeLeadingCharacter(const uint8_t* p, size_t n) {
  if (n >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF) return "a UTF-8 byte-order mark";
  return "'" + std::string(reinterpret_cast<const char*>(p), LeadingCharacterLength(p, n)) + "'";
}

}  // namespace

uint32_t IdSpan::operator[](size_t i) const {
  return width_ == 4 ? LoadLittleEndian<uint32_t>(data_ + 4 * i) : LoadLittleEndian<uint16_t>(data_ + 2 * i);
}

void IdSpan::CopyTo(uint32_t* out) const {
  if (width_ == 4) {
    if constexpr (std::endian::native == std::endian::little) {
      if (count_ > 0) std::memcpy(out, data_, count_ * 4);
      return;
    }
    for (size_t i = 0; i < count_; ++i) out[i] = LoadLittleEndian<uint32_t>(data_ + 4 * i);
  } else {
    for (size_t i = 0; i < count_; ++i) out[i] = LoadLittleEndian<uint16_t>(data_ + 2 * i);
  }
}

void IdSpan::CopyTo(int64_t* out) const {
  if (width_ == 4) {
    for (size_t i = 0; i < count_; ++i) out[i] = LoadLittleEndian<uint32_t>(data_ + 4 * i);
  } else {
    for (size_t i = 0; i < count_; ++i) out[i] = LoadLittleEndian<uint16_t>(data_ + 2 * i);
  }
}

Attribute RecordView::AttributeIterator::operator*() const {
  // The block was validated by Parse, so the lengths are in range.
  const size_t key_len = p_[0];
  const size_t value_len = LoadLittleEndian<uint16_t>(p_ + 1 + key_len);
  return {std::string_view(reinterpret_cast<const char*>(p_ + 1), key_len),
          std::string_view(reinterpret_cast<const char*>(p_ + 3 + key_len), value_len)};
}

RecordView::AttributeIterator& RecordView::AttributeIterator::operator++() {
  const size_t key_len = p_[0];
  const size_t value_len = LoadLittleEndian<uint16_t>(p_ + 1 + key_len);
  p_ += f::kAttributeOverhead + key_len + value_len;
  return *this;
}

std::optional<std::string_view> RecordView::FindAttribute(std::string_view key) const {
  for (Attribute a : attributes()) {
    if (a.key == key) return a.value;
  }
  return std::nullopt;
}

Result<RecordView> RecordView::Parse(std::span<const uint8_t> bytes) {
  const uint8_t* p = bytes.data();
  const size_t n = bytes.size();
  if (n == 0) return Status::Corruption("token record is empty: expected at least a version byte");
  const uint8_t version = p[f::kVersionOffset];
  if (version == 0) {
    return Status::Corruption("token record has format version 0, which no writer produces: the bytes are not a "
                              "tokenfeed record or are damaged");
  }
  if (version > f::kCurrentVersion && LooksLikeText(p, n)) {
    return Status::InvalidArgument("not a token record: its bytes are text (starting with " +
                                   DescribeLeadingCharacter(p, n) +
                                   "), as in a topic of raw documents; tokenfeed reads the token topics that "
                                   "ingest and serve write (a raw topic is serve's --from)");
  }
  if (version > f::kCurrentVersion) {
    return Status::Unsupported("token record has format version " + Num(version) +
                               ", newer than this build of tokenfeed reads (version " + Num(f::kCurrentVersion) +
                               "): upgrade tokenfeed to read this topic");
  }
  if (n < f::kHeaderSize) return Truncated(n, f::kHeaderSize, "the version-1 header");
  const uint8_t flags = p[f::kFlagsOffset];
  if ((flags & ~f::kKnownFlags) != 0) {
    return Status::Unsupported("token record has flags " + Hex(flags) + " with bits this build does not know: it was written by a newer tokenfeed; upgrade to read it");
  }
  const uint16_t reserved = LoadLittleEndian<uint16_t>(p + f::kReservedOffset);
  if (reserved != 0) {
    return Status::Corruption("token record has " + Num(reserved) +
                              " in its reserved header field, which must be 0: the record is damaged");
  }

  RecordView v;
  v.bytes_ = bytes;
  v.version_ = version;
  v.doc_seq_ = LoadLittleEndian<uint64_t>(p + f::kDocSeqOffset);
  v.source_line_ = LoadLittleEndian<uint64_t>(p + f::kSourceLineOffset);
  v.source_byte_offset_ = LoadLittleEndian<uint64_t>(p + f::kSourceByteOffset);
  const size_t path_len = LoadLittleEndian<uint16_t>(p + f::kSourcePathLengthOffset);
  const size_t attrs_len = LoadLittleEndian<uint16_t>(p + f::kAttributesLengthOffset);
  const uint64_t id_count = LoadLittleEndian<uint32_t>(p + f::kIdCountOffset);
  const size_t width = (flags & f::kFlagIds32) ? 4 : 2;
  v.source_kind_ = (flags & f::kFlagMessageSource) ? SourceKind::kMessage : SourceKind::kFile;
  if (path_len > f::kMaxSourcePathBytes) {
    return Status::Corruption("token record's source path length is " + Num(path_len) + ", above the limit of " +
                              Num(f::kMaxSourcePathBytes) + ": the record is damaged");
  }
  if (attrs_len > f::kMaxAttributesBytes) {
    return Status::Corruption("token record's attribute block length is " + Num(attrs_len) + ", above the limit of " +
                              Num(f::kMaxAttributesBytes) + ": the record is damaged");
  }
  const size_t before_ids = f::kHeaderSize + path_len + attrs_len;
  const size_t padding = (f::kIdAlignment - before_ids % f::kIdAlignment) % f::kIdAlignment;
  const uint64_t expected = before_ids + padding + id_count * width;
  if (n < before_ids) return Truncated(n, before_ids, "its source path and attributes");
  if (n < expected) return Truncated(n, expected, Num(id_count) + " token ids");
  if (n > expected) {
    return Status::Corruption("token record is " + Num(n) + " bytes but its header describes " + Num(expected) +
                              " (" + Num(id_count) + " ids of " + Num(width) +
                              " bytes): the lengths are inconsistent, the record is damaged");
  }
  for (size_t i = 0; i < padding; ++i) {
    if (p[before_ids + i] != 0) {
      return Status::Corruption("token record has a nonzero padding byte before its ids: the record is damaged");
    }
  }

  const uint8_t* a = p + f::kHeaderSize + path_len;
  const uint8_t* const a_end = a + attrs_len;
  for (size_t index = 0; a < a_end; ++index) {
    const size_t left = static_cast<size_t>(a_end - a);
    const size_t key_len = a[0];
    if (key_len == 0) {
      return Status::Corruption("token record attribute " + Num(index) + " has an empty key: the record is damaged");
    }
    if (left < f::kAttributeOverhead + key_len) {
      return Status::Corruption("token record attribute " + Num(index) +
                                " runs past the end of the attribute block: the record is damaged");
    }
    const size_t value_len = LoadLittleEndian<uint16_t>(a + 1 + key_len);
    if (left < f::kAttributeOverhead + key_len + value_len) {
      return Status::Corruption("token record attribute " + Num(index) +
                                " value runs past the end of the attribute block: the record is damaged");
    }
    a += f::kAttributeOverhead + key_len + value_len;
  }

  v.source_path_ = std::string_view(reinterpret_cast<const char*>(p + f::kHeaderSize), path_len);
  v.attributes_ = bytes.subspan(f::kHeaderSize + path_len, attrs_len);
  v.ids_ = IdSpan(p + before_ids + padding, id_count, width);
  return v;
}

}  // namespace tokenfeed::record
