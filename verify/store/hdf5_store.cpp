#include "verify/store/hdf5_store.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <ctime>
#include <limits>
#include <cstring>
#include <functional>
#include <set>
#include <type_traits>
#include <utility>

#include "verify/store/hdf5_handle.hpp"
#include "verify/store/isolated.hpp"
#include "verify/store/names.hpp"
#include "verify/store/record_fields.hpp"

namespace slaterlab {

std::string utc_timestamp() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

namespace fs = std::filesystem;
using h5::Handle;

namespace {

template <class T>
hid_t native_type() {
  if constexpr (std::is_same_v<T, double>) return H5T_NATIVE_DOUBLE;
  else if constexpr (std::is_same_v<T, std::int64_t>) return H5T_NATIVE_INT64;
  else if constexpr (std::is_same_v<T, std::int32_t>) return H5T_NATIVE_INT32;
  else static_assert(sizeof(T) == 0, "no HDF5 column type for this member type");
}

/// The in-memory compound type of Row (C++ layout).
template <class Row>
Handle memory_type() {
  static_assert(std::is_standard_layout_v<Row>);
  const Row row{};
  Handle type = h5::type_handle(H5Tcreate(H5T_COMPOUND, sizeof(Row)), "make compound type");
  visit_fields(row, [&](const Field& field, const auto& member) {
    const auto offset = static_cast<std::size_t>(reinterpret_cast<const char*>(&member) -
                                                 reinterpret_cast<const char*>(&row));
    using Member = std::remove_cvref_t<decltype(member)>;
    h5::check_ok(H5Tinsert(type, field.name, offset, native_type<Member>()),
                 "make compound type");
  });
  return type;
}

template <class Record>
std::vector<std::string> column(const char* Field::*part) {
  std::vector<std::string> out;
  const Record record{};
  visit_fields(record, [&](const Field& field, const auto&) { out.emplace_back(field.*part); });
  return out;
}

template <class Record>
void write_fields(hid_t object, const std::string& prefix, const Record& record) {
  visit_fields(record, [&](const Field& field, const auto& value) {
    h5::write_attr(object, prefix + field.name, value);
  });
}

template <class Record>
void read_fields(hid_t object, const std::string& prefix, Record& record) {
  visit_fields(record, [&](const Field& field, auto& value) {
    if (field.optional && !h5::has_attr(object, prefix + field.name)) return;
    h5::read_attr(object, prefix + field.name, value);
  });
}

// ---- extendible tables -------------------------------------------------------

constexpr const char* kCheckpoints = "checkpoints";
constexpr hsize_t kChunkRows = 64;  // rows are ~100-200 bytes; checkpoints are few

struct Table {
  Handle dataset;
  Handle row_type;  // memory type
  hsize_t rows = 0;
};

template <class Row>
Table create_table(hid_t parent, const char* name = kCheckpoints) {
  const auto op = fmt::format("create dataset '{}' in {}", name, h5::object_name(parent));
  Table table{Handle{}, memory_type<Row>(), 0};
  // On disk the compound is packed: no padding bytes, same members.
  Handle file_type = h5::type_handle(H5Tcopy(table.row_type), op);
  h5::check_ok(H5Tpack(file_type), op);
  const hsize_t empty = 0, unlimited = H5S_UNLIMITED;
  Handle space = h5::space_handle(H5Screate_simple(1, &empty, &unlimited), op);
  Handle plist = h5::plist_handle(H5Pcreate(H5P_DATASET_CREATE), op);
  h5::check_ok(H5Pset_chunk(plist, 1, &kChunkRows), op);
  // Most tables hold a few rows of a 64-row chunk; deflate keeps the unused
  // part (and the repetitive counters) from filling the file. Readers need
  // nothing special: gzip is built into every HDF5 and h5py.
  h5::check_ok(H5Pset_deflate(plist, 4), op);
  table.dataset = h5::dataset_handle(
      H5Dcreate2(parent, name, file_type, space, H5P_DEFAULT, plist, H5P_DEFAULT), op);
  h5::write_attr(table.dataset, "column_units", column<Row>(&Field::unit));
  h5::write_attr(table.dataset, "column_descriptions", column<Row>(&Field::description));
  return table;
}

template <class Row>
void append_row(Table& table, const Row& row) {
  const auto op = "append a row to " + h5::object_name(table.dataset);
  const hsize_t rows = table.rows + 1, start = table.rows, one = 1;
  h5::check_ok(H5Dset_extent(table.dataset, &rows), op);
  Handle file_space = h5::space_handle(H5Dget_space(table.dataset), op);
  h5::check_ok(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, &start, nullptr, &one, nullptr), op);
  Handle memory_space = h5::space_handle(H5Screate_simple(1, &one, nullptr), op);
  h5::check_ok(H5Dwrite(table.dataset, table.row_type, memory_space, file_space, H5P_DEFAULT, &row),
               op);
  table.rows = rows;
}

template <class Row>
std::vector<Row> read_table(hid_t parent, const char* name = kCheckpoints) {
  const auto op = fmt::format("read dataset '{}' in {}", name, h5::object_name(parent));
  Handle dataset = h5::dataset_handle(H5Dopen2(parent, name, H5P_DEFAULT), op);
  const h5::Declared declared = h5::declared_dataset(dataset, op);
  if (declared.type_class != H5T_COMPOUND) throw h5::Failure(op, "not a compound dataset");
  if (declared.dims.size() != 1)
    throw h5::Failure(op, "a table must be 1-D (one row per record), got " + declared.shape_text());
  Handle stored = h5::type_handle(H5Dget_type(dataset), op);
  // HDF5 matches compound members by name; a missing one would be left
  // silently at its default, so require every column except the optional
  // ones (added later), which older files lack and keep their defaults.
  const Row probe{};
  visit_fields(probe, [&](const Field& field, const auto&) {
    if (!field.optional && H5Tget_member_index(stored, field.name) < 0)
      throw h5::Failure(op, fmt::format("missing column '{}'", field.name));
  });
  const std::uint64_t count = h5::require_stored(dataset, declared, op);
  std::vector<Row> rows(h5::checked_bytes(count, sizeof(Row), op) / sizeof(Row));
  if (!rows.empty()) {
    Handle type = memory_type<Row>();
    h5::check_ok(H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()), op);
  }
  return rows;
}

