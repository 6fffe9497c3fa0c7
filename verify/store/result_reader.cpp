// The reader of hdf5_store.hpp: read_results and read_schema_version, each
// run in a child first (isolated.hpp).
#include "verify/store/hdf5_store.hpp"

#include <algorithm>
#include <functional>
#include <set>

#include "verify/store/isolated.hpp"
#include "verify/store/record_fields.hpp"
#include "verify/store/results_file.hpp"
#include "verify/store/results_layout.hpp"
#include "verify/store/table_io.hpp"

namespace slaterlab {

namespace fs = std::filesystem;
using h5::Handle;
using namespace store_detail;

// ---- reader ----------------------------------------------------------------

namespace {

template <class Record>
std::optional<Record> read_optional(hid_t object, const std::string& prefix,
                                    const std::string& marker) {
  if (!h5::has_attr(object, prefix + marker)) return std::nullopt;
  Record record{};
  read_fields(object, prefix, record);
  return record;
}

/// The event columns of a strategy's checkpoint table, with the
/// descriptions stored beside them.
std::vector<EventColumn> read_event_columns(hid_t group) {
  const auto op = fmt::format("read the columns of {}/{}", h5::object_name(group), kCheckpoints);
  Handle dataset = h5::dataset_handle(H5Dopen2(group, kCheckpoints, H5P_DEFAULT), op);
  Handle stored = h5::type_handle(H5Dget_type(dataset), op);
  if (H5Tget_class(stored) != H5T_COMPOUND) throw h5::Failure(op, "not a compound dataset");
  std::vector<std::string> descriptions;
  if (h5::has_attr(dataset, "column_descriptions"))
    h5::read_attr(dataset, "column_descriptions", descriptions);
  std::vector<EventColumn> events;
  for (std::string& name : event_columns<StrategyCheckpoint>(stored, op)) {
    const int index = H5Tget_member_index(stored, name.c_str());
    const bool described = index >= 0 && std::size_t(index) < descriptions.size();
    events.push_back({std::move(name), described ? descriptions[std::size_t(index)] : ""});
  }
  return events;
}

/// The summary's events: its integer attributes that summary_keys lists
/// besides the fixed ones (a file from before events were named lists its
/// splits there).
EventCounts read_summary_events(hid_t group) {
  std::vector<std::string> keys;
  h5::read_attr(group, kSummaryKeys, keys);
  const std::vector<std::string> fixed = column<StrategySummary>(&Field::name);
  EventCounts events;
  for (const std::string& key : keys) {
    if (std::find(fixed.begin(), fixed.end(), key) != fixed.end() || !h5::has_attr(group, key))
      continue;
    const auto op = fmt::format("read attribute '{}' of {}", key, h5::object_name(group));
    Handle attr = h5::attribute_handle(H5Aopen(group, key.c_str(), H5P_DEFAULT), op);
    if (h5::declared_attribute(attr, op).type_class != H5T_INTEGER) continue;
    std::int64_t count = 0;
    h5::read_attr(group, key, count);
    events.emplace_back(key, count);
  }
  return events;
}

StrategyResult read_strategy(hid_t strategies, const std::string& label,
                             const ReadOptions& options) {
  Handle group = h5::open_group(strategies, label);
  StrategyResult result;
  read_fields(group, "", result.info);
  for (const char* key : kProvenanceKeys) {
    if (!h5::has_attr(group, key)) continue;
    std::string value;
    h5::read_attr(group, key, value);
    result.info.provenance.emplace_back(key, std::move(value));
  }
  if (h5::has_link(group, kCheckpoints)) result.info.events = read_event_columns(group);
  if (h5::has_attr(group, kSummaryKeys)) {
    result.summary.emplace();
    read_fields(group, "", *result.summary);
    result.summary->events = read_summary_events(group);
  }
  if (options.checkpoints && h5::has_link(group, kCheckpoints))
    result.checkpoints = read_table<StrategyCheckpoint>(group);
  return result;
}

ExperimentResult read_experiment(hid_t experiments, const std::string& name,
                                 const ReadOptions& options) {
  Handle group = h5::open_group(experiments, name);
  ExperimentResult result;
  result.info.name = name;
  read_fields(group, "", result.info);
  const std::string_view prefix = kParamPrefix;
  for (const auto& attr : h5::attr_names(group)) {
    if (!attr.starts_with(prefix)) continue;
    std::string value;
    h5::read_attr(group, attr, value);
    result.info.parameters.emplace_back(attr.substr(prefix.size()), std::move(value));
  }
  result.certified_initial =
      read_optional<CertifiedLogDet>(group, certified_prefix("initial"), "certified");
  result.certified_final =
      read_optional<CertifiedLogDet>(group, certified_prefix("final"), "certified");
  result.reference_engine =
      read_optional<ReferenceEngineInfo>(group, kReferenceEnginePrefix, "engine");
  if (auto appended = read_optional<RunMetadata>(group, kAppendedPrefix, "tool_version")) {
    h5::read_attr(group, std::string(kAppendedPrefix) + kConfig, appended->config_toml);
    result.appended_by = std::move(appended);
  }
  // A killed run may stop between creating a group and its children.
  if (options.checkpoints && h5::has_link(group, kReference)) {
    Handle reference = h5::open_group(group, kReference);
    if (h5::has_link(reference, kCheckpoints))
      result.reference = read_table<ReferenceCheckpoint>(reference);
  }
  if (h5::has_link(group, kStrategies)) {
    Handle strategies = h5::open_group(group, kStrategies);
    for (const auto& label : h5::link_names(strategies))
      result.strategies.push_back(read_strategy(strategies, label, options));
  }
  return result;
}

}  // namespace

bool ResultsFile::complete() const noexcept {
  for (const auto& e : experiments)
    for (const auto& s : e.strategies)
      if (!s.complete()) return false;
  return true;
}

namespace {

/// Runs read in a child first (isolated.hpp): damage that crashes or hangs
/// libhdf5 ends the child, and becomes an IoError here.
void read_isolated(const fs::path& path, const std::function<void()>& read) {
  try {
    check_file_isolated(path, read);
  } catch (const IsolatedFailure& failure) {
    if (!failure.crashed()) throw IoError(failure.what());  // the child's own IoError
    throw IoError(fmt::format("cannot read {}: {}", path.string(), failure.what()));
  }
}

}  // namespace

std::optional<int> read_schema_version(const fs::path& path) {
  h5::library_init();
  read_isolated(path, [&] { (void)read_schema_version_here(path); });
  return read_schema_version_here(path);
}

ResultsFile read_results(const fs::path& path, const ReadOptions& options) {
  if (options.isolate) {
    ReadOptions here = options;
    here.isolate = false;
    read_isolated(path, [&] { (void)read_results(path, here); });
  }
  Handle file = open_file(path, H5F_ACC_RDONLY, "read");
  require_schema(file, path, "read");
  ResultsFile results;
  results.path = path;
  results.schema_version = kSchemaVersion;
  try {
    if (h5::has_attr(file, kCommittedAttr)) h5::read_attr(file, kCommittedAttr, results.committed);
    read_fields(file, "", results.metadata);
    results.metadata.config_toml = h5::read_string_dataset(file, kConfig);
    Handle experiments = h5::open_group(file, kExperiments);
    for (const auto& name : h5::link_names(experiments))
      results.experiments.push_back(read_experiment(experiments, name, options));
    if (h5::has_link(file, kVmc)) {
      Handle runs = h5::open_group(file, kVmc);
      for (const auto& name : h5::link_names(runs)) {
        Handle group = h5::open_group(runs, name);
        if (!h5::has_attr(group, kSummaryKeys)) continue;  // killed while being written
        VmcRun run;
        run.info.name = name;
        read_fields(group, "", run.info);
        read_fields(group, "", run.summary);
        run.walkers = read_table<VmcWalkerRow>(group, "walkers");
        run.blocking = read_table<BlockingRow>(group, "blocking");
        if (run.walkers.size() != std::uint64_t(std::max<std::int64_t>(run.info.walkers, 0)))
          throw h5::Failure("read " + h5::object_name(group),
                            fmt::format("walkers table has {} rows, but walkers = {}",
                                        run.walkers.size(), run.info.walkers));
        if (options.checkpoints) run.energy = read_series(group, "energy", run.walkers.size());
        results.vmc.push_back(std::move(run));
      }
    }
    if (h5::has_link(file, kOrbitals)) {
      Handle sets = h5::open_group(file, kOrbitals);
      for (const auto& label : h5::link_names(sets)) {
        Handle group = h5::open_group(sets, label);
        OrbitalAccuracyRecord record;
        record.label = label;
        read_fields(group, "", record);
        results.orbitals.push_back(std::move(record));
      }
    }
  } catch (const h5::Failure& failure) {
    throw IoError(
        fmt::format("cannot read {}: {}: {}", path.string(), failure.op(), failure.detail()));
  }
  return results;
}

}  // namespace slaterlab
