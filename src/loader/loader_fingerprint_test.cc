#include "loader/loader_fingerprint.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tokenfeed::loader {
namespace {

LoaderOptions Options() {
  LoaderOptions o;
  o.sources = {{"log:/data/a", 7}, {"log:/data/b", 3}};
  o.seq_len = 16;
  o.seed = 7;
  return o;
}

std::string Value(const LoaderSettings& settings, const std::string& name) {
  for (const auto& [n, v] : settings) {
    if (n == name) return v;
  }
  return "(absent)";
}

std::vector<StateSetting> AsSaved(const LoaderSettings& settings) {
  std::vector<StateSetting> saved;
  for (const auto& [name, value] : settings) saved.push_back({name, value});
  return saved;
}

TEST(LoaderFingerprintTest, SettingsNameEveryOptionAndTheSourcesAsProportions) {
  const LoaderSettings s = SettingsOf(Options(), {16, 16});
  ASSERT_EQ(s.size(), 14u);
  EXPECT_EQ(s[0], (std::pair<std::string, std::string>{"seq_len", "16"}));
  EXPECT_EQ(Value(s, "seed"), "7");
  EXPECT_EQ(Value(s, "shuffle"), "1");
  EXPECT_EQ(Value(s, "block_records"), "16");  // one number when the sources share it
  EXPECT_EQ(Value(s, "bos_id"), "-");
  EXPECT_EQ(Value(s, "ignore_index"), "-100");
  EXPECT_EQ(Value(s, "source 0"), "log:/data/a@0.7");
  EXPECT_EQ(Value(s, "source 1"), "log:/data/b@0.3");
  EXPECT_EQ(Value(SettingsOf(Options(), {16, 1024}), "block_records"), "16,1024");
}

// A state saved by an earlier build must still load: the fingerprint of
// these settings is fixed.
TEST(LoaderFingerprintTest, TheFingerprintIsFixedAndSeesWeightsAsProportions) {
  const std::string fingerprint = Fingerprint(SettingsOf(Options(), {16, 16}));
  EXPECT_EQ(fingerprint, "377f5cd5549e3262");
  LoaderOptions scaled = Options();
  scaled.sources = {{"log:/data/a", 0.7}, {"log:/data/b", 0.3}};
  EXPECT_EQ(Fingerprint(SettingsOf(scaled, {16, 16})), fingerprint);
  LoaderOptions other = Options();
  other.pad_id = 1;
  EXPECT_NE(Fingerprint(SettingsOf(other, {16, 16})), fingerprint);
  // world_size, rank and batch_size are not in it.
  other = Options();
  other.world_size = 4;
  other.rank = 3;
  other.batch_size = 2;
  other.prefetch_batches = 1;
  EXPECT_EQ(Fingerprint(SettingsOf(other, {16, 16})), fingerprint);
}

TEST(LoaderFingerprintTest, DifferencesNameEachSettingBothWays) {
  const LoaderSettings here = SettingsOf(Options(), {16, 16});
  EXPECT_EQ(SettingDifferences(here, AsSaved(here)), "");
  LoaderOptions then = Options();
  then.seq_len = 32;
  then.sources[1].weight = 7;
  EXPECT_EQ(SettingDifferences(here, AsSaved(SettingsOf(then, {16, 16}))),
            "seq_len is 32 in the state, 16 here; source 0 is log:/data/a@0.5 in the state, log:/data/a@0.7 here "
            "(URI@proportion); source 1 is log:/data/b@0.5 in the state, log:/data/b@0.3 here (URI@proportion)");
  // A missing setting or one that is no string; the first of two entries of a name counts.
  std::vector<StateSetting> saved = AsSaved(here);
  saved.erase(saved.begin());
  saved[0].value.reset();
  saved.push_back({"shuffle", "0"});
  EXPECT_EQ(SettingDifferences(here, saved),
            "seq_len is not in the state, 16 here; seed is not in the state, 7 here");
  then = Options();
  then.sources.push_back({"log:/data/c", 1});
  EXPECT_EQ(SettingDifferences(here, AsSaved(SettingsOf(then, {16, 16, 16}))),
            "source 0 is log:/data/a@0.636363636 in the state, log:/data/a@0.7 here (URI@proportion); "
            "source 1 is log:/data/b@0.272727273 in the state, log:/data/b@0.3 here (URI@proportion); "
            "3 sources in the state, 2 here");
}

TEST(LoaderFingerprintTest, AStateWithOtherSettingsIsRefusedNamingThem) {
  const LoaderSettings here = SettingsOf(Options(), {16, 16});
  LoaderState state;
  state.fingerprint = Fingerprint(here);
  EXPECT_TRUE(CheckSameSettings(state, here).ok());
  LoaderOptions then = Options();
  then.seed = 3;
  state.fingerprint = Fingerprint(SettingsOf(then, {16, 16}));
  state.settings = AsSaved(SettingsOf(then, {16, 16}));
  Status s = CheckSameSettings(state, here);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), std::string("the loader state was saved with other sources or settings: seed is 3 in the "
                                     "state, 7 here. To resume, these must be the same: ") +
                             kCheckedSettings + "; world_size and batch_size may change");
  // Without settings, the fingerprints are all there is to show.
  state.settings.reset();
  s = CheckSameSettings(state, here);
  EXPECT_NE(s.message().find("(fingerprint " + state.fingerprint + ", this loader's " + Fingerprint(here) + ")"),
            std::string::npos)
      << s.ToString();
}

}  // namespace
}  // namespace tokenfeed::loader
