#include "base/crc32c.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tokenfeed::crc32c {
namespace {

// Known answers from RFC 3720 (iSCSI), appendix B.4, and the classic check
// value of the CRC catalogue.
struct Vector {
  std::vector<uint8_t> bytes;
  uint32_t crc;
};

std::vector<Vector> KnownVectors() {
  std::vector<Vector> v;
  v.push_back({std::vector<uint8_t>(32, 0x00), 0x8A9136AAu});
  v.push_back({std::vector<uint8_t>(32, 0xFF), 0x62A8AB43u});
  std::vector<uint8_t> up(32), down(32);
  for (int i = 0; i < 32; ++i) {
    up[i] = static_cast<uint8_t>(i);
    down[i] = static_cast<uint8_t>(31 - i);
  }
  v.push_back({up, 0x46DD794Eu});
  v.push_back({down, 0x113FDB5Cu});
  const std::string check = "123456789";
  v.push_back({std::vector<uint8_t>(check.begin(), check.end()), 0xE3069283u});
  v.push_back({{}, 0x00000000u});
  return v;
}

TEST(Crc32cTest, KnownVectorsPortable) {
  for (const Vector& v : KnownVectors()) {
    EXPECT_EQ(ExtendPortable(0, v.bytes.data(), v.bytes.size()), v.crc) << "length " << v.bytes.size();
  }
}

TEST(Crc32cTest, KnownVectorsDispatched) {
  for (const Vector& v : KnownVectors()) {
    EXPECT_EQ(Value(v.bytes.data(), v.bytes.size()), v.crc) << "length " << v.bytes.size();
  }
}

TEST(Crc32cTest, KnownVectorsHardware) {
  if (!HardwareAccelerated()) GTEST_SKIP() << "this CPU has no SSE4.2; the portable path is tested above";
  for (const Vector& v : KnownVectors()) {
    EXPECT_EQ(ExtendHardware(0, v.bytes.data(), v.bytes.size()), v.crc) << "length " << v.bytes.size();
  }
}

// The hardware path has three block paths (3 x 8 KiB, 3 x 256 bytes, words)
// plus unaligned heads and tails; every length and alignment near their
// boundaries must agree with the table implementation.
TEST(Crc32cTest, HardwareAgreesWithPortableOnAllPaths) {
  if (!HardwareAccelerated()) GTEST_SKIP() << "this CPU has no SSE4.2";
  std::mt19937_64 rng(12345);
  std::vector<uint8_t> buf(3 * 8192 * 2 + 3 * 256 * 2 + 64);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  std::vector<size_t> lengths;
  for (size_t n = 0; n < 80; ++n) lengths.push_back(n);
  for (size_t base : {size_t{768}, size_t{24576}, size_t{24576 + 768}, size_t{49152}}) {
    for (size_t d = 0; d < 20; ++d) {
      lengths.push_back(base - 10 + d);
    }
  }
  for (int i = 0; i < 50; ++i) lengths.push_back(rng() % (buf.size() - 16));
  for (size_t n : lengths) {
    for (size_t align = 0; align < 8; ++align) {
      const uint32_t seed = static_cast<uint32_t>(rng());
      ASSERT_EQ(ExtendHardware(seed, buf.data() + align, n), ExtendPortable(seed, buf.data() + align, n))
          << "length " << n << " alignment " << align;
    }
  }
}

TEST(Crc32cTest, ExtendEqualsValueOfConcatenation) {
  const std::string a = "hello, ";
  const std::string b = "world: a longer piece of text that crosses a few words";
  EXPECT_EQ(Extend(Value(a), b.data(), b.size()), Value(a + b));
  EXPECT_NE(Value(a), Value(b));
}

}  // namespace
}  // namespace tokenfeed::crc32c
