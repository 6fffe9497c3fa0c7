// An orbital set of one's own (toys.hpp): the system's analytic orbitals
// with every value, gradient and Laplacian rounded to float. Each entry is
// then within u = 2^-24 (float's unit roundoff) of the exact one relative
// to itself, so its orbital accuracy (against the analytic set, in units of
// float's epsilon 2^-23, the kind's `epsilon`) is at most 1/2 in every
// column of that table. It wraps the analytic set the registry hands it,
// keeping a share of it; it tabulates nothing (not gridded), and asks
// `slaterlab bench` to measure it (orbitals/toy-rounded/vgl/N:<N>).

#include <limits>
#include <memory>

#include "tests/extending/toys.hpp"
#include "verify/inputs/orbital_registry.hpp"

namespace slaterlab::toys {
namespace {

class ToyRounded final : public OrbitalSet {
 public:
  explicit ToyRounded(std::shared_ptr<const OrbitalSet> exact) : exact_(std::move(exact)) {}

  Eigen::Index size() const override { return exact_->size(); }
  std::string label() const override { return "toy-rounded"; }

  void evaluate_values(const Eigen::Matrix3Xd& positions, Eigen::MatrixXd& values) const override {
    exact_->evaluate_values(positions, values);
    round_to_float(values);
  }

  void evaluate_vgl(const Eigen::Matrix3Xd& positions, OrbitalVGL& out) const override {
    exact_->evaluate_vgl(positions, out);
    round_to_float(out.value);
    round_to_float(out.gradient);
    round_to_float(out.laplacian);
  }

 private:
  static void round_to_float(Eigen::MatrixXd& m) { m = m.cast<float>().cast<double>(); }

  std::shared_ptr<const OrbitalSet> exact_;
};

}  // namespace

void register_toy_orbitals() {
  register_orbital_set({.name = "toy-rounded",
                        .make = [](const OrbitalSource& source) -> std::shared_ptr<const OrbitalSet> {
                          return std::make_shared<ToyRounded>(source.exact);
                        },
                        .epsilon = std::numeric_limits<float>::epsilon(),
                        .benchmarked = true});
}

}  // namespace slaterlab::toys