/// Writes a whole table of rows at once (a run's walkers, its blocking).
template <class Row>
void write_table(hid_t parent, const char* name, const std::vector<Row>& rows) {
  Table table = create_table<Row>(parent, name);
  for (const Row& row : rows) append_row(table, row);
}

/// Energy series: walkers x sweeps doubles, NaN after a failed walker's end.
void write_series(hid_t parent, const char* name, const std::vector<std::vector<double>>& series) {
  const auto op = fmt::format("create dataset '{}' in {}", name, h5::object_name(parent));
  std::size_t columns = 0;
  for (const auto& s : series) columns = std::max(columns, s.size());
  std::vector<double> data(series.size() * columns, std::numeric_limits<double>::quiet_NaN());
  for (std::size_t w = 0; w < series.size(); ++w)
    std::copy(series[w].begin(), series[w].end(), data.begin() + std::ptrdiff_t(w * columns));
  const hsize_t dims[2] = {series.size(), columns};
  Handle space = h5::space_handle(H5Screate_simple(2, dims, nullptr), op);
  Handle dataset = h5::dataset_handle(
      H5Dcreate2(parent, name, H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), op);
  if (!data.empty())
    h5::check_ok(H5Dwrite(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()), op);
  h5::write_attr(dataset, "units", std::string("E"));
  h5::write_attr(dataset, "description",
                 std::string("local energy after each measured sweep: row = walker, column = sweep; "
                             "NaN after the end of a walker whose strategy gave up"));
}

/// expected_rows: the walkers of the run, one row each.
std::vector<std::vector<double>> read_series(hid_t parent, const char* name,
                                             std::uint64_t expected_rows) {
  const auto op = fmt::format("read dataset '{}' in {}", name, h5::object_name(parent));
  Handle dataset = h5::dataset_handle(H5Dopen2(parent, name, H5P_DEFAULT), op);
  const h5::Declared declared = h5::declared_dataset(dataset, op);
  if (declared.dims.size() != 2) throw h5::Failure(op, "not a 2-D dataset");
  if (declared.type_class != H5T_FLOAT) throw h5::Failure(op, "not floating-point numbers");
  const hsize_t dims[2] = {declared.dims[0], declared.dims[1]};
  if (dims[0] != expected_rows)
    throw h5::Failure(op, fmt::format("has {} rows, but the run has {} walkers", dims[0],
                                      expected_rows));
  const std::uint64_t count = h5::require_stored(dataset, declared, op);
  std::vector<double> data(h5::checked_bytes(count, sizeof(double), op) / sizeof(double));
  if (!data.empty())
    h5::check_ok(H5Dread(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()), op);
  std::vector<std::vector<double>> series(dims[0]);
  for (hsize_t w = 0; w < dims[0]; ++w) {
    auto first = data.begin() + std::ptrdiff_t(w * dims[1]);
    auto last = first + std::ptrdiff_t(dims[1]);
    while (last != first && std::isnan(*(last - 1))) --last;
    series[w].assign(first, last);
  }
  return series;
}

