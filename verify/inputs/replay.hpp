#pragma once
// Replay of a user's own matrices: the initial Slater matrix and the move
// sequence a QMC code dumped to HDF5, so that slaterlab judges every update
// strategy on exactly that data (workload kind "replay").
//
// File schema: docs/replay.md (replay_schema_version 1: initial_matrix,
// moves/electron, moves/column, optional moves/accept and moves/uniform;
// version 2 adds moves/cycle); the full layout is also at the top of replay.cpp.
//
// Contract: read_replay validates the whole schema and throws ReplayError,
// one line "replay file <path>: <problem>", naming the dataset and, for bad
// values, the first offending index. A missing, truncated or non-HDF5 file is
// a ReplayError too.

#include <Eigen/Core>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace slaterlab {

inline constexpr std::int64_t kReplaySchemaVersion = 2;

/// A replay file that cannot be used; what() is one line naming the file.
class ReplayError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// The contents of a replay file, in slaterlab's convention.
struct ReplayData {
  Eigen::MatrixXd initial;                     // N x N, A(i, j) = phi_i(r_j)
  std::vector<Eigen::Index> electron;          // M moved electrons
  Eigen::MatrixXd columns;                     // N x M: column m = new column of move m
  std::optional<std::vector<bool>> accept;     // M recorded decisions
  std::optional<std::vector<double>> uniform;  // M recorded uniforms
  std::optional<std::vector<std::int64_t>> cycle;  // M cycle indices (version 2)
  std::int64_t schema_version = kReplaySchemaVersion;  // as read, or to write
  std::string layout = "row-major";            // how initial_matrix is stored
  /// Root attributes other than the two required ones, as (name, text).
  std::vector<std::pair<std::string, std::string>> metadata;

  std::int64_t file_moves = 0;                 // M of the file (>= moves())

  Eigen::Index n() const { return initial.rows(); }
  std::int64_t moves() const { return std::int64_t(electron.size()); }
};

/// N and M of a replay file, read from the dataset shapes only (the file's
/// version, layout and shapes are checked; the values are not).
struct ReplayShape {
  Eigen::Index n = 0;
  std::int64_t moves = 0;
};

/// Every dataset must also be stored in the file whole (a declared size the
/// file cannot hold, 2^61 moves in a 9 KB file, is refused here, before any
/// plan), and every attribute must be a single value of its type.
ReplayShape read_replay_shape(const std::filesystem::path& path);

/// Reads and validates the file; with moves >= 0 only the first `moves`
/// moves are read (a study replays a prefix: its memory is what the plan
/// counted), else all. moves_in_file() is M whatever was read.
ReplayData read_replay(const std::filesystem::path& path, std::int64_t moves = -1);

// Both readers first read the file in a child process (verify/store/
// isolated.hpp): damage that crashes or hangs libhdf5 (a global-heap object
// whose stored size is wrong) is a ReplayError "...: the file is damaged".
// A path that is not a regular file (a FIFO, a device) is refused before it
// is opened.

/// Writes `data` as a replay file (replaced if it exists), storing
/// initial_matrix as data.layout says and `metadata` as string attributes.
/// Writes what it is given without validating it, so that tests can build
/// bad files; read_replay is the judge. Throws ReplayError on I/O failure.
void write_replay(const std::filesystem::path& path, const ReplayData& data);

}  // namespace slaterlab
