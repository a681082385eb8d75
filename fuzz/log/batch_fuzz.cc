// Fuzzes the batch parser of the embedded log on arbitrary bytes: header
// decoding, the entry walk, and iteration over an accepted batch must never
// read outside the input, and every record of an accepted batch must lie
// inside it. Aborts if not.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "log/batch_access.h"
#include "log/log_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace f = tokenfeed::log::format;
  if (size < f::kBatchHeaderSize) return 0;
  f::BatchHeader h;
  // Fuzzers rarely forge a header CRC, so also try the input with its
  // header checksum patched in, to reach the body checks.
  std::vector<uint8_t> patched(data, data + size);
  f::BatchHeader claimed;
  claimed.batch_length = static_cast<uint32_t>(patched[8] | patched[9] << 8 | patched[10] << 16 | uint32_t{patched[11]} << 24);
  claimed.record_count = static_cast<uint32_t>(patched[12] | patched[13] << 8 | patched[14] << 16 | uint32_t{patched[15]} << 24);
  claimed.data_crc = static_cast<uint32_t>(patched[36] | patched[37] << 8 | patched[38] << 16 | uint32_t{patched[39]} << 24);
  f::EncodeBatchHeader(claimed, patched.data());
  for (const std::vector<uint8_t>& bytes : {std::vector<uint8_t>(data, data + size), patched}) {
    if (!f::DecodeBatchHeader(bytes.data(), &h).empty() || h.batch_length > bytes.size()) continue;
    const std::span<const uint8_t> batch(bytes.data(), h.batch_length);
    if (!f::CheckBatchBody(batch, h, /*verify_crc=*/false).empty()) continue;
    const tokenfeed::log::BatchView view = tokenfeed::log::BatchViewAccess::Make(batch, h, h.record_count / 2);
    uint32_t n = 0;
    for (tokenfeed::log::LogRecord r : view) {
      if (r.bytes.data() < batch.data() || r.bytes.data() + r.bytes.size() > batch.data() + batch.size()) {
        std::fprintf(stderr, "batch_fuzz: record %u lies outside its batch\n", n);
        std::abort();
      }
      ++n;
    }
    if (n != view.size()) {
      std::fprintf(stderr, "batch_fuzz: view says %u records, iteration gave %u\n", view.size(), n);
      std::abort();
    }
  }
  return 0;
}
