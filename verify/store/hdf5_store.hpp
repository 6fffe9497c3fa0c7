#pragma once
// The HDF5 results store: a streaming writer and a reader for results files
// of schema version 1 (layout, columns and units: docs/results.md).
//
// Guarantees of the writer:
// - It never writes the final file in place. It streams into
//   "<final>.partial" in the same directory and commit() atomically renames
//   that over the final path, so an existing results file is either left as
//   it was or replaced by a complete one. In append mode the existing file is
//   first copied to the .partial, so appending gives the same guarantee.
// - Every call that adds data flushes the file, so a killed run leaves a
//   .partial in which every completed checkpoint is readable.
// - A writer destroyed without commit() removes its .partial, unless
//   keep_partial() was called (an interrupted run).
// - Every HDF5 or file-system failure is reported as IoError naming the file
//   and the operation; a full disk ends as IoError with the .partial removed.
// A .partial left by a killed run is replaced by the next run writing the same
// final path; one that a live run is still writing is refused (IoError).
// One thread at a time may use the store (HDF5 is built without thread safety).

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "verify/store/results.hpp"

namespace slaterlab {

/// A results file could not be written or read. The message names the file
/// and the operation, e.g. "cannot create /no/dir/results.h5.partial: No such
/// file or directory".
class IoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// "<final_path>.partial": where a writer streams before commit().
std::filesystem::path partial_path(const std::filesystem::path& final_path);

/// The file an output path names: a symbolic link is followed to its last
/// target (which need not exist yet), so that a write-then-rename replaces
/// that file and leaves the link a link. IoError for a loop of links.
std::filesystem::path through_links(std::filesystem::path path);

/// Cheap up-front validation for the command line, before any work is done:
/// the directory of final_path exists and is writable, final_path is not a
/// directory and no live run is writing its .partial. With append,
/// final_path must also be a results file of this schema version that reads
/// whole (read_results with checkpoints). An existing final_path or
/// .partial that is not a regular file (a device, a FIFO, a directory) is
/// refused: the commit's rename would replace it. Throws IoError.
void check_output_path(const std::filesystem::path& final_path, bool append = false);

/// A VMC run as stored: its description, summary, per-walker rows, the
/// blocking analysis and the energy series (walkers x sweeps).
struct VmcRun {
  VmcRunInfo info;
  VmcRunSummary summary;
  std::vector<VmcWalkerRow> walkers;
  std::vector<BlockingRow> blocking;
  std::vector<std::vector<double>> energy;  // read only with ReadOptions::checkpoints
};

/// Identifies an experiment (and its reference table) within one writer.
struct ExperimentHandle {
  std::size_t index = 0;
};

/// Identifies a strategy of an experiment within one writer.
struct StrategyHandle {
  std::size_t index = 0;
};

class ResultWriter {
 public:
  /// Starts a results file. Without append: creates "<final>.partial" (final
  /// path untouched until commit). With append: final_path must exist and
  /// carry schema_version 1; new experiments are added to a copy and the
  /// metadata is recorded on each of them as "appended.*" attributes. A
  /// final path that is a symbolic link is followed to the file it names
  /// (the .partial made beside that file, the link left a link).
  static ResultWriter create(const std::filesystem::path& final_path,
                             const RunMetadata& metadata, bool append = false);

  ResultWriter(ResultWriter&&) noexcept;
  ResultWriter& operator=(ResultWriter&&) noexcept;
  ~ResultWriter();

