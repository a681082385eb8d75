// Fuzzes RecordView::Parse. Any input it accepts must re-encode, with the
// same fields and id width, to exactly the same bytes: the parser and the
// encoder must agree on the grammar (docs/record_format.md). Aborts if not.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tokenfeed/record.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tokenfeed::record;
  auto v = RecordView::Parse(std::span<const uint8_t>(data, size));
  if (!v.ok()) return 0;
  std::vector<uint32_t> ids(v->ids().size());
  v->ids().CopyTo(ids.data());
  std::vector<Attribute> attrs;
  for (Attribute a : v->attributes()) attrs.push_back(a);
  RecordFields fields;
  fields.source_kind = v->source_kind();
  fields.source_path = v->source_path();
  fields.source_line = v->source_line();
  fields.source_byte_offset = v->source_byte_offset();
  fields.doc_seq = v->doc_seq();
  fields.attributes = attrs;
  fields.id_width = v->ids().width_bytes() == 4 ? IdWidth::k32 : IdWidth::k16;
  std::string again;
  if (!EncodeRecord(fields, ids, &again).ok()) return 0;  // e.g. a repeated key: parseable, not encodable
  if (again.size() != size || std::memcmp(again.data(), data, size) != 0) {
    std::fprintf(stderr, "record_view_fuzz: parse and encode disagree on a %zu-byte record\n", size);
    std::abort();
  }
  return 0;
}
