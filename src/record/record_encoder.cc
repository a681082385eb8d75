#include <cstring>
#include <string>

#include "base/little_endian.h"
#include "tokenfeed/record.h"

namespace tokenfeed::record {

namespace f = format;

Status RecordEncoder::Prepare(const RecordFields& fields, std::span<const uint32_t> ids) {
  if (fields.source_path.size() > f::kMaxSourcePathBytes) {
    return Status::InvalidArgument("record source path is " + std::to_string(fields.source_path.size()) +
                                   " bytes, more than the format's limit of " +
                                   std::to_string(f::kMaxSourcePathBytes) + ": shorten the input path");
  }
  if (ids.size() > f::kMaxIdCount) {
    return Status::InvalidArgument("document has " + std::to_string(ids.size()) + " token ids, more than the " +
                                   std::to_string(f::kMaxIdCount) + " one record can hold: split the document");
  }
  size_t attributes_bytes = 0;
  for (size_t i = 0; i < fields.attributes.size(); ++i) {
    const Attribute& a = fields.attributes[i];
    if (a.key.empty() || a.key.size() > f::kMaxAttributeKeyBytes) {
      return Status::InvalidArgument("record attribute " + std::to_string(i) + " has a key of " +
                                     std::to_string(a.key.size()) + " bytes; keys must be 1 to " +
                                     std::to_string(f::kMaxAttributeKeyBytes) + " bytes");
    }
    for (size_t j = 0; j < i; ++j) {
      if (fields.attributes[j].key == a.key) {
        return Status::InvalidArgument("record attribute key '" + std::string(a.key) + "' appears twice");
      }
    }
    attributes_bytes += f::kAttributeOverhead + a.key.size() + a.value.size();
  }
  if (attributes_bytes > f::kMaxAttributesBytes) {
    return Status::InvalidArgument("record attributes take " + std::to_string(attributes_bytes) +
                                   " bytes, more than the format's limit of " +
                                   std::to_string(f::kMaxAttributesBytes) + ": keep attributes to short tags");
  }

  // OR of all ids: any bit above 15 means some id needs 32 bits. One pass
  // without branches, which the compiler vectorises.
  uint32_t all_bits = 0;
  for (uint32_t id : ids) all_bits |= id;
  size_t width = (all_bits >> 16) != 0 ? 4 : 2;
  if (fields.id_width == IdWidth::k32) width = 4;
  if (fields.id_width == IdWidth::k16 && width == 4) {
    for (size_t i = 0; i < ids.size(); ++i) {
      if (ids[i] > 0xFFFF) {
        return Status::InvalidArgument("token id " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
                                       " does not fit the requested 16-bit id width: use IdWidth::kAuto");
      }
    }
  }

  const size_t before_ids = f::kHeaderSize + fields.source_path.size() + attributes_bytes;
  fields_ = fields;
  ids_ = ids;
  width_ = width;
  attributes_bytes_ = attributes_bytes;
  padding_ = (f::kIdAlignment - before_ids % f::kIdAlignment) % f::kIdAlignment;
  size_ = before_ids + padding_ + ids.size() * width;
  return Status::OK();
}

void RecordEncoder::WriteTo(uint8_t* dest) const {
  uint8_t* p = dest;
  p[f::kVersionOffset] = f::kCurrentVersion;
  p[f::kFlagsOffset] = static_cast<uint8_t>((width_ == 4 ? f::kFlagIds32 : 0) |
                                           (fields_.source_kind == SourceKind::kMessage ? f::kFlagMessageSource : 0));
  StoreLittleEndian<uint16_t>(p + f::kSourcePathLengthOffset, static_cast<uint16_t>(fields_.source_path.size()));
  StoreLittleEndian<uint32_t>(p + f::kIdCountOffset, static_cast<uint32_t>(ids_.size()));
  StoreLittleEndian<uint64_t>(p + f::kDocSeqOffset, fields_.doc_seq);
  StoreLittleEndian<uint64_t>(p + f::kSourceLineOffset, fields_.source_line);
  StoreLittleEndian<uint64_t>(p + f::kSourceByteOffset, fields_.source_byte_offset);
  StoreLittleEndian<uint16_t>(p + f::kAttributesLengthOffset, static_cast<uint16_t>(attributes_bytes_));
  StoreLittleEndian<uint16_t>(p + f::kReservedOffset, 0);
  p += f::kHeaderSize;
  if (!fields_.source_path.empty()) std::memcpy(p, fields_.source_path.data(), fields_.source_path.size());
  p += fields_.source_path.size();
  for (const Attribute& a : fields_.attributes) {
    *p++ = static_cast<uint8_t>(a.key.size());
    std::memcpy(p, a.key.data(), a.key.size());
    p += a.key.size();
    StoreLittleEndian<uint16_t>(p, static_cast<uint16_t>(a.value.size()));
    p += 2;
    if (!a.value.empty()) std::memcpy(p, a.value.data(), a.value.size());
    p += a.value.size();
  }
  std::memset(p, 0, padding_);
  p += padding_;
  // Hot path: the ids. Both loops compile to vector stores.
  if (width_ == 4) {
    if constexpr (std::endian::native == std::endian::little) {
      if (!ids_.empty()) std::memcpy(p, ids_.data(), ids_.size() * 4);
    } else {
      for (size_t i = 0; i < ids_.size(); ++i) StoreLittleEndian<uint32_t>(p + 4 * i, ids_[i]);
    }
  } else {
    for (size_t i = 0; i < ids_.size(); ++i) StoreLittleEndian<uint16_t>(p + 2 * i, static_cast<uint16_t>(ids_[i]));
  }
}

Status EncodeRecord(const RecordFields& fields, std::span<const uint32_t> ids, std::string* out) {
  RecordEncoder encoder;
  TF_RETURN_IF_ERROR(encoder.Prepare(fields, ids));
  out->resize(encoder.size());
  encoder.WriteTo(reinterpret_cast<uint8_t*>(out->data()));
  return Status::OK();
}

}  // namespace tokenfeed::record