  /// Adds /experiments/<name>. A name already in the file is an IoError
  /// naming it; an empty name or one containing '/' is std::invalid_argument.
  ExperimentHandle begin_experiment(const ExperimentInfo& info);
  /// Adds a strategy group; a label repeated within the experiment is
  /// std::invalid_argument.
  StrategyHandle begin_strategy(ExperimentHandle experiment, const StrategyInfo& info);
  /// Appends one reference row and flushes.
  void append(ExperimentHandle experiment, const ReferenceCheckpoint& row);
  /// Appends one strategy row and flushes; std::logic_error after finish_strategy.
  void append(StrategyHandle strategy, const StrategyCheckpoint& row);
  /// which is "initial" or "final" (else std::invalid_argument); a second
  /// call for the same matrix replaces the first.
  void set_certified(ExperimentHandle experiment, std::string_view which,
                     const CertifiedLogDet& certified);
  /// Records the experiment's lockstep reference; a second call replaces the first.
  void set_reference_engine(ExperimentHandle experiment, const ReferenceEngineInfo& info);
  /// Adds /vmc/<name>: a finished VMC run, written whole and flushed (a
  /// killed study keeps every finished run). A repeated name is
  /// std::invalid_argument.
  void add_vmc_run(const VmcRun& run);
  /// Adds /orbitals/<label> (once per label; a repeat is ignored).
  void add_orbital_accuracy(const OrbitalAccuracyRecord& record);
  /// Whether every call that adds data flushes (the default, see above).
  /// Copying finished results in bulk (the MPI merge) turns it off for
  /// speed and on again, which flushes.
  void set_flush_each_call(bool on);
  /// Writes the summary attributes; once per strategy (else std::logic_error).
  void finish_strategy(StrategyHandle strategy, const StrategySummary& summary);
  /// Closes the file and renames the .partial over the final path. Nothing
  /// may be written afterwards. Strategies never finished stay "incomplete".
  void commit();
  /// Keep the .partial if this writer is destroyed without commit(). Only
  /// sets a flag, so it may be called from a signal handler.
  void keep_partial() noexcept;

  const std::filesystem::path& final_path() const noexcept;
  const std::filesystem::path& partial_path() const noexcept;

 private:
  struct Impl;
  explicit ResultWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// ---- reading ---------------------------------------------------------------

struct StrategyResult {
  StrategyInfo info;
  /// Absent while the strategy was still running (a killed run's .partial).
  std::optional<StrategySummary> summary;
  std::vector<StrategyCheckpoint> checkpoints;  // empty unless requested
  bool complete() const noexcept { return summary.has_value(); }
};

struct ExperimentResult {
  ExperimentInfo info;
  std::optional<CertifiedLogDet> certified_initial;
  std::optional<CertifiedLogDet> certified_final;
  std::optional<ReferenceEngineInfo> reference_engine;
  std::vector<ReferenceCheckpoint> reference;  // empty unless requested
  std::vector<StrategyResult> strategies;      // in the order written
  /// The run that added this experiment in append mode (config_toml included);
  /// absent for experiments of the run described by the root attributes.
  std::optional<RunMetadata> appended_by;
};

struct ResultsFile {
  std::filesystem::path path;
  int schema_version = 0;
  RunMetadata metadata;  // root attributes and /config
  std::vector<ExperimentResult> experiments;  // in the order written
  std::vector<VmcRun> vmc;                     // finished VMC runs, in the order written
  std::vector<OrbitalAccuracyRecord> orbitals; // orbital-set accuracy measurements
  /// True when a run committed the file (renamed it from its .partial);
  /// false for the .partial of a killed or running run.
  bool committed = false;
  /// True when every strategy has its summary.
  bool complete() const noexcept;
};

struct ReadOptions {
  bool checkpoints = true;  // also read the checkpoint tables
  /// Read the file once in a child process first (verify/store/isolated.hpp),
  /// so that damage that crashes or hangs libhdf5 becomes an IoError. Off
  /// only for files this process wrote itself (the MPI merge).
  bool isolate = true;
};

/// Writes e's reference rows, certified log|dets| and reference engine to
/// `experiment` of `writer` (one begun with e.info): what a copy of an
/// experiment (the MPI merge, a baseline) carries besides its strategies.
void copy_reference_records(const ExperimentResult& e, ResultWriter& writer,
                            ExperimentHandle experiment);

/// Reads a results file or the .partial of a killed run. A missing,
/// non-HDF5 or truncated file, a file that is not a regular file, a file
/// without schema_version or with another schema version, a damaged layout,
/// an attribute or dataset of the wrong type, shape or size (checked before
/// its data is read, hdf5_handle.hpp), or damage that crashes libhdf5 is an
/// IoError naming the file and the object.
ResultsFile read_results(const std::filesystem::path& path, const ReadOptions& options = {});

/// The schema_version of a results file, nullopt when it has none; read
/// through the same checks (and child process) as read_results.
std::optional<int> read_schema_version(const std::filesystem::path& path);

}  // namespace slaterlab