// ---- names and messages ----------------------------------------------------

constexpr const char* kExperiments = "experiments";
constexpr const char* kStrategies = "strategies";
constexpr const char* kReference = "reference";
constexpr const char* kConfig = "config";
constexpr const char* kVmc = "vmc";
constexpr const char* kOrbitals = "orbitals";
constexpr const char* kSchemaAttr = "schema_version";
constexpr const char* kParamPrefix = "param.";
constexpr const char* kAppendedPrefix = "appended.";
constexpr const char* kReferenceEnginePrefix = "reference.";
constexpr const char* kSummaryKeys = "summary_keys";  // written last: marks a finished strategy
// 1 once commit() closed the file and renamed it to its final name; 0 in a
// .partial, so that the file of a killed run is never taken as complete.
constexpr const char* kCommittedAttr = "committed";

std::string certified_prefix(std::string_view which) {
  return fmt::format("certified_{}.", which);
}

// The study reader refuses the same names first (one rule: names.hpp).
void require_group_name(const std::string& name, std::string_view what) {
  if (const auto problem = group_name_problem(name))
    throw std::invalid_argument(
        fmt::format("{} name '{}' cannot name a group of the results file: it {}", what, name,
                    *problem));
}

[[noreturn]] void throw_errno(std::string_view action, const fs::path& path, int error) {
  throw IoError(fmt::format("cannot {} {}: {}", action, path.string(), std::strerror(error)));
}

/// Translates a failure inside the file into IoError naming the file.
template <class Fn>
decltype(auto) in_file(const fs::path& file, Fn&& fn) {
  try {
    return fn();
  } catch (const h5::Failure& failure) {
    throw IoError(
        fmt::format("cannot {} in {}: {}", failure.op(), file.string(), failure.detail()));
  }
}

/// What a path that is not a regular file is, for messages.
std::string file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

/// Refuses an existing path that is not a regular file: the commit's rename
/// would replace the node (a device, a FIFO) with the results file.
void require_regular_or_absent(const fs::path& path, std::string_view action) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return;
  if (S_ISDIR(info.st_mode)) throw_errno(action, path, EISDIR);
  if (!S_ISREG(info.st_mode))
    throw IoError(fmt::format("cannot {} {}: it is {}, not a regular file; name a file to "
                              "write the results to",
                              action, path.string(), file_kind(info.st_mode)));
}

/// Opens an existing file; the message says why it is not readable.
Handle open_file(const fs::path& path, unsigned flags, std::string_view action) {
  h5::library_init();
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) throw_errno(action, path, errno);
  if (S_ISDIR(info.st_mode)) throw_errno(action, path, EISDIR);
  // A FIFO or device would block or stream forever under HDF5's reads.
  if (!S_ISREG(info.st_mode))
    throw IoError(fmt::format("cannot {} {}: not a regular file ({})", action, path.string(),
                              file_kind(info.st_mode)));
  if (::access(path.c_str(), flags == H5F_ACC_RDWR ? R_OK | W_OK : R_OK) != 0)
    throw_errno(action, path, errno);
  const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
  if (is_hdf5 == 0)
    throw IoError(fmt::format("cannot {} {}: not an HDF5 file", action, path.string()));
  if (is_hdf5 < 0)
    throw IoError(fmt::format("cannot {} {}: {}", action, path.string(), h5::error_detail()));
  const hid_t id = H5Fopen(path.c_str(), flags, H5P_DEFAULT);
  if (id < 0)
    throw IoError(fmt::format("cannot {} {}: {}", action, path.string(), h5::error_detail()));
  return Handle(id, H5Fclose);
}

/// Throws unless the file's root carries schema_version == kSchemaVersion.
void require_schema(hid_t file, const fs::path& path, std::string_view action) {
  int version = 0;
  in_file(path, [&] {
    if (!h5::has_attr(file, kSchemaAttr))
      throw IoError(fmt::format("cannot {} {}: not a slaterlab results file (no {} attribute)",
                                action, path.string(), kSchemaAttr));
    h5::read_attr(file, kSchemaAttr, version);
  });
  if (version != kSchemaVersion)
    throw IoError(fmt::format("cannot {} {}: schema_version {} is not supported (this build "
                              "handles schema_version {})",
                              action, path.string(), version, kSchemaVersion));
}

