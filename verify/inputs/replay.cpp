#include "verify/inputs/replay.hpp"

// File schema (replay_schema_version 1, docs/replay.md):
//   root attributes  replay_schema_version = 1 (integer),
//                    layout = "row-major" | "column-major" (string),
//                    anything else: metadata, kept as text (code, system, ...)
//   initial_matrix   N x N float: A(i, j) = phi_i(r_j), orbital i, electron j;
//                    "row-major": dataset[i, j] = A(i, j) (numpy A as is),
//                    "column-major": dataset[j, i] = A(i, j) (the buffer of a
//                    Fortran/Eigen/LAPACK column-major A, or numpy A.T).
//   moves/electron   M integers in [0, N): the electron (column) moved
//   moves/column     M x N float: row m is the new column of move m, entry i
//                    = phi_i(r') (one row per move, whatever the layout)
//   moves/accept     optional, M integers 0/1 (int8; a numpy bool array,
//                    stored by h5py as an enum, is accepted too)
//   moves/uniform    optional, M floats in [0, 1): the uniform variate the
//                    recorded run compared with its acceptance probability
// replay_schema_version 2 adds update cycles (docs/replay.md, docs/cycles.md):
//   moves/cycle      optional, M integers: the cycle of each move, 0 for the
//                    first move and then equal to the previous one or one
//                    more, so that a cycle is a run of consecutive moves.
//                    Moves of a cycle are applied as one unit, always: the
//                    file then has neither moves/accept nor moves/uniform.
// Version 1 files are read as before; moves/cycle in one is an error.
// Every float must be finite. Floats of any width are read as double
// (float32 widens exactly).

#include <fmt/format.h>

#include <sys/stat.h>

#include <cmath>
#include <functional>
#include <system_error>

#include "verify/store/hdf5_handle.hpp"
#include "verify/store/isolated.hpp"

namespace slaterlab {

namespace {

namespace fs = std::filesystem;
using h5::Handle;

constexpr const char* kVersionAttr = "replay_schema_version";
constexpr const char* kLayoutAttr = "layout";

[[noreturn]] void bad(const fs::path& path, const std::string& what) {
  throw ReplayError("replay file " + path.string() + ": " + what);
}

// ---- reading ------------------------------------------------------------------

/// One dataset of the file: its handle, shape and type class.
struct Dataset {
  std::string name;
  Handle handle;
  std::vector<hsize_t> dims;
  H5T_class_t type_class = H5T_NO_CLASS;
  std::size_t type_size = 0;
};

using h5::shape_text;

class ReplayReader {
 public:
  explicit ReplayReader(fs::path path) : path_(std::move(path)) {
    h5::library_init();
    open();
    check_version();
    read_layout();
    initial_ = dataset("initial_matrix", true);
    if (!h5::has_link(file_, "moves")) bad(path_, "missing group 'moves'");
    electron_ = dataset("moves/electron", true);
    column_ = dataset("moves/column", true);
    accept_ = dataset("moves/accept", false);
    uniform_ = dataset("moves/uniform", false);
    check_shapes();
    check_cycle_shape();
  }

  ReplayShape shape() const { return {Eigen::Index(n_), std::int64_t(m_)}; }
  ReplayData read(std::int64_t moves);
  std::vector<std::pair<std::string, std::string>> metadata() const;

 private:
  void open();
  void check_version();
  void read_layout();
  std::optional<Dataset> dataset(const std::string& name, bool required);
  void check_shapes();
  // Update cycles (version 2): the moves/cycle dataset.
  void check_cycle_shape();
  std::vector<std::int64_t> read_cycles(hsize_t rows) const;
  void expect_class(const Dataset& d, H5T_class_t wanted, const char* what) const;
  std::vector<double> doubles(const Dataset& d, hsize_t rows) const;
  std::vector<std::int64_t> integers(const Dataset& d, hsize_t rows) const;
  std::vector<std::int64_t> flags(const Dataset& d, hsize_t rows) const;
  void read_rows(const Dataset& d, hid_t memory_type, hsize_t rows, void* out) const;

