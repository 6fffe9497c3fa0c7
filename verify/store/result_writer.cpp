// The writer of hdf5_store.hpp: ResultWriter, streaming into the .partial
// and committing it by rename.
#include "verify/store/hdf5_store.hpp"

#include <fcntl.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <ctime>
#include <set>
#include <utility>

#include "verify/store/hdf5_handle.hpp"
#include "verify/store/names.hpp"
#include "verify/store/partial_file.hpp"
#include "verify/store/record_fields.hpp"
#include "verify/store/results_file.hpp"
#include "verify/store/results_layout.hpp"
#include "verify/store/table_io.hpp"

namespace slaterlab {

std::string utc_timestamp() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

std::int64_t event_count(const EventCounts& events, std::string_view name) {
  for (const auto& [event, count] : events)
    if (event == name) return count;
  return 0;
}

namespace fs = std::filesystem;
using h5::Handle;

using namespace store_detail;

namespace {

// The study reader refuses the same names first (one rule: names.hpp).
void require_group_name(const std::string& name, std::string_view what) {
  if (const auto problem = group_name_problem(name))
    throw std::invalid_argument(
        fmt::format("{} name '{}' cannot name a group of the results file: it {}", what, name,
                    *problem));
}

/// Event columns must name neither a column nor an attribute of the
/// strategy's group already there, nor each other.
void require_event_names(const StrategyInfo& info) {
  std::set<std::string> taken = {kSummaryKeys, kSummaryUnits, kCheckpoints};
  for (const char* key : kProvenanceKeys) taken.insert(key);
  for (auto names : {column<StrategyCheckpoint>(&Field::name), column<StrategySummary>(&Field::name),
                     column<StrategyInfo>(&Field::name)})
    taken.insert(names.begin(), names.end());
  for (const EventColumn& event : info.events) {
    const bool word = !event.name.empty() && std::islower(static_cast<unsigned char>(event.name[0])) &&
                      std::all_of(event.name.begin(), event.name.end(), [](char c) {
                        return std::islower(static_cast<unsigned char>(c)) ||
                               std::isdigit(static_cast<unsigned char>(c)) || c == '_';
                      });
    if (!word || !taken.insert(event.name).second)
      throw std::invalid_argument(fmt::format(
          "strategy '{}': event '{}' cannot name a column of the results file (lower case "
          "letters, digits and '_' after a letter, none of the file's own names, each once)",
          info.label, event.name));
  }
}

}  // namespace

// ---- writer ----------------------------------------------------------------

struct ResultWriter::Impl {
  struct Experiment {
    std::string name;
    Handle group;
    Handle strategies;
    Table reference;
  };
  struct Strategy {
    std::string label;
    std::size_t experiment = 0;
    Handle group;
    Table checkpoints;
    bool finished = false;
  };

  fs::path final_path;
  fs::path partial;
  bool append = false;
  RunMetadata metadata;
  bool owns_partial = false;  // the .partial is ours to remove
  bool committed = false;
  std::atomic<bool> keep{false};
  Handle file;
  Handle experiments_group;
  std::vector<Experiment> experiments;
  std::vector<Strategy> strategies;

  ~Impl() { abandon(); }

  template <class Fn>
  decltype(auto) guarded(Fn&& fn) {
    return in_file(partial, std::forward<Fn>(fn));
  }

  // Writes everything buffered so far; after it returns, a killed process
  // leaves a consistent file holding all of it.
  void flush() {
    if (flush_each_call) h5::check_ok(H5Fflush(file, H5F_SCOPE_LOCAL), "flush buffered data to disk");
  }
  bool flush_each_call = true;

  void require_open() const {
    if (committed)
      throw std::logic_error("results writer: already committed " + final_path.string());
  }

  Experiment& experiment(ExperimentHandle handle) {
    require_open();
    if (handle.index >= experiments.size())
      throw std::out_of_range("results writer: unknown experiment handle");
    return experiments[handle.index];
  }

  Strategy& strategy(StrategyHandle handle) {
    require_open();
    if (handle.index >= strategies.size())
      throw std::out_of_range("results writer: unknown strategy handle");
    return strategies[handle.index];
  }