std::optional<int> read_schema_version_here(const fs::path& path) {
  Handle file = open_file(path, H5F_ACC_RDONLY, "read");
  return in_file(path, [&]() -> std::optional<int> {
    if (!h5::has_attr(file, kSchemaAttr)) return std::nullopt;
    std::int32_t version = 0;
    h5::read_attr(file, kSchemaAttr, version);
    return version;
  });
}

/// Makes the renamed file durable: its data, then the directory entry.
void sync_path(const fs::path& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) throw_errno("sync", path, errno);
  const int rc = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  // Some file systems cannot fsync a directory (EINVAL); that is not a failure.
  if (rc != 0 && error != EINVAL) throw_errno("sync", path, error);
}

/// A .partial left by a killed run may be replaced, but not one that a live
/// run is writing: HDF5 truncates the file before it tries the lock it keeps
/// while writing, so ask for that lock first.
void require_unused(const fs::path& partial) {
  const int fd = ::open(partial.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;  // nothing there (or nothing we could clobber either)
  const bool locked = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  if (locked)
    throw IoError(fmt::format("cannot create {}: another run is writing it", partial.string()));
}

fs::path directory_of(const fs::path& path) {
  return path.has_parent_path() ? path.parent_path() : fs::path(".");
}

}  // namespace

// ---- paths -------------------------------------------------------------------

fs::path through_links(fs::path path) {
  constexpr int kMaxLinks = 40;  // Linux's own limit (ELOOP)
  for (int followed = 0;; ++followed) {
    std::error_code error;
    if (!fs::is_symlink(fs::symlink_status(path, error)) || error) return path;
    if (followed == kMaxLinks) throw_errno("write", path, ELOOP);
    const fs::path target = fs::read_symlink(path, error);
    if (error) throw_errno("write", path, error.value());
    path = target.is_absolute() ? target : directory_of(path) / target;
  }
}

fs::path partial_path(const fs::path& final_path) {
  fs::path partial = final_path;
  partial += ".partial";
  return partial;
}

void check_output_path(const fs::path& final_path, bool append) {
  const fs::path partial = partial_path(final_path);
  if (!final_path.has_filename())
    throw IoError(fmt::format("cannot create {}: not a file name", final_path.string()));
  struct stat info {};
  const fs::path directory = directory_of(final_path);
  if (::stat(directory.c_str(), &info) != 0) throw_errno("create", partial, errno);
  if (!S_ISDIR(info.st_mode)) throw_errno("create", partial, ENOTDIR);
  if (::access(directory.c_str(), W_OK | X_OK) != 0) throw_errno("create", partial, errno);
  require_regular_or_absent(final_path, "write");
  require_regular_or_absent(partial, "create");
  require_unused(partial);
  // Appending copies the file and renames the copy over it: a damaged file
  // must be refused here, whole, before a copy carries the damage forward
  // and the rename makes it look like a successful append.
  if (append) (void)read_results(final_path);
}

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
  return w.guarded([&] {
    if (h5::has_link(e.strategies, info.label))
      throw std::invalid_argument(fmt::format("experiment '{}': strategy label '{}' is repeated",
                                              e.name, info.label));
    Impl::Strategy s{info.label, experiment.index, h5::create_group(e.strategies, info.label), {},
                     false};
    write_fields(s.group, "", info);
    for (const auto& [key, value] : info.provenance) h5::write_attr(s.group.get(), key, value);
    s.checkpoints = create_table<StrategyCheckpoint>(s.group);
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
    h5::write_attr(s.group, "summary_units", column<StrategySummary>(&Field::unit));
    h5::write_attr(s.group, kSummaryKeys, column<StrategySummary>(&Field::name));
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
    h5::write_attr(group, "summary_units", column<VmcRunSummary>(&Field::unit));
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
    h5::write_attr(group, "summary_units", column<OrbitalAccuracyRecord>(&Field::unit));
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

// StrategyInfo::provenance's keys, in the order they are written.
constexpr const char* kProvenanceKeys[] = {"library", "library_sha256", "kernel_name",
                                           "kernel_version"};

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
  if (h5::has_attr(group, kSummaryKeys)) {
    result.summary.emplace();
    read_fields(group, "", *result.summary);
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