  fs::path path_;
  Handle file_;
  std::string layout_;
  std::optional<Dataset> initial_, electron_, column_, accept_, uniform_, cycle_;
  hsize_t n_ = 0, m_ = 0;
  std::int64_t version_ = 0;
};

/// Before anything opens it: a FIFO would block the open, a device stream.
void require_regular_file(const fs::path& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) bad(path, "no such file");
  if (S_ISDIR(info.st_mode)) bad(path, "is a directory");
  if (!S_ISREG(info.st_mode)) bad(path, "not a regular file (a FIFO, device or socket)");
}

void ReplayReader::open() {
  require_regular_file(path_);
  const htri_t is_hdf5 = H5Fis_hdf5(path_.c_str());
  if (is_hdf5 <= 0) {
    bad(path_, is_hdf5 == 0 ? "not an HDF5 file" : "cannot open: " + h5::error_detail());
  }
  const hid_t id = H5Fopen(path_.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  if (id < 0) bad(path_, "cannot open: " + h5::error_detail());
  file_ = Handle(id, H5Fclose);
}

void ReplayReader::check_version() {
  if (!h5::has_attr(file_, kVersionAttr)) {
    bad(path_, std::string("not a replay file: no root attribute '") + kVersionAttr + "'");
  }
  std::int64_t version = 0;
  try {
    h5::read_attr(file_, kVersionAttr, version);
  } catch (const h5::Failure& failure) {
    bad(path_, std::string("root attribute '") + kVersionAttr + "' must be an integer (" +
                   failure.detail() + ")");
  }
  if (version < 1 || version > kReplaySchemaVersion) {
    bad(path_, fmt::format("{} {} is not supported (this build reads versions 1 to {})",
                           kVersionAttr, version, kReplaySchemaVersion));
  }
  version_ = version;
}

void ReplayReader::read_layout() {
  if (!h5::has_attr(file_, kLayoutAttr)) {
    bad(path_, "missing root attribute 'layout' (\"row-major\" or \"column-major\")");
  }
  try {
    h5::read_attr(file_, kLayoutAttr, layout_);
  } catch (const h5::Failure& failure) {
    bad(path_, "root attribute 'layout' must be a string (" + failure.detail() + ")");
  }
  if (layout_ != "row-major" && layout_ != "column-major") {
    bad(path_, "layout '" + layout_ + "' must be \"row-major\" or \"column-major\"");
  }
}

std::optional<Dataset> ReplayReader::dataset(const std::string& name, bool required) {
  if (!h5::has_link(file_, name)) {
    if (required) bad(path_, "missing dataset '" + name + "'");
    return std::nullopt;
  }
  Dataset d;
  d.name = name;
  const hid_t id = H5Dopen2(file_, name.c_str(), H5P_DEFAULT);
  if (id < 0) bad(path_, "'" + name + "' is not a readable dataset: " + h5::error_detail());
  d.handle = Handle(id, H5Dclose);
  Handle space(H5Dget_space(d.handle), H5Sclose);
  Handle type(H5Dget_type(d.handle), H5Tclose);
  const int rank = space.valid() ? H5Sget_simple_extent_ndims(space) : -1;
  if (rank < 0 || !type.valid()) bad(path_, "cannot read the shape of '" + name + "'");
  d.dims.assign(std::size_t(rank), 0);
  H5Sget_simple_extent_dims(space, d.dims.data(), nullptr);
  d.type_class = H5Tget_class(type);
  d.type_size = H5Tget_size(type);
  // The declared extent must be stored in the file: a hostile or damaged
  // header (2^61 moves in a 9 KB file) is refused before any plan or read.
  try {
    h5::require_stored(d.handle, h5::declared_dataset(d.handle, name), "'" + name + "'");
  } catch (const h5::Failure& failure) {
    bad(path_, failure.what());
  }
  return d;
}

void ReplayReader::expect_class(const Dataset& d, H5T_class_t wanted, const char* what) const {
  if (d.type_class != wanted) bad(path_, "'" + d.name + "' must hold " + what);
}

void ReplayReader::check_shapes() {
  const auto& a = initial_->dims;
  if (a.size() != 2 || a[0] != a[1] || a[0] == 0) {
    bad(path_, "'initial_matrix' must be a square N x N dataset with N >= 1, got " + shape_text(a));
  }
  n_ = a[0];
  if (electron_->dims.size() != 1) {
    bad(path_,
        "'moves/electron' must be 1-D (one entry per move), got " + shape_text(electron_->dims));
  }
  m_ = electron_->dims[0];
  if (column_->dims != std::vector<hsize_t>{m_, n_}) {
    bad(path_, fmt::format("'moves/column' must be M x N = {} x {} (one row per move), got {}", m_,
                           n_, shape_text(column_->dims)));
  }
  for (const auto* d : {&accept_, &uniform_}) {
    if (*d && (*d)->dims != std::vector<hsize_t>{m_}) {
      bad(path_, fmt::format("'{}' must have one entry per move (M = {}), got {}", (*d)->name, m_,
                             shape_text((*d)->dims)));
    }
  }
  expect_class(*initial_, H5T_FLOAT, "floating-point numbers (float64)");
  expect_class(*column_, H5T_FLOAT, "floating-point numbers (float64)");
  expect_class(*electron_, H5T_INTEGER, "integers (int64)");
  if (uniform_) expect_class(*uniform_, H5T_FLOAT, "floating-point numbers (float64)");
  if (accept_ && !(accept_->type_class == H5T_INTEGER ||
                   (accept_->type_class == H5T_ENUM && accept_->type_size == 1))) {
    bad(path_, "'moves/accept' must hold integers 0/1 (int8)");
  }
}

/// Reads the first `rows` rows of d (all of its other dimensions) into out.
void ReplayReader::read_rows(const Dataset& d, hid_t memory_type, hsize_t rows, void* out) const {
  if (rows == 0) return;
  for (std::size_t i = 1; i < d.dims.size(); ++i)
    if (d.dims[i] == 0) return;
  std::vector<hsize_t> start(d.dims.size(), 0), count = d.dims;
  if (!count.empty()) count[0] = rows;
  Handle file_space(H5Dget_space(d.handle), H5Sclose);
  Handle memory_space(count.empty() ? H5Screate(H5S_SCALAR)
                                    : H5Screate_simple(int(count.size()), count.data(), nullptr),
                      H5Sclose);
  if (!file_space.valid() || !memory_space.valid() ||
      (!count.empty() && H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start.data(), nullptr,
                                             count.data(), nullptr) < 0) ||
      H5Dread(d.handle, memory_type, memory_space, file_space, H5P_DEFAULT, out) < 0) {
    bad(path_, "cannot read '" + d.name + "': " + h5::error_detail());
  }
}

/// Elements of the first `rows` rows of d (a bounded product: require_stored
/// checked the whole extent).
std::size_t row_elements(const std::vector<hsize_t>& dims, hsize_t rows) {
  std::size_t count = 1;
  for (std::size_t i = 0; i < dims.size(); ++i) count *= std::size_t(i == 0 ? rows : dims[i]);
  return count;
}

std::vector<double> ReplayReader::doubles(const Dataset& d, hsize_t rows) const {
  std::vector<double> out(row_elements(d.dims, rows));
  if (!out.empty()) read_rows(d, H5T_NATIVE_DOUBLE, rows, out.data());
  return out;
}

std::vector<std::int64_t> ReplayReader::integers(const Dataset& d, hsize_t rows) const {
  std::vector<std::int64_t> out(row_elements(d.dims, rows));
  if (!out.empty()) read_rows(d, H5T_NATIVE_INT64, rows, out.data());
  return out;
}

// 0/1 flags stored as integers or as h5py's enum for numpy bool (int8 base).
std::vector<std::int64_t> ReplayReader::flags(const Dataset& d, hsize_t rows) const {
  if (d.type_class != H5T_ENUM) return integers(d, rows);
  Handle stored(H5Dget_type(d.handle), H5Tclose);
  Handle native(H5Tget_native_type(stored, H5T_DIR_ASCEND), H5Tclose);
  if (!native.valid()) bad(path_, "cannot read '" + d.name + "': " + h5::error_detail());
  std::vector<std::int8_t> raw(row_elements(d.dims, rows));
  if (!raw.empty()) read_rows(d, native, rows, raw.data());
  return {raw.begin(), raw.end()};
}

std::string attribute_text(hid_t file, const std::string& name) {
  Handle attr(H5Aopen(file, name.c_str(), H5P_DEFAULT), H5Aclose);
  if (!attr.valid()) return "(unreadable)";
  Handle space(H5Aget_space(attr), H5Sclose);
  Handle type(H5Aget_type(attr), H5Tclose);
  const hssize_t points = space.valid() ? H5Sget_simple_extent_npoints(space) : -1;
  if (points != 1) return fmt::format("(array of {} values)", points);
  try {
    switch (H5Tget_class(type)) {
      case H5T_STRING: {
        std::string value;
        h5::read_attr(file, name, value);
        return value;
      }
      case H5T_INTEGER: {
        std::int64_t value = 0;
        h5::read_attr(file, name, value);
        return std::to_string(value);
      }
      case H5T_FLOAT: {
        double value = 0;
        h5::read_attr(file, name, value);
        return fmt::format("{}", value);
      }
      default: return "(not shown)";
    }
  } catch (const h5::Failure&) {
    return "(unreadable)";
  }
}

std::vector<std::pair<std::string, std::string>> ReplayReader::metadata() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& name : h5::attr_names(file_)) {
    if (name == kVersionAttr || name == kLayoutAttr) continue;
    out.emplace_back(name, attribute_text(file_, name));
  }
  return out;
}

