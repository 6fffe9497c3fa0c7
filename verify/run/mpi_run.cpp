#include "verify/run/mpi_run.hpp"

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

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>

#include "verify/run/runner.hpp"
#include "verify/run/vmc_study.hpp"

#if SLATERLAB_HAVE_MPI
#include <mpi.h>
#endif

namespace slaterlab {

std::vector<std::vector<std::vector<std::size_t>>> study_units(const StudyConfig& study,
                                                              int processes) {
  const std::size_t experiments = study.experiments.size();
  const std::size_t strategies = study.strategies.size();
  std::vector<std::vector<std::vector<std::size_t>>> units(experiments);
  if (experiments == 0 || strategies == 0) return units;
  const std::size_t wanted = (std::size_t(processes) + experiments - 1) / experiments;
  const std::size_t groups = std::clamp<std::size_t>(wanted, 1, strategies);
  for (auto& e : units) {
    e.resize(groups);
    for (std::size_t s = 0; s < strategies; ++s) e[s % groups].push_back(s);
  }
  return units;
}

std::vector<std::vector<int>> assign_units(const StudyConfig& study, int processes) {
  const auto units = study_units(study, processes);
  // Cost of a unit: per move, the mp reference (two O(N^2) mp products,
  // counted as 4 strategies' O(N^2) work) and its strategies.
  struct Unit {
    double cost;
    std::size_t experiment, group;
  };
  std::vector<Unit> order;
  for (std::size_t e = 0; e < units.size(); ++e) {
    const auto& x = study.experiments[e];
    const double n = double(x.workload.n);
    for (std::size_t g = 0; g < units[e].size(); ++g)
      order.push_back({double(x.moves) * n * n * double(4 + units[e][g].size()), e, g});
  }
  // Largest first, each to the least loaded process (ties: lowest rank).
  std::stable_sort(order.begin(), order.end(),
                   [](const Unit& a, const Unit& b) { return a.cost > b.cost; });
  std::vector<double> load(std::size_t(std::max(processes, 1)), 0.0);
  std::vector<std::vector<int>> assignment(units.size());
  for (std::size_t e = 0; e < units.size(); ++e) assignment[e].assign(units[e].size(), 0);
  for (const Unit& u : order) {
    const auto least = std::size_t(std::min_element(load.begin(), load.end()) - load.begin());
    load[least] += u.cost;
    assignment[u.experiment][u.group] = int(least);
  }
  return assignment;
}

int launched_processes() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    if (const char* value = std::getenv(name)) return std::max(1, std::atoi(value));
  }
  return 1;
}