  /// Closes every object, children first. Returns the HDF5 detail of the
  /// first failure, empty if all closed (the last, the file, flushes).
  std::string close_all() noexcept {
    std::string first_failure;
    auto close = [&](Handle& handle) {
      if (!handle.close() && first_failure.empty()) first_failure = h5::error_detail();
    };
    for (auto& s : strategies) {
      close(s.checkpoints.row_type);
      close(s.checkpoints.dataset);
      close(s.group);
    }
    for (auto& e : experiments) {
      close(e.reference.row_type);
      close(e.reference.dataset);
      close(e.strategies);
      close(e.group);
    }
    close(experiments_group);
    close(file);
    return first_failure;
  }

  /// The run ended without commit(): release the file and, unless asked to
  /// keep it, remove the .partial (the final path was never touched).
  void abandon() noexcept {
    if (committed) return;
    close_all();
    if (owns_partial && !keep.load()) {
      std::error_code ignored;
      fs::remove(partial, ignored);
    }
  }

  void start_new() {
    require_unused(partial);
    const Handle creation = creation_plist(), access = access_plist();
    const hid_t id = H5Fcreate(partial.c_str(), H5F_ACC_TRUNC, creation, access);
    if (id < 0)
      throw IoError(fmt::format("cannot create {}: {}", partial.string(), h5::error_detail()));
    file = Handle(id, H5Fclose);
    owns_partial = true;
    guarded([&] {
      h5::write_attr(file, kSchemaAttr, std::int32_t{kSchemaVersion});
      h5::write_attr(file, kCommittedAttr, false);
      write_fields(file, "", metadata);
      h5::write_string_dataset(file, kConfig, metadata.config_toml);
      experiments_group = h5::create_group(file, kExperiments);
      flush();
    });
  }

  void start_append() {
    require_unused(partial);
    owns_partial = true;  // from here on a failure must not leave a copy behind
    std::error_code error;
    fs::copy_file(final_path, partial, fs::copy_options::overwrite_existing, error);
    if (error)
      throw IoError(fmt::format("cannot copy {} to {}: {}", final_path.string(), partial.string(),
                                error.message()));
    const Handle access = access_plist();
    const hid_t id = H5Fopen(partial.c_str(), H5F_ACC_RDWR, access);
    if (id < 0)
      throw IoError(fmt::format("cannot open {}: {}", partial.string(), h5::error_detail()));
    file = Handle(id, H5Fclose);
    require_schema(file, final_path, "append to");
    guarded([&] {
      h5::write_attr(file, kCommittedAttr, false);  // a killed append leaves an unmarked copy
      experiments_group = h5::open_group(file, kExperiments);
      flush();
    });
  }

  // Root group records link creation order like every other group.
  static Handle creation_plist() {
    Handle plist = h5::plist_handle(H5Pcreate(H5P_FILE_CREATE), "make file property list");
    constexpr unsigned order = H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED;
    h5::check_ok(H5Pset_link_creation_order(plist, order), "make file property list");
    h5::check_ok(H5Pset_attr_creation_order(plist, order), "make file property list");
    return plist;
  }

