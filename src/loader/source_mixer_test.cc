#include "loader/source_mixer.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace tokenfeed::loader {
namespace {

std::vector<size_t> Draw(SourceMixer& mixer, size_t n) {
  std::vector<size_t> drawn;
  for (size_t i = 0; i < n; ++i) drawn.push_back(mixer.Next());
  return drawn;
}

// After every sample, each source is within one sample of its share.
TEST(SourceMixerTest, EveryPrefixFollowsTheProportions) {
  const std::vector<double> weights = {7, 2, 1, 0.5};
  SourceMixer mixer(weights);
  std::vector<uint64_t> counts(weights.size(), 0);
  for (uint64_t n = 1; n <= 10000; ++n) {
    ++counts[mixer.Next()];
    for (size_t s = 0; s < weights.size(); ++s) {
      const double share = weights[s] / 10.5 * static_cast<double>(n);
      ASSERT_LE(std::abs(static_cast<double>(counts[s]) - share), 1.0) << "source " << s << " after " << n;
    }
  }
  EXPECT_EQ(mixer.counts(), counts);
  EXPECT_DOUBLE_EQ(mixer.weight(0), 7 / 10.5);
}

TEST(SourceMixerTest, WeightsAreProportionsAndZeroIsNeverChosen) {
  SourceMixer a({7, 0, 3}), b({0.7, 0, 0.3});
  const std::vector<size_t> drawn = Draw(a, 1000);
  EXPECT_EQ(Draw(b, 1000), drawn);
  EXPECT_EQ(a.counts(), (std::vector<uint64_t>{700, 0, 300}));
  SourceMixer one({0, 0, 2});
  EXPECT_EQ(Draw(one, 5), (std::vector<size_t>{2, 2, 2, 2, 2}));
}

TEST(SourceMixerTest, DeterministicAndResumableFromItsCounts) {
  SourceMixer whole({5, 3, 1});
  const std::vector<size_t> drawn = Draw(whole, 900);
  SourceMixer again({5, 3, 1});
  EXPECT_EQ(Draw(again, 900), drawn);
  for (size_t at : {0u, 1u, 17u, 450u, 899u}) {
    SourceMixer before({5, 3, 1});
    Draw(before, at);
    SourceMixer resumed({5, 3, 1});
    resumed.Resume(before.counts());
    EXPECT_EQ(Draw(resumed, 900 - at), std::vector<size_t>(drawn.begin() + at, drawn.end())) << "at " << at;
  }
}

// A copy is a saved position: the loader tries a step on the mixer and
// goes back to the copy when the step cannot be filled.
TEST(SourceMixerTest, ACopyGoesBack) {
  SourceMixer mixer({1, 1});
  Draw(mixer, 3);
  const SourceMixer saved = mixer;
  const std::vector<size_t> next = Draw(mixer, 4);
  mixer = saved;
  EXPECT_EQ(Draw(mixer, 4), next);
}

}  // namespace
}  // namespace tokenfeed::loader
