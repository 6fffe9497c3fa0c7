#include "verify/run/replay_recorder.hpp"

#include <system_error>

#include "verify/inputs/replay.hpp"

namespace slaterlab {

void ReplayRecorder::start(const Eigen::MatrixXd& initial,
                           std::vector<std::pair<std::string, std::string>> metadata) {
  *this = ReplayRecorder{};
  initial_ = initial;
  metadata_ = std::move(metadata);
}

void ReplayRecorder::move(const Move& move, bool accept, double uniform) {
  electron_.push_back(move.k);
  columns_.push_back(move.column);
  accept_.push_back(accept);
  uniform_.push_back(uniform);
}

void ReplayRecorder::cycle(const std::vector<Move>& moves) {
  for (const Move& m : moves) {
    electron_.push_back(m.k);
    columns_.push_back(m.column);
    cycle_.push_back(cycles_);
  }
  ++cycles_;
}

void ReplayRecorder::write(const std::filesystem::path& path) const {
  ReplayData data;
  data.initial = initial_;
  data.electron = electron_;
  data.columns.resize(initial_.rows(), Eigen::Index(columns_.size()));
  for (std::size_t m = 0; m < columns_.size(); ++m) data.columns.col(Eigen::Index(m)) = columns_[m];
  // Version 2 only where there are cycles (always applied: no decisions); a
  // walk of single moves stays readable by every reader of version 1.
  if (cycle_.empty()) {
    data.accept = accept_;
    data.uniform = uniform_;
    data.schema_version = 1;
  } else {
    data.cycle = cycle_;
    data.schema_version = kReplaySchemaVersion;
  }
  data.metadata = metadata_;
  std::filesystem::path partial = path;
  partial += ".partial";
  write_replay(partial, data);
  std::error_code error;
  std::filesystem::rename(partial, path, error);
  if (error) {
    std::filesystem::remove(partial, error);
    throw ReplayError("replay file " + path.string() + ": cannot write it (" + error.message() + ")");
  }
}

}  // namespace slaterlab