  // SEMI: closing the file with an object still open is an error rather than
  // a silently deferred (and possibly never done) final flush.
  static Handle access_plist() {
    Handle plist = h5::plist_handle(H5Pcreate(H5P_FILE_ACCESS), "make file property list");
    h5::check_ok(H5Pset_fclose_degree(plist, H5F_CLOSE_SEMI), "make file property list");
    return plist;
  }
};

ResultWriter::ResultWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ResultWriter::ResultWriter(ResultWriter&&) noexcept = default;
ResultWriter& ResultWriter::operator=(ResultWriter&&) noexcept = default;
ResultWriter::~ResultWriter() = default;

ResultWriter ResultWriter::create(const fs::path& given_path, const RunMetadata& metadata,
                                  bool append) {
  h5::library_init();
  const fs::path final_path = through_links(given_path);
  check_output_path(final_path, append);
  auto impl = std::make_unique<Impl>();
  impl->final_path = final_path;
  impl->partial = slaterlab::partial_path(final_path);
  impl->append = append;
  impl->metadata = metadata;
  if (append)
    impl->start_append();
  else
    impl->start_new();
  return ResultWriter(std::move(impl));
}

ExperimentHandle ResultWriter::begin_experiment(const ExperimentInfo& info) {
  auto& w = *impl_;
  w.require_open();
  require_group_name(info.name, "experiment");
  std::set<std::string> keys;
  for (const auto& parameter : info.parameters)
    if (parameter.first.empty() || !keys.insert(parameter.first).second)
      throw std::invalid_argument(fmt::format(
          "experiment '{}': workload parameter '{}' is empty or repeated", info.name,
          parameter.first));
  return w.guarded([&] {
    if (h5::has_link(w.experiments_group, info.name))
      throw IoError(fmt::format("cannot add experiment '{}' to {}: an experiment of that name "
                                "already exists",
                                info.name, (w.append ? w.final_path : w.partial).string()));
    Impl::Experiment e{info.name, h5::create_group(w.experiments_group, info.name), {}, {}};
    write_fields(e.group, "", info);
    for (const auto& [key, value] : info.parameters)
      h5::write_attr(e.group, kParamPrefix + key, value);
    if (w.append) {
      write_fields(e.group, kAppendedPrefix, w.metadata);
      h5::write_attr(e.group, std::string(kAppendedPrefix) + kConfig, w.metadata.config_toml);
    }
    Handle reference = h5::create_group(e.group, kReference);
    e.reference = create_table<ReferenceCheckpoint>(reference);
    e.strategies = h5::create_group(e.group, kStrategies);
    w.flush();
    w.experiments.push_back(std::move(e));
    return ExperimentHandle{w.experiments.size() - 1};
  });
}

StrategyHandle ResultWriter::begin_strategy(ExperimentHandle experiment, const StrategyInfo& info) {
  auto& w = *impl_;
  auto& e = w.experiment(experiment);
  require_group_name(info.label, "strategy");
  require_event_names(info);
  return w.guarded([&] {
    if (h5::has_link(e.strategies, info.label))
      throw std::invalid_argument(fmt::format("experiment '{}': strategy label '{}' is repeated",
                                              e.name, info.label));
    Impl::Strategy s{info.label, experiment.index, h5::create_group(e.strategies, info.label), {},
                     false};
    write_fields(s.group, "", info);
    for (const auto& [key, value] : info.provenance) h5::write_attr(s.group.get(), key, value);
    s.checkpoints = create_table<StrategyCheckpoint>(s.group, kCheckpoints, info.events);
    w.flush();
    w.strategies.push_back(std::move(s));
    return StrategyHandle{w.strategies.size() - 1};
  });
}

void ResultWriter::set_flush_each_call(bool on) {
  auto& w = *impl_;
  w.require_open();
  w.flush_each_call = on;
  w.guarded([&] { w.flush(); });
}

void ResultWriter::append(ExperimentHandle experiment, const ReferenceCheckpoint& row) {
  auto& w = *impl_;
  auto& e = w.experiment(experiment);
  w.guarded([&] {
    append_row(e.reference, row);
    w.flush();
  });
}

void ResultWriter::append(StrategyHandle strategy, const StrategyCheckpoint& row) {
  auto& w = *impl_;
  auto& s = w.strategy(strategy);
  if (s.finished)
    throw std::logic_error(fmt::format("results writer: strategy '{}' already finished", s.label));
  w.guarded([&] {
    append_row(s.checkpoints, row);
    w.flush();
  });
}

void ResultWriter::set_certified(ExperimentHandle experiment, std::string_view which,
                                 const CertifiedLogDet& certified) {
  auto& w = *impl_;
  auto& e = w.experiment(experiment);
  if (which != "initial" && which != "final")
    throw std::invalid_argument(
        fmt::format("certified result '{}': expected \"initial\" or \"final\"", which));
  w.guarded([&] {
    write_fields(e.group, certified_prefix(which), certified);
    w.flush();
  });
}

void copy_reference_records(const ExperimentResult& e, ResultWriter& writer,
                            ExperimentHandle experiment) {
  for (const ReferenceCheckpoint& row : e.reference) writer.append(experiment, row);
  if (e.certified_initial) writer.set_certified(experiment, "initial", *e.certified_initial);
  if (e.certified_final) writer.set_certified(experiment, "final", *e.certified_final);
  if (e.reference_engine) writer.set_reference_engine(experiment, *e.reference_engine);
}

void ResultWriter::set_reference_engine(ExperimentHandle experiment,
                                        const ReferenceEngineInfo& info) {
  auto& w = *impl_;
  auto& e = w.experiment(experiment);
  w.guarded([&] {
    write_fields(e.group, kReferenceEnginePrefix, info);
    w.flush();
  });
}

void ResultWriter::finish_strategy(StrategyHandle strategy, const StrategySummary& summary) {
  auto& w = *impl_;
  auto& s = w.strategy(strategy);
  if (s.finished)
    throw std::logic_error(fmt::format("results writer: strategy '{}' already finished", s.label));
  w.guarded([&] {
    write_fields(s.group, "", summary);
    std::vector<std::string> keys = column<StrategySummary>(&Field::name);
    std::vector<std::string> units = column<StrategySummary>(&Field::unit);
    for (const std::string& event : s.checkpoints.events) {  // the declared ones, in their order
      h5::write_attr(s.group, event, event_count(summary.events, event));
      keys.push_back(event);
      units.emplace_back("count");
    }
    h5::write_attr(s.group, kSummaryUnits, units);
    h5::write_attr(s.group, kSummaryKeys, keys);
    w.flush();
  });
  s.finished = true;
}

void ResultWriter::add_vmc_run(const VmcRun& run) {
  auto& w = *impl_;
  w.require_open();
  require_group_name(run.info.name, "VMC run");
  w.guarded([&] {
    Handle runs = h5::has_link(w.file, kVmc) ? h5::open_group(w.file, kVmc)
                                              : h5::create_group(w.file, kVmc);
    if (h5::has_link(runs, run.info.name))
      throw std::invalid_argument(fmt::format("VMC run name '{}' is repeated", run.info.name));
    Handle group = h5::create_group(runs, run.info.name);
    write_fields(group, "", run.info);
    write_table(group, "walkers", run.walkers);
    write_table(group, "blocking", run.blocking);
    write_series(group, "energy", run.energy);
    // The summary goes last: its keys mark a finished run, as for strategies.
    write_fields(group, "", run.summary);
    h5::write_attr(group, kSummaryUnits, column<VmcRunSummary>(&Field::unit));
    h5::write_attr(group, kSummaryKeys, column<VmcRunSummary>(&Field::name));
    w.flush();
  });
}

void ResultWriter::add_orbital_accuracy(const OrbitalAccuracyRecord& record) {
  auto& w = *impl_;
  w.require_open();
  require_group_name(record.label, "orbital accuracy");
  w.guarded([&] {
    Handle sets = h5::has_link(w.file, kOrbitals) ? h5::open_group(w.file, kOrbitals)
                                                  : h5::create_group(w.file, kOrbitals);
    if (h5::has_link(sets, record.label)) return;  // the same set measured once per run
    Handle group = h5::create_group(sets, record.label);
    write_fields(group, "", record);
    h5::write_attr(group, kSummaryUnits, column<OrbitalAccuracyRecord>(&Field::unit));
    h5::write_attr(group, kSummaryKeys, column<OrbitalAccuracyRecord>(&Field::name));
    w.flush();
  });
}

void ResultWriter::commit() {
  auto& w = *impl_;
  w.require_open();
  w.guarded([&] {
    h5::write_attr(w.file, kCommittedAttr, true);
    w.flush();
  });
  if (const auto failure = w.close_all(); !failure.empty())
    throw IoError(fmt::format("cannot close {}: {}", w.partial.string(), failure));
  sync_path(w.partial, O_RDONLY);
  std::error_code error;
  fs::rename(w.partial, w.final_path, error);
  if (error)
    throw IoError(fmt::format("cannot rename {} to {}: {}", w.partial.string(),
                              w.final_path.string(), error.message()));
  w.committed = true;
  sync_path(directory_of(w.final_path), O_RDONLY | O_DIRECTORY);
}

void ResultWriter::keep_partial() noexcept { impl_->keep.store(true); }

const fs::path& ResultWriter::final_path() const noexcept { return impl_->final_path; }
const fs::path& ResultWriter::partial_path() const noexcept { return impl_->partial; }

}  // namespace slaterlab
