// A workload kind of one's own (toys.hpp): A = I + delta G / sqrt(N), each
// proposal replacing column k = move mod N by e_k + delta g / sqrt(N), G and
// g standard normal (independent streams of the seed). ||G||_2 / sqrt(N)
// tends to 2, so for delta well below 1/2 every matrix of the walk stays
// within a small factor of the identity: a well-conditioned workload. It
// reads the spec's common fields and `delta` (validated > 0 and finite by
// the registry before the factory runs); its parameters are written to the
// results file as any built-in kind's.

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <stdexcept>

#include "tests/extending/toys.hpp"
#include "verify/inputs/workload_registry.hpp"

namespace slaterlab::toys {
namespace {

class ToyShift final : public Workload {
 public:
  explicit ToyShift(const WorkloadSpec& spec)
      : spec_(spec),
        scale_(spec.delta / std::sqrt(double(spec.n))),
        initial_rng_(spec.seed, kWorkloadStreams),
        column_rng_(spec.seed, kWorkloadStreams + 1) {}

  std::string name() const override { return spec_.kind; }

  Eigen::MatrixXd initial_matrix() override {
    if (!initial_) {
      initial_ = Eigen::MatrixXd::Identity(spec_.n, spec_.n) +
                 scale_ * initial_rng_.normal_matrix(spec_.n, spec_.n);
    }
    return *initial_;
  }

  Move next_move(const Eigen::MatrixXd& current) override {
    if (!initial_) throw std::logic_error("toy-shift: next_move called before initial_matrix");
    if (current.rows() != spec_.n || current.cols() != spec_.n)
      throw std::invalid_argument(fmt::format("toy-shift: next_move expects a {0} x {0} matrix",
                                              spec_.n));
    Move move;
    move.k = moves_++ % spec_.n;
    move.column = scale_ * column_rng_.normal_vector(spec_.n);
    move.column(move.k) += 1.0;
    return move;
  }

  std::vector<std::pair<std::string, std::string>> parameters() const override {
    return {{"kind", spec_.kind},
            {"n", std::to_string(spec_.n)},
            {"seed", std::to_string(spec_.seed)},
            {"delta", fmt::format("{:.17g}", spec_.delta)}};
  }

 private:
  const WorkloadSpec spec_;
  const double scale_;
  Rng initial_rng_;
  Rng column_rng_;
  std::optional<Eigen::MatrixXd> initial_;
  Eigen::Index moves_ = 0;
};

}  // namespace

void register_toy_workload() {
  register_workload({"toy-shift", [](const WorkloadSpec& spec) -> std::unique_ptr<Workload> {
                       return std::make_unique<ToyShift>(spec);
                     }});
}

}  // namespace slaterlab::toys
