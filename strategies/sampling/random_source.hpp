#pragma once
// The random numbers a walker consumes, behind a small abstract interface.
//
// Why an interface and not verify's Rng: strategies/ must not depend on
// verify/. Why not a template parameter on the walker: the walker already
// calls the orbital set and the determinant strategy through virtual
// functions, and one more virtual call per variate costs nanoseconds next to
// the O(N) orbital evaluation and O(N^2) ratio of every move, while keeping
// the sampling code a compiled library. Any generator with `double uniform()`
// (in [0, 1)) and `double normal()` (N(0, 1)) is adapted by RandomAdapter;
// verify and the tests wrap Rng::stream(seed, stream_id) in it.
//
// Reproducibility contract: a walker's decisions and path are a pure function
// of its inputs and of the sequence of variates it reads, and the ORDER in
// which it reads them is fixed by the scheme (walker.hpp), never by the
// outcome of a decision. Two walkers given equal streams therefore read the
// same variates move for move, which is what lockstep comparisons rely on.

#include <memory>
#include <utility>

namespace slaterlab {

class RandomSource {
 public:
  virtual ~RandomSource() = default;
  /// Uniform variate in [0, 1).
  virtual double uniform() = 0;
  /// Standard normal variate.
  virtual double normal() = 0;
};

/// Wraps any generator with uniform() and normal() members.
template <class Generator>
class RandomAdapter final : public RandomSource {
 public:
  explicit RandomAdapter(Generator generator) : generator_(std::move(generator)) {}
  double uniform() override { return generator_.uniform(); }
  double normal() override { return generator_.normal(); }
  Generator& generator() { return generator_; }

 private:
  Generator generator_;
};

template <class Generator>
std::unique_ptr<RandomSource> make_random_source(Generator generator) {
  return std::make_unique<RandomAdapter<Generator>>(std::move(generator));
}

}  // namespace slaterlab
