#pragma once
// The machinery every generated workload shares (internal to verify/inputs;
// the contract of a workload is workload.hpp's): the three random streams,
// the electron order, the singular flag, the call-order checks and the
// common parameters. A kind derives from WorkloadBase and supplies
// make_initial(), make_move() and its own parameters.

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "verify/inputs/workload.hpp"
#include "verify/inputs/workload_text.hpp"

namespace slaterlab::workload_detail {

// Stream ids of Rng(seed, .), fixed so that results stay reproducible.
constexpr std::uint64_t kInitialStream = kWorkloadStreams + 0;
constexpr std::uint64_t kColumnStream = kWorkloadStreams + 1;
constexpr std::uint64_t kOrderStream = kWorkloadStreams + 2;

// "burst": one random electron moves this many times in a row.
constexpr Eigen::Index kBurst = 4;

// Shared machinery: streams, electron order, the singular flag, the
// call-order checks and the common parameters.
class WorkloadBase : public Workload {
 public:
  explicit WorkloadBase(const WorkloadSpec& spec)
      : spec_(spec),
        initial_rng_(spec.seed, kInitialStream),
        column_rng_(spec.seed, kColumnStream),
        order_rng_(spec.seed, kOrderStream) {}

  std::string name() const override { return spec_.kind; }

  Eigen::MatrixXd initial_matrix() final {
    if (!initial_) {
      Eigen::MatrixXd a = make_initial();
      if (spec_.singular) make_singular(a);
      initial_ = std::move(a);
    }
    return *initial_;
  }

  Move next_move(const Eigen::MatrixXd& current) final {
    require_current(current, "next_move");
    Move m = make_move(current);
    ++moves_;
    return m;
  }

  std::vector<std::pair<std::string, std::string>> parameters() const final {
    std::vector<std::pair<std::string, std::string>> p = {
        {"kind", spec_.kind},
        {"n", std::to_string(spec_.n)},
        {"seed", std::to_string(spec_.seed)},
        {"electron_order", spec_.electron_order},
        {"singular", spec_.singular ? "true" : "false"},
        {"rng", "mt19937_64 seeded by splitmix64(splitmix64(seed) ^ stream); polar normals"},
    };
    for (auto& kv : kind_parameters()) p.push_back(std::move(kv));
    return p;
  }

 protected:
  virtual Eigen::MatrixXd make_initial() = 0;
  virtual Move make_move(const Eigen::MatrixXd& current) = 0;
  virtual std::vector<std::pair<std::string, std::string>> kind_parameters() const { return {}; }

  void require_current(const Eigen::MatrixXd& current, const char* what) const {
    if (!initial_) throw std::logic_error(std::string("workload: ") + what + " called before initial_matrix");
    if (current.rows() != spec_.n || current.cols() != spec_.n) {
      bad(std::string(what) + " expects a " + std::to_string(spec_.n) + " x " +
          std::to_string(spec_.n) + " matrix, got " + std::to_string(current.rows()) + " x " +
          std::to_string(current.cols()));
    }
  }

  // The electron moved by proposal number moves_.
  Eigen::Index next_electron() {
    if (spec_.electron_order == "sweep") return moves_ % spec_.n;
    if (spec_.electron_order == "burst" && moves_ % kBurst != 0) return burst_electron_;
    burst_electron_ =
        static_cast<Eigen::Index>(order_rng_.index(static_cast<std::uint64_t>(spec_.n)));
    return burst_electron_;
  }

  Eigen::VectorXd gaussian_column() { return column_rng_.normal_vector(spec_.n); }

  const WorkloadSpec spec_;
  Rng initial_rng_;
  Rng column_rng_;
  Rng order_rng_;
  Eigen::Index moves_ = 0;  // proposals returned so far
  Eigen::Index burst_electron_ = 0;

 private:
  static void make_singular(Eigen::MatrixXd& a) {
    if (a.cols() == 1) {
      a.setZero();  // a 1 x 1 matrix has no second column to duplicate
    } else {
      a.col(a.cols() - 1) = a.col(0);
    }
  }

  std::optional<Eigen::MatrixXd> initial_;
};

}  // namespace slaterlab::workload_detail
