// What the log's file fuzzers share: an input read as a stream of edit
// arguments (past its end every read gives zeros), and the edits of a file's
// bytes every such fuzzer makes. Fuzz harness code only; not thread-safe.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

namespace tokenfeed::fuzz {

class EditInput {
 public:
  EditInput(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  bool done() const { return p_ == end_; }
  size_t left() const { return static_cast<size_t>(end_ - p_); }
  uint8_t Byte() { return p_ == end_ ? 0 : *p_++; }
  uint32_t U16() { return Byte() | uint32_t{Byte()} << 8; }
  uint32_t U32() { return U16() | U16() << 16; }
  uint64_t U64() { return U32() | uint64_t{U32()} << 32; }
  std::string Bytes(size_t n) {
    n = std::min(n, left());
    std::string s(reinterpret_cast<const char*>(p_), n);
    p_ += n;
    return s;
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
};

// Edit `op` (0: overwrite, 1: flip bits of one byte, 2: truncate, 3: append)
// at `pos` (at most bytes->size()), with up to max_insert - 1 bytes of the
// input where it writes some. false: `op` is none of these.
inline bool EditBytes(EditInput& in, uint8_t op, size_t pos, size_t max_insert, std::string* bytes) {
  switch (op) {
    case 0: {
      const std::string with = in.Bytes(in.Byte() % max_insert);
      bytes->replace(pos, std::min(with.size(), bytes->size() - pos), with);
      return true;
    }
    case 1:
      if (pos < bytes->size()) (*bytes)[pos] = static_cast<char>((*bytes)[pos] ^ (in.Byte() | 1));
      return true;
    case 2:
      bytes->resize(pos);
      return true;
    case 3:
      *bytes += in.Bytes(in.Byte() % max_insert);
      return true;
    default:
      return false;
  }
}

}  // namespace tokenfeed::fuzz