#if SLATERLAB_HAVE_MPI
namespace {

// ---- byte packing (one field list per type, for both directions) ----------

class Packer {
 public:
  template <class T>
  void field(const T& x) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&x), sizeof x);
  }
  void field(const std::string& s) {
    field(s.size());
    bytes_ += s;
  }
  template <class T>
  void field(const std::vector<T>& v) {
    field(v.size());
    for (const T& x : v) field(x);
  }
  template <class A, class B>
  void field(const std::pair<A, B>& p) {
    field(p.first);
    field(p.second);
  }
  void field(const UpdaterCounters& c) {
    field(c.breakdowns);
    field(c.recomputes);
    field(c.events);
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

class Unpacker {
 public:
  explicit Unpacker(const std::string& bytes) : bytes_(bytes) {}
  template <class T>
  void field(T& x) {
    static_assert(std::is_trivially_copyable_v<T>);
    take(&x, sizeof x);
  }
  void field(std::string& s) {
    std::size_t n = 0;
    field(n);
    if (n > bytes_.size() - at_) throw std::runtime_error("mpi: truncated message");
    s.assign(bytes_, at_, n);
    at_ += n;
  }
  template <class T>
  void field(std::vector<T>& v) {
    std::size_t n = 0;
    field(n);
    v.resize(n);
    for (T& x : v) field(x);
  }
  template <class A, class B>
  void field(std::pair<A, B>& p) {
    field(p.first);
    field(p.second);
  }
  void field(UpdaterCounters& c) {
    field(c.breakdowns);
    field(c.recomputes);
    field(c.events);
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  void take(void* p, std::size_t n) {
    if (n > bytes_.size() - at_) throw std::runtime_error("mpi: truncated message");
    std::memcpy(p, bytes_.data() + at_, n);
    at_ += n;
  }
  const std::string& bytes_;
  std::size_t at_ = 0;
};

/// Every field of a walker's result, in one order for packing and unpacking.
template <class Io, class Walker>
void walker_fields(Io& io, Walker& r) {
  io.field(r.stream);
  io.field(r.energy);
  io.field(r.kinetic);
  io.field(r.proposed);
  io.field(r.accepted);
  io.field(r.step);
  io.field(r.step_history);
  io.field(r.divergence.compared);
  io.field(r.divergence.sweep);
  io.field(r.divergence.electron);
  io.field(r.divergence.move);
  io.field(r.divergence.lockstep_sweeps);
  io.field(r.divergence.max_ratio_rel_difference);
  io.field(r.divergence.max_flip_probability);
  io.field(r.divergence.expected_flips);
  io.field(r.divergence.max_energy_difference);
  io.field(r.divergence.reference_failure);
  io.field(r.counters);
  io.field(r.decision_breakdowns);
  io.field(r.apply_breakdowns);
  io.field(r.failure);
  io.field(r.failed_sweep);
}

template <class Io, class Failure>
void failure_fields(Io& io, Failure& f) {
  io.field(f.experiment);
  io.field(f.strategy);
  io.field(f.what);
}

template <class T, class Fields>
std::string pack_all(const std::vector<T>& items, Fields fields) {
  Packer p;
  p.field(items.size());
  for (const T& x : items) fields(p, x);
  return p.bytes();
}

template <class T, class Fields>
void unpack_all(const std::string& bytes, std::vector<T>& out, Fields fields) {
  Unpacker u(bytes);
  std::size_t n = 0;
  u.field(n);
  for (std::size_t i = 0; i < n; ++i) fields(u, out.emplace_back());
  if (!u.done()) throw std::runtime_error("mpi: message longer than its contents");
}

/// Thrown by barrier() when the run is interrupted while it waits.
struct Interrupted {};

const std::atomic<bool>* g_interrupt = nullptr;  // the run's, while it runs

/// Waits for every rank without spinning: Open MPI's blocking waits poll at
/// full speed, which on a shared machine takes the core from the ranks
/// still working (and from everyone else). An interrupt ends the wait (the
/// other ranks may never arrive): Interrupted.
void barrier() {
  MPI_Request request;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    if (g_interrupt && g_interrupt->load()) throw Interrupted{};
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

/// Every rank's bytes, in rank order, on rank 0 (empty elsewhere).
std::vector<std::string> gather(const std::string& mine, int rank, int size) {
  barrier();  // everyone has its bytes: the transfers below do not wait long
  const long long length = static_cast<long long>(mine.size());
  std::vector<long long> lengths(std::size_t(size), 0);
  MPI_Gather(&length, 1, MPI_LONG_LONG, lengths.data(), 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  std::vector<std::string> all;
  if (rank == 0) {
    for (int r = 0; r < size; ++r) all.emplace_back(std::size_t(lengths[std::size_t(r)]), '\0');
    all[0] = mine;
    for (int r = 1; r < size; ++r) {
      MPI_Recv(all[std::size_t(r)].data(), int(lengths[std::size_t(r)]), MPI_CHAR, r, 0,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  } else {
    MPI_Send(mine.data(), int(mine.size()), MPI_CHAR, 0, 0, MPI_COMM_WORLD);
  }
  return all;
}

class RankSchedule final : public Schedule {
 public:
  RankSchedule(const StudyConfig& study, int rank, int size) : rank_(rank), size_(size) {
    const auto assignment = assign_units(study, size);
    const auto units = study_units(study, size);
    mine_.resize(units.size());
    for (std::size_t e = 0; e < units.size(); ++e) {
      for (std::size_t g = 0; g < units[e].size(); ++g) {
        if (assignment[e][g] == rank) mine_[e].insert(mine_[e].end(), units[e][g].begin(), units[e][g].end());
      }
      std::sort(mine_[e].begin(), mine_[e].end());
    }
  }

  std::vector<std::size_t> strategies_of(std::size_t experiment) const override {
    return mine_[experiment];
  }

  std::optional<VmcResult> run_walkers(const VmcConfig& config,
                                       const WalkerRunner& run) const override {
    const int walkers = config.walkers;
    const int first = int(std::int64_t(walkers) * rank_ / size_);
    const int last = int(std::int64_t(walkers) * (rank_ + 1) / size_);
    VmcResult mine;
    if (last > first) {
      VmcConfig slice = config;
      slice.first_stream += std::uint64_t(first);
      slice.walkers = last - first;
      mine = run(slice);
    }
    const auto parts = gather(
        pack_all(mine.walkers, [](Packer& p, const WalkerResult& w) { walker_fields(p, w); }),
        rank_, size_);
    if (rank_ != 0) return std::nullopt;
    VmcResult whole;
    whole.config = config;
    whole.orbitals = mine.orbitals;
    whole.strategy = mine.strategy;
    for (const std::string& part : parts) {
      unpack_all(part, whole.walkers, [](Unpacker& u, WalkerResult& w) { walker_fields(u, w); });
    }
    return whole;
  }

 private:
  int rank_;
  int size_;
  std::vector<std::vector<std::size_t>> mine_;
};

std::filesystem::path rank_file(const std::filesystem::path& output, int rank) {
  return output.string() + ".rank" + std::to_string(rank);
}

/// Copies the experiments of the ranks' files into `out` in the study's
/// order: experiments as listed, each one's strategies as listed.
void merge_experiments(const StudyConfig& study, const std::vector<ResultsFile>& parts,
                       ResultWriter& out) {
  for (const ExperimentConfig& e : study.experiments) {
    const ExperimentResult* first = nullptr;
    std::map<std::string, const StrategyResult*> by_label;
    for (const ResultsFile& part : parts) {
      for (const ExperimentResult& x : part.experiments) {
        if (x.info.name != e.name) continue;
        if (!first) first = &x;  // each unit ran the same reference: any copy will do
        for (const StrategyResult& s : x.strategies) by_label[s.info.label] = &s;
      }
    }
    if (!first) continue;
    const ExperimentHandle handle = out.begin_experiment(first->info);
    copy_reference_records(*first, out, handle);
    for (const StrategyConfig& s : study.strategies) {
      const auto it = by_label.find(s.label);
      if (it == by_label.end()) continue;
      const StrategyHandle strategy = out.begin_strategy(handle, it->second->info);
      for (const StrategyCheckpoint& row : it->second->checkpoints) out.append(strategy, row);
      if (it->second->summary) out.finish_strategy(strategy, *it->second->summary);
    }
  }
}

}  // namespace

MpiSession::MpiSession(int& argc, char**& argv) {
  if (launched_processes() <= 1) return;
  MPI_Init(&argc, &argv);
  active_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() {
  if (active_) MPI_Finalize();
}

void MpiSession::abort(int code) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (initialised) MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

void MpiSession::leave(int code) {
  std::fflush(nullptr);
  std::_Exit(code);
}

std::vector<bool> MpiSession::all_flags(bool mine) const {
  if (!active_) return {mine};
  const int flag = mine ? 1 : 0;
  std::vector<int> flags(std::size_t(size_), 0);
  MPI_Allgather(&flag, 1, MPI_INT, flags.data(), 1, MPI_INT, MPI_COMM_WORLD);
  return {flags.begin(), flags.end()};
}

RunReport run_study_distributed(const MpiSession& session, const StudyConfig& study,
                                const std::filesystem::path& output, const RunMetadata& metadata,
                                bool append, bool progress, const std::atomic<bool>* interrupt,
                                const std::filesystem::path& replay_dir) {
  const int rank = session.rank();
  const int size = session.size();
  const RankSchedule schedule(study, rank, size);
  const RunOptions options{progress && rank == 0, interrupt, &schedule, replay_dir};
  g_interrupt = interrupt;
  RunReport report;
  std::optional<ResultWriter> part(ResultWriter::create(rank_file(output, rank), metadata));
  std::optional<ResultWriter> out;
  // Keeps the file this rank was writing, as an interrupted single process does.
  const auto interrupted = [&](ResultWriter& writer, const std::filesystem::path& file) {
    writer.keep_partial();
    report.interrupted = true;
    report.partial_file = file.string() + ".partial";
    return report;
  };
  try {
    report = run_experiments(study, *part, options);
    if (report.interrupted) return interrupted(*part, rank_file(output, rank));
    part->commit();
    part.reset();
    barrier();  // every rank's file is complete
    if (rank == 0) {
      out.emplace(ResultWriter::create(output, metadata, append));
      std::vector<ResultsFile> parts;
      // Our own files, just written: no need to read them in a child first.
      for (int r = 0; r < size; ++r)
        parts.push_back(read_results(rank_file(output, r), {.isolate = false}));
      out->set_flush_each_call(false);  // rows from complete files: one flush at the end
      merge_experiments(study, parts, *out);
      out->set_flush_each_call(true);
      for (int r = 0; r < size; ++r) std::filesystem::remove(rank_file(output, r));
    }
    run_vmc_study(study, out ? &*out : nullptr, options, report);
    if (report.interrupted) throw Interrupted{};
    const auto failures = gather(
        pack_all(report.failures, [](Packer& p, const CheckFailure& f) { failure_fields(p, f); }),
        rank, size);
    if (rank == 0) {
      report.failures.clear();
      for (const std::string& part_bytes : failures) {
        unpack_all(part_bytes, report.failures,
                   [](Unpacker& u, CheckFailure& f) { failure_fields(u, f); });
      }
      out->commit();
    }
  } catch (const Interrupted&) {
    if (part) return interrupted(*part, rank_file(output, rank));
    if (out) return interrupted(*out, output);
    report.interrupted = true;  // this rank holds no file of its own now
  }
  return report;
}

#else

MpiSession::MpiSession(int&, char**&) {}
MpiSession::~MpiSession() = default;
void MpiSession::abort(int code) { std::exit(code); }

void MpiSession::leave(int code) { std::exit(code); }
std::vector<bool> MpiSession::all_flags(bool mine) const { return {mine}; }

RunReport run_study_distributed(const MpiSession&, const StudyConfig&, const std::filesystem::path&,
                                const RunMetadata&, bool, bool, const std::atomic<bool>*,
                                const std::filesystem::path&) {
  throw std::invalid_argument(
      "started as one of several processes (mpirun), but this slaterlab was built without MPI: "
      "install libopenmpi-dev (scripts/setup.sh) and rebuild");
}

#endif

}  // namespace slaterlab
