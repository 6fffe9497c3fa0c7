#pragma once
// Scale-out with MPI: `mpirun -n P slaterlab run STUDY.toml -o results.h5`.
//
// What runs where. A lockstep experiment's strategies are independent given
// its moves and decisions, which come from the workload and the mp reference
// alone. The study is cut into units (experiment, group of its strategies):
// each experiment into g = clamp(ceil(P / E), 1, S) groups (E experiments,
// S strategies; strategy s in group s mod g), each unit to the least loaded
// rank, largest first (assign_units).
// A unit runs the experiment's reference itself, so every strategy sees the
// same moves and decisions as in one process and its metrics are the same
// bit for bit (elapsed times aside). Splitting an experiment repeats its
// reference: worth it only when there are fewer experiments than ranks.
// A VMC run's walkers are cut into P contiguous slices; walker w reads
// random stream w whatever P is (VmcConfig::first_stream), so the walkers'
// series do not depend on P either.
//
// One file. Every rank writes its units to OUTPUT.rank<r> (a results file
// of its own); rank 0 then copies them into OUTPUT in the study's order
// (experiments, then strategies, as one process writes them) and removes
// them. VMC runs follow: the ranks run their walker slices, rank 0 gathers
// the walkers' results, measures and writes the run. Failed checks are
// gathered to rank 0, which prints the table and returns the exit code.
//
// MPI is optional at build time (CMake's FindMPI; SLATERLAB_HAVE_MPI). MPI
// is initialised only when a launcher started more than one process
// (OMPI_COMM_WORLD_SIZE or PMI_SIZE), so a plain run never touches it. Every
// rank validates the study before any work and the ranks agree on the
// outcome (all_flags), so that a refused study ends every rank with exit
// code 2 and one message. An error on any rank during the run aborts all of
// them (MPI_Abort with exit code 2).
//
// Interrupts. Ctrl-C reaches mpirun, which ends the job by sending SIGTERM
// to every rank; a batch system may send SIGINT to every rank. A rank that
// gets either stops between moves (or while it waits for the others), keeps
// what it completed in OUTPUT.rank<r>.partial (rank 0, once the experiments
// are merged: OUTPUT.partial), says so in one line and leaves with exit code
// 130 without waiting for the others (MpiSession::leave); mpirun then ends
// the rest. mpirun's own exit code is 130 when the ranks were signalled, and
// Open MPI's 1 when mpirun itself was (it reports its own interruption).

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
                                const std::atomic<bool>* interrupt = nullptr);

}  // namespace slaterlab