// ---- update cycles (replay_schema_version 2) ----------------------------------

void ReplayReader::check_cycle_shape() {
  cycle_ = dataset("moves/cycle", false);
  if (!cycle_) return;
  if (version_ < 2) {
    bad(path_, fmt::format("'moves/cycle' needs {} 2, the file declares {}", kVersionAttr,
                           version_));
  }
  if (cycle_->dims != std::vector<hsize_t>{m_}) {
    bad(path_, fmt::format("'moves/cycle' must have one entry per move (M = {}), got {}", m_,
                           shape_text(cycle_->dims)));
  }
  expect_class(*cycle_, H5T_INTEGER, "integers (int64)");
  if (accept_ || uniform_) {
    bad(path_, "moves grouped in cycles ('moves/cycle') are always applied: the file must not "
               "have '" + (accept_ ? accept_ : uniform_)->name + "'");
  }
}

std::vector<std::int64_t> ReplayReader::read_cycles(hsize_t rows) const {
  // One entry past the moves used, to see whether they end inside a cycle.
  std::vector<std::int64_t> cycle = integers(*cycle_, std::min(rows + 1, m_));
  for (std::size_t t = 0; t < cycle.size(); ++t) {
    const std::int64_t previous = t == 0 ? 0 : cycle[t - 1];
    if (!(cycle[t] == previous || (t > 0 && cycle[t] == previous + 1))) {
      bad(path_, fmt::format("'moves/cycle'[{}] = {} must be {} (cycles are numbered 0, 1, ... "
                             "over consecutive moves)",
                             t, cycle[t],
                             t == 0 ? std::string("0")
                                    : fmt::format("{} or {}", previous, previous + 1)));
    }
  }
  // A cycle is one excitation: applying part of it would judge a matrix the
  // multi-determinant expansion never forms.
  if (cycle.size() > rows) {
    if (rows > 0 && cycle[rows] == cycle[rows - 1]) {
      bad(path_, fmt::format("the study's {} moves end inside cycle {} ('moves/cycle'); choose a "
                             "number of moves that ends a cycle",
                             rows, cycle[rows - 1]));
    }
    cycle.resize(rows);
  }
  return cycle;
}

