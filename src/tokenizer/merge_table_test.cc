#include "tokenizer/merge_table.h"

#include <map>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace tokenfeed::tokenizer {
namespace {

// The table against a std::map built from the same rules: every rule's pair,
// pairs that share an operand with a rule but have none, and random pairs.
void ExpectSameAsMap(const std::vector<MergeTable::Rule>& rules, uint32_t id_range, std::mt19937* rng) {
  MergeTable table(rules);
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> rank_of;
  for (size_t rank = 0; rank < rules.size(); ++rank) rank_of[{rules[rank].left, rules[rank].right}] = uint32_t(rank);
  EXPECT_EQ(table.size(), rank_of.size());
  auto check = [&](uint32_t l, uint32_t r) {
    MergeRule got = table.Find(l, r);
    auto it = rank_of.find({l, r});
    if (it == rank_of.end()) {
      ASSERT_EQ(got.rank, MergeTable::kNoRank) << l << " " << r;
    } else {
      ASSERT_EQ(got.rank, it->second) << l << " " << r;
      ASSERT_EQ(got.merged_id, rules[it->second].merged) << l << " " << r;
    }
  };
  std::uniform_int_distribution<uint32_t> id(0, id_range);
  for (const MergeTable::Rule& r : rules) {
    check(r.left, r.right);
    check(r.left, id(*rng));
    check(id(*rng), r.right);
    check(r.right, r.left);
  }
  for (int i = 0; i < 20000; ++i) check(id(*rng), id(*rng));
}

TEST(MergeTableTest, EmptyTableFindsNothing) {
  MergeTable none;
  EXPECT_EQ(none.Find(1, 2).rank, MergeTable::kNoRank);
  MergeTable built(std::vector<MergeTable::Rule>{});
  EXPECT_EQ(built.Find(0, 0).rank, MergeTable::kNoRank);
  EXPECT_EQ(built.size(), 0u);
}

TEST(MergeTableTest, SameAsMapForRandomRuleSets) {
  std::mt19937 rng(7);
  for (size_t n : {1u, 11u, 12u, 13u, 100u, 1000u, 50000u}) {
    for (uint32_t id_range : {40u, 5000u, MergeTable::kMaxId}) {
      std::uniform_int_distribution<uint32_t> id(0, id_range);
      std::vector<MergeTable::Rule> rules;
      for (size_t i = 0; i < n; ++i) rules.push_back({id(rng), id(rng), id(rng)});
      SCOPED_TRACE("n=" + std::to_string(n) + " ids<=" + std::to_string(id_range));
      ExpectSameAsMap(rules, id_range, &rng);
    }
  }
}

TEST(MergeTableTest, RepeatedPairTakesItsLastRank) {
  std::vector<MergeTable::Rule> rules = {{1, 2, 10}, {3, 4, 11}, {1, 2, 12}, {1, 2, 13}, {3, 4, 14}};
  MergeTable table(rules);
  EXPECT_EQ(table.size(), 2u);
  EXPECT_EQ(table.Find(1, 2).rank, 3u);
  EXPECT_EQ(table.Find(1, 2).merged_id, 13u);
  EXPECT_EQ(table.Find(3, 4).rank, 4u);
  EXPECT_EQ(table.Find(2, 1).rank, MergeTable::kNoRank);
}

// Many pairs whose hashes share groups: one left id with every right id, so
// probes run across full groups before they find a free slot.
TEST(MergeTableTest, DenseOperandRanges) {
  std::mt19937 rng(11);
  std::vector<MergeTable::Rule> rules;
  for (uint32_t l = 0; l < 64; ++l) {
    for (uint32_t r = 0; r < 512; ++r) rules.push_back({l, r, l * 512 + r});
  }
  ExpectSameAsMap(rules, 600, &rng);
  rules.clear();
  for (uint32_t i = 0; i < 30000; ++i) rules.push_back({MergeTable::kMaxId - i, i, i});
  ExpectSameAsMap(rules, MergeTable::kMaxId, &rng);
}

// Vocabularies numbered in merge order (merged id = rank + a constant) take
// the merged id from the rank; one rule off the pattern, even the last,
// must send every lookup back to the table.
TEST(MergeTableTest, MergedIdFromTheRankOnlyWhenEveryRuleFollowsIt) {
  std::mt19937 rng(3);
  for (bool last_breaks_it : {false, true}) {
    std::vector<MergeTable::Rule> rules;
    for (uint32_t rank = 0; rank < 3000; ++rank) rules.push_back({rank % 300, rank / 300 + 300, rank + 259});
    if (last_breaks_it) rules.back().merged = 7;
    SCOPED_TRACE(last_breaks_it ? "the last rule breaks the pattern" : "every rule follows it");
    MergeTable table(rules);
    for (uint32_t rank = 0; rank < rules.size(); ++rank) {
      ASSERT_EQ(table.MergedOf(rank), rules[rank].merged) << rank;
      ASSERT_EQ(table.Find(rules[rank].left, rules[rank].right).merged_id, rules[rank].merged) << rank;
    }
    ExpectSameAsMap(rules, 400, &rng);
  }
}

}  // namespace
}  // namespace tokenfeed::tokenizer
