#pragma once
// Writes a lockstep experiment's walk as a replay file (docs/replay.md,
// schema version 2): the initial matrix, every proposal's electron and new
// column, the decision the run applied and the uniform it drew, and for
// update cycles each move's cycle. Run as workload = "replay", the file gives
// every strategy and the reference the same matrices, moves and decisions
// again, so a study on any workload (the electron gas, a molecule, a user's
// own) can be re-run, shared or fed to another code. `slaterlab run
// --replay-out DIR` records one file per experiment, DIR/<experiment>.replay.h5.
// Cost: the columns are kept in memory until the experiment ends, 8 N bytes
// a move. Errors: write() throws ReplayError on I/O failure and leaves no
// partial file at `path` (it writes path + ".partial" and renames it).

#include <Eigen/Core>

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "verify/inputs/workload.hpp"

namespace slaterlab {

class ReplayRecorder {
 public:
  /// The initial matrix and what the file's metadata says of the walk.
  void start(const Eigen::MatrixXd& initial,
             std::vector<std::pair<std::string, std::string>> metadata);
  /// One proposal and the decision applied, with the uniform drawn for it.
  void move(const Move& move, bool accept, double uniform);
  /// One update cycle, applied whole.
  void cycle(const std::vector<Move>& moves);
  /// Writes the file (atomically, see above).
  void write(const std::filesystem::path& path) const;

 private:
  Eigen::MatrixXd initial_;
  std::vector<std::pair<std::string, std::string>> metadata_;
  std::vector<Eigen::Index> electron_;
  std::vector<Eigen::VectorXd> columns_;
  std::vector<bool> accept_;
  std::vector<double> uniform_;
  std::vector<std::int64_t> cycle_;
  std::int64_t cycles_ = 0;
};

}  // namespace slaterlab