const char* non_finite_name(double x) { return std::isnan(x) ? "NaN" : "inf"; }

ReplayData ReplayReader::read(std::int64_t moves) {
  ReplayData data;
  data.layout = layout_;
  data.file_moves = std::int64_t(m_);
  const Eigen::Index n = Eigen::Index(n_);
  const hsize_t rows = moves >= 0 ? std::min(m_, hsize_t(moves)) : m_;
  const Eigen::Index m = Eigen::Index(rows);

  // HDF5 hands back C order: buffer[r * N + c] = dataset[r, c].
  const std::vector<double> a = doubles(*initial_, n_);
  using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  if (layout_ == "row-major") {
    data.initial = Eigen::Map<const RowMajor>(a.data(), n, n);  // dataset[i, j] = A(i, j)
  } else {
    data.initial = Eigen::Map<const Eigen::MatrixXd>(a.data(), n, n);  // dataset[j, i] = A(i, j)
  }
  for (Eigen::Index j = 0; j < n; ++j) {
    for (Eigen::Index i = 0; i < n; ++i) {
      const double x = data.initial(i, j);
      if (!std::isfinite(x)) {
        bad(path_, fmt::format("'initial_matrix' has a non-finite value ({}) at A({}, {}) "
                               "(orbital {}, electron {})",
                               non_finite_name(x), i, j, i, j));
      }
    }
  }

  // Row m of moves/column is the new column of move m: column m of the map.
  const std::vector<double> c = doubles(*column_, rows);
  data.columns = Eigen::Map<const Eigen::MatrixXd>(c.data(), n, m);
  for (Eigen::Index move = 0; move < m; ++move) {
    for (Eigen::Index i = 0; i < n; ++i) {
      const double x = data.columns(i, move);
      if (!std::isfinite(x)) {
        bad(path_, fmt::format("'moves/column' has a non-finite value ({}) in move {}, entry {}",
                               non_finite_name(x), move, i));
      }
    }
  }

  const std::vector<std::int64_t> electron = integers(*electron_, rows);
  for (std::size_t t = 0; t < electron.size(); ++t) {
    if (electron[t] < 0 || electron[t] >= std::int64_t(n)) {
      bad(path_, fmt::format("'moves/electron'[{}] = {} is out of range (N = {}: 0 to {})", t,
                             electron[t], n, n - 1));
    }
    data.electron.push_back(Eigen::Index(electron[t]));
  }

  if (accept_) {
    const std::vector<std::int64_t> accept = flags(*accept_, rows);
    data.accept.emplace();
    for (std::size_t t = 0; t < accept.size(); ++t) {
      if (accept[t] != 0 && accept[t] != 1) {
        bad(path_, fmt::format("'moves/accept'[{}] = {} must be 0 or 1", t, accept[t]));
      }
      data.accept->push_back(accept[t] == 1);
    }
  }
  if (uniform_) {
    data.uniform = doubles(*uniform_, rows);
    for (std::size_t t = 0; t < data.uniform->size(); ++t) {
      const double u = (*data.uniform)[t];
      if (!(u >= 0.0 && u < 1.0)) {
        bad(path_, fmt::format("'moves/uniform'[{}] = {} is not in [0, 1)", t, u));
      }
    }
  }
  if (cycle_) data.cycle = read_cycles(rows);
  data.schema_version = version_;
  data.metadata = metadata();
  return data;
}

