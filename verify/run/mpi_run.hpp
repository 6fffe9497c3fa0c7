#pragma once
// Scale-out with MPI: `mpirun -n P slaterlab run STUDY.toml -o results.h5`.
//
// Each rank runs units (an experiment with a group of its strategies, or a
// slice of a VMC run's walkers) and writes them to OUTPUT.rank<r>; rank 0
// merges them into OUTPUT in the study's order. A unit runs its experiment's
// reference itself, and walker w reads stream w whatever P is, so the
// results equal a one-process run's bit for bit (elapsed times aside).
// MPI is initialised only under a launcher with more than one process. A
// study refused on any rank ends every rank with exit code 2 and one message;
// an error during the run aborts all ranks (exit code 2); an interrupted rank
// keeps what it completed in a .partial file and leaves with exit code 130.
// docs/mpi.md and mpi_run.cpp give the unit assignment and the details.

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include "verify/inputs/config.hpp"
#include "verify/run/run_report.hpp"
#include "verify/store/hdf5_store.hpp"

namespace slaterlab {

/// The groups of strategies each experiment is cut into, for P processes
/// (file comment): units[e][g] lists strategy indices.
std::vector<std::vector<std::vector<std::size_t>>> study_units(const StudyConfig& study, int processes);

/// The process (rank) that runs each unit: units[e][g] goes to
/// assign_units(...)[e][g]. Largest unit first to the least loaded process;
/// a unit costs moves * N^2 * (4 + its strategies), the mp reference counted
/// as four strategies' O(N^2) work per move.
std::vector<std::vector<int>> assign_units(const StudyConfig& study, int processes);

/// Processes the launcher started (1 without a launcher).
int launched_processes();

/// MPI_Init when launched_processes() > 1, MPI_Finalize at the end.
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  bool active() const { return active_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Every rank's `mine`, in rank order, on every rank (a collective call;
  /// {mine} without MPI).
  std::vector<bool> all_flags(bool mine) const;
  /// Ends every process with `code` (an error on one rank).
  [[noreturn]] static void abort(int code);
  /// Ends this process with `code` at once, without MPI_Finalize (which
  /// would wait for the other ranks): the launcher then ends the others.
  [[noreturn]] static void leave(int code);

 private:
  bool active_ = false;
  int rank_ = 0;
  int size_ = 1;
};

/// Runs `study` over the session's processes into `output` (file comment).
/// On rank 0 the report holds every rank's failed checks; elsewhere only
/// that rank's. When `interrupt` is set (file comment: Interrupts) the
/// report says interrupted and names the partial file this rank kept, if any.
RunReport run_study_distributed(const MpiSession& session, const StudyConfig& study,
                                const std::filesystem::path& output, const RunMetadata& metadata,
                                bool append, bool progress,
                                const std::atomic<bool>* interrupt = nullptr,
                                const std::filesystem::path& replay_dir = {});

}  // namespace slaterlab
