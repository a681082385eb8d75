// Strong id types shared by the embedded log, the Kafka transport and the
// loader: a PartitionId is not an Offset, and an Offset is not a record count,
// so mixing them up is a compile error instead of a silent bug.
// They are not general integers: only the arithmetic that means something is
// defined (an offset plus a count, the distance between two offsets).
// Plain values: trivially copyable, safe to share between threads like ints.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace tokenfeed {

// One partition of a topic, numbered from 0.
class PartitionId {
 public:
  constexpr PartitionId() = default;
  constexpr explicit PartitionId(uint32_t value) : value_(value) {}
  constexpr uint32_t value() const { return value_; }
  friend constexpr auto operator<=>(PartitionId, PartitionId) = default;

 private:
  uint32_t value_ = 0;
};

// A record's position in its partition, as in Kafka: offsets increase with
// each record appended. In the embedded log they are dense record indices
// from 0 (the n-th record appended has offset n-1); a Kafka partition may
// hold offsets with no record to read (a transaction's marker, an aborted
// transaction's records, records removed by compaction), so there an offset
// range counts offsets, not records.
class Offset {
 public:
  constexpr Offset() = default;
  constexpr explicit Offset(uint64_t value) : value_(value) {}
  constexpr uint64_t value() const { return value_; }
  friend constexpr auto operator<=>(Offset, Offset) = default;

  // The offset `count` records later.
  friend constexpr Offset operator+(Offset o, uint64_t count) { return Offset(o.value_ + count); }
  Offset& operator+=(uint64_t count) {
    value_ += count;
    return *this;
  }
  // The number of records from `b` up to (not including) `a`; needs a >= b.
  friend constexpr uint64_t operator-(Offset a, Offset b) { return a.value_ - b.value_; }

 private:
  uint64_t value_ = 0;
};

inline std::string ToString(PartitionId p) { return std::to_string(p.value()); }
inline std::string ToString(Offset o) { return std::to_string(o.value()); }

}  // namespace tokenfeed

template <>
struct std::hash<tokenfeed::PartitionId> {
  size_t operator()(tokenfeed::PartitionId p) const noexcept { return std::hash<uint32_t>()(p.value()); }
};
template <>
struct std::hash<tokenfeed::Offset> {
  size_t operator()(tokenfeed::Offset o) const noexcept { return std::hash<uint64_t>()(o.value()); }
};