// ---- writing ------------------------------------------------------------------

void write_dataset(const fs::path& path, hid_t parent, const std::string& name, hid_t type,
                   const std::vector<hsize_t>& dims, const void* values) {
  Handle space(H5Screate_simple(int(dims.size()), dims.data(), nullptr), H5Sclose);
  Handle set(space.valid() ? H5Dcreate2(parent, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT,
                                        H5P_DEFAULT)
                           : H5I_INVALID_HID,
             H5Dclose);
  bool empty = false;
  for (hsize_t d : dims) empty = empty || d == 0;
  if (!set.valid() || (!empty && H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values) < 0)) {
    bad(path, "cannot write '" + name + "': " + h5::error_detail());
  }
}

// The reader reports its own findings as ReplayError; an HDF5 failure it did
// not anticipate (a damaged object, a group where a dataset belongs) still
// becomes one line naming the file.
template <class Fn>
auto reported(const fs::path& path, Fn&& fn) {
  try {
    return fn();
  } catch (const h5::Failure& error) {
    bad(path, error.what());
  }
}

/// Runs read in a child first (isolated.hpp), so that damage crashing or
/// hanging libhdf5 is reported as a damaged file.
void read_isolated(const fs::path& path, const std::function<void()>& read) {
  require_regular_file(path);
  try {
    check_file_isolated(path, read);
  } catch (const IsolatedFailure& failure) {
    if (!failure.crashed()) throw ReplayError(failure.what());  // the child's own ReplayError
    bad(path, failure.what());
  }
}

}  // namespace

