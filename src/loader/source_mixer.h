// SourceMixer: which source each sample of the global stream comes from. A
// deterministic weighted choice (smooth weighted round robin): the source
// whose share is furthest behind its weight. After n samples every source
// has supplied within one sample of weight * n. Not random: the seed plays
// no part, and the counts alone are the state (resuming sets them back).
// A value: copy it to try a step and go back; not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tokenfeed::loader {

class SourceMixer {
 public:
  SourceMixer() = default;
  // Weights >= 0 with a sum above 0 (as LoaderOptions requires); they count
  // as proportions of their sum. A source of weight 0 is never chosen.
  explicit SourceMixer(const std::vector<double>& weights);

  // The source of the next sample.
  size_t Next();

  // Samples drawn from each source so far (the state's "mixer").
  const std::vector<uint64_t>& counts() const { return counts_; }
  // Continues after `counts` (one per source) as if those samples had been drawn.
  void Resume(std::vector<uint64_t> counts);
  // Normalised: the weights as proportions.
  double weight(size_t source) const { return weights_[source]; }
  size_t sources() const { return weights_.size(); }

 private:
  std::vector<double> weights_;
  std::vector<uint64_t> counts_;
  uint64_t total_ = 0;
};

}  // namespace tokenfeed::loader
