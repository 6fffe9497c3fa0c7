#include "verify/inputs/replay_workload.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <optional>

#include "verify/inputs/replay.hpp"
#include "verify/inputs/workload_base.hpp"

// The replay workload: the initial matrix and the moves of a user's HDF5
// file, in order (verify/inputs/replay.hpp; schema in docs/replay.md). n
// must equal the file's N; the other parameters are not used. Moves may
// carry the recorded decision (Move::accept, Move::uniform).

namespace slaterlab {
namespace {

using namespace workload_detail;

namespace fs = std::filesystem;

// ---- the replay workload (its file format is replay.hpp) --------------------

/// FNV-1a, 64 bits, of the file's bytes, as 16 hex digits.
std::string checksum(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::uint64_t h = 1469598103934665603ull;
  char buffer[1 << 16];
  while (in) {
    in.read(buffer, sizeof buffer);
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      h = (h ^ static_cast<unsigned char>(buffer[i])) * 1099511628211ull;
    }
  }
  return fmt::format("{:016x}", h);
}

class ReplayWorkload final : public Workload {
 public:
  ReplayWorkload(const WorkloadSpec& spec, ReplayData data)
      : spec_(spec), data_(std::move(data)), checksum_(checksum(spec.file)) {}

  std::string name() const override { return "replay"; }

  Eigen::MatrixXd initial_matrix() override {
    started_ = true;
    return data_.initial;
  }

  Move next_move(const Eigen::MatrixXd& current) override {
    if (!started_) throw std::logic_error("workload: next_move called before initial_matrix");
    if (current.rows() != data_.n() || current.cols() != data_.n()) {
      throw std::invalid_argument(
          fmt::format("workload: next_move expects a {0} x {0} matrix, "
                      "got {1} x {2}",
                      data_.n(), current.rows(), current.cols()));
    }
    if (next_ >= data_.moves()) {
      throw std::logic_error(
          fmt::format("workload: replay file {} holds only {} moves", spec_.file, data_.moves()));
    }
    const auto t = std::size_t(next_);
    Move move{data_.electron[t], data_.columns.col(next_)};
    if (data_.accept) move.accept = (*data_.accept)[t];
    if (data_.uniform) move.uniform = (*data_.uniform)[t];
    ++next_;
    return move;
  }

  bool cycles() const override { return data_.cycle.has_value(); }

  /// The moves of the next cycle (consecutive moves with one cycle index).
  std::vector<Move> next_cycle(const Eigen::MatrixXd& current) override {
    if (!cycles()) return Workload::next_cycle(current);
    std::vector<Move> cycle{next_move(current)};
    const auto& index = *data_.cycle;
    while (next_ < data_.moves() && index[std::size_t(next_)] == index[std::size_t(next_ - 1)]) {
      cycle.push_back(next_move(current));
    }
    return cycle;
  }

  std::vector<std::pair<std::string, std::string>> parameters() const override {
    std::vector<std::pair<std::string, std::string>> p = {
        {"kind", "replay"},
        {"file", spec_.file},
        {"n", std::to_string(data_.n())},
        {"moves_in_file", std::to_string(data_.file_moves)},
        {"layout", data_.layout},
        {"recorded_accept", data_.accept ? "true" : "false"},
        {"recorded_uniform", data_.uniform ? "true" : "false"},

        {"content_fnv1a64", checksum_},
    };
    if (data_.cycle) {
      p.emplace_back("cycles", std::to_string(data_.cycle->empty() ? 0 : data_.cycle->back() + 1));
    }
    for (const auto& [key, value] : data_.metadata) p.emplace_back("meta." + key, value);
    return p;
  }

 private:
  WorkloadSpec spec_;
  ReplayData data_;
  std::string checksum_;
  std::int64_t next_ = 0;
  bool started_ = false;
};

}  // namespace

std::unique_ptr<Workload> make_replay_workload(const WorkloadSpec& spec) {
  if (spec.file.empty()) throw std::invalid_argument("workload: replay needs a 'file'");
  ReplayData data = read_replay(spec.file, spec.replay_moves);
  if (spec.n != data.n()) {
    throw std::invalid_argument(fmt::format("workload: replay file {} holds N = {}, but n = {}",
                                            spec.file, data.n(), spec.n));
  }
  return std::make_unique<ReplayWorkload>(spec, std::move(data));
}


}  // namespace slaterlab