ReplayShape read_replay_shape(const fs::path& path) {
  read_isolated(path, [&] { reported(path, [&] { return ReplayReader(path).metadata(); }); });
  return reported(path, [&] { return ReplayReader(path).shape(); });
}

ReplayData read_replay(const fs::path& path, std::int64_t moves) {
  read_isolated(path, [&] { reported(path, [&] { return ReplayReader(path).read(moves); }); });
  return reported(path, [&] { return ReplayReader(path).read(moves); });
}

void write_replay(const fs::path& path, const ReplayData& data) {
  h5::library_init();
  Handle file(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
  if (!file.valid()) bad(path, "cannot create: " + h5::error_detail());
  try {
    h5::write_attr(file, kVersionAttr, data.schema_version);
    h5::write_attr(file, kLayoutAttr, data.layout);
    for (const auto& [key, value] : data.metadata) h5::write_attr(file, key, value);
  } catch (const h5::Failure& error) {
    bad(path, error.what());
  }
  const auto n = hsize_t(data.initial.rows()), n_cols = hsize_t(data.initial.cols());
  using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  // Row-major: the C-order buffer of A itself; column-major: A's column-major buffer.
  const RowMajor a =
      data.layout == "row-major" ? RowMajor(data.initial) : RowMajor(data.initial.transpose());
  const std::vector<hsize_t> a_dims = data.layout == "row-major" ? std::vector<hsize_t>{n, n_cols}
                                                                 : std::vector<hsize_t>{n_cols, n};
  write_dataset(path, file, "initial_matrix", H5T_NATIVE_DOUBLE, a_dims, a.data());

  Handle moves(H5Gcreate2(file, "moves", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  if (!moves.valid()) bad(path, "cannot create group 'moves': " + h5::error_detail());
  const auto m = hsize_t(data.electron.size());
  const std::vector<std::int64_t> electron(data.electron.begin(), data.electron.end());
  write_dataset(path, moves, "electron", H5T_NATIVE_INT64, {m}, electron.data());
  // Column-major N x M buffer = C-order M x N: row m is the new column of move m.
  const Eigen::MatrixXd columns = data.columns;
  write_dataset(path, moves, "column", H5T_NATIVE_DOUBLE,
                {hsize_t(columns.cols()), hsize_t(columns.rows())}, columns.data());
  if (data.accept) {
    const std::vector<std::int8_t> accept(data.accept->begin(), data.accept->end());
    write_dataset(path, moves, "accept", H5T_NATIVE_INT8, {hsize_t(accept.size())}, accept.data());
  }
  if (data.uniform) {
    write_dataset(path, moves, "uniform", H5T_NATIVE_DOUBLE, {hsize_t(data.uniform->size())},
                  data.uniform->data());
  }
  if (data.cycle) {
    write_dataset(path, moves, "cycle", H5T_NATIVE_INT64, {hsize_t(data.cycle->size())},
                  data.cycle->data());
  }
  moves.close();
  if (!file.close()) bad(path, "cannot close: " + h5::error_detail());
}

}  // namespace slaterlab
