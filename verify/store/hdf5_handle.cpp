#include "verify/store/hdf5_handle.hpp"

#include <fmt/format.h>

#include <cstring>
#include <mutex>

namespace slaterlab::h5 {

namespace {

// Tell HDF5 not to register its at-exit clean-up. This must happen before
// the library initialises, hence a static initialiser in this translation
// unit (H5dont_atexit does not initialise the library). Why: in HDF5 1.10 a
// failed H5Fclose (a full disk while flushing) leaves a half-destroyed file
// object registered, and the at-exit clean-up then crashes on it, turning a
// clean "No space left on device" error into a segmentation fault. The store
// closes everything it opens explicitly, so nothing depends on the at-exit
// flush.
const bool kNoAtExit = [] {
  H5dont_atexit();
  return true;
}();

struct StackSummary {
  std::string innermost;   // description of the deepest frame
  std::string os_message;  // "error message = '...'" of a system call
  bool truncated = false;
  bool not_hdf5 = false;
  bool locked = false;  // another process holds the file's lock
};

herr_t summarise_frame(unsigned, const H5E_error2_t* frame, void* data) {
  auto* summary = static_cast<StackSummary*>(data);
  const std::string desc = frame->desc != nullptr ? frame->desc : "";
  if (!desc.empty()) summary->innermost = desc;
  if (frame->min_num == H5E_TRUNCATED) summary->truncated = true;
  if (frame->min_num == H5E_NOTHDF5) summary->not_hdf5 = true;
  if (desc.find("unable to lock file") != std::string::npos) summary->locked = true;
  // The system-call layer formats errno as "error message = '<strerror>'".
  constexpr std::string_view key = "error message = '";
  if (auto at = desc.find(key); at != std::string::npos) {
    auto begin = at + key.size();
    auto end = desc.find('\'', begin);
    summary->os_message = desc.substr(begin, end == std::string::npos ? end : end - begin);
  }
  return 0;
}

// HDF5's own descriptions may span lines (the time stamp has a newline).
std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  return text;
}

herr_t collect_link(hid_t, const char* name, const H5L_info_t*, void* data) {
  static_cast<std::vector<std::string>*>(data)->emplace_back(name);
  return 0;
}

herr_t collect_attr(hid_t, const char* name, const H5A_info_t*, void* data) {
  static_cast<std::vector<std::string>*>(data)->emplace_back(name);
  return 0;
}

std::string attr_op(std::string_view action, hid_t object, const std::string& name) {
  return fmt::format("{} attribute '{}' of {}", action, name, object_name(object));
}

void write_scalar(hid_t object, const std::string& name, hid_t type, const void* value) {
  const auto op = attr_op("write", object, name);
  if (has_attr(object, name)) check_ok(H5Adelete(object, name.c_str()), op);
  Handle space = space_handle(H5Screate(H5S_SCALAR), op);
  Handle attr = attribute_handle(
      H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), op);
  check_ok(H5Awrite(attr, type, value), op);
}

// What a numeric read accepts: an integer read refuses floats (HDF5 would
// silently truncate them), a floating-point read takes either.
enum class Numeric { integer, real };

void read_scalar(hid_t object, const std::string& name, hid_t type, void* value, Numeric kind) {
  const auto op = attr_op("read", object, name);
  Handle attr = attribute_handle(H5Aopen(object, name.c_str(), H5P_DEFAULT), op);
  const Declared declared = declared_attribute(attr, op);
  require_single(declared, op);
  const bool integer = declared.type_class == H5T_INTEGER;
  if (!(integer || (kind == Numeric::real && declared.type_class == H5T_FLOAT)))
    throw Failure(op, kind == Numeric::integer ? "not an integer" : "not a number");
  check_ok(H5Aread(attr, type, value), op);
}

/// Bytes of the file holding object: no stored string can be longer.
std::uint64_t file_size_of(hid_t object, std::string_view op) {
  Handle file = file_handle(H5Iget_file_id(object), op);
  hsize_t size = 0;
  check_ok(H5Fget_filesize(file, &size), op);
  return size;
}

// Most elements an attribute may hold: its data lives in the object header
// (at most 64 KiB compact) and ours hold a column list, tens of names.
constexpr std::uint64_t kMaxAttributeElements = std::uint64_t{1} << 16;

// A memory string type matching the stored one's character set: HDF5 1.10
// refuses to convert between ASCII and UTF-8 strings.
Handle vlen_string_like(hid_t stored) {
  Handle type = string_type();
  check_ok(H5Tset_cset(type, H5Tget_cset(stored)), "make string type");
  return type;
}

std::string read_fixed_string(hid_t attr, hid_t stored, const std::string& op) {
  const std::size_t size = H5Tget_size(stored);
  if (size == 0 || size > file_size_of(attr, op))
    throw Failure(op, fmt::format("declares a string of {} bytes, more than the file holds", size));
  std::string buffer(size, '\0');
  Handle type = type_handle(H5Tcopy(stored), op);
  check_ok(H5Aread(attr, type, buffer.data()), op);
  buffer.resize(std::strlen(buffer.c_str()));
  return buffer;
}

}  // namespace

Failure::Failure(std::string op, std::string detail)
    : std::runtime_error(op + ": " + detail), op_(std::move(op)), detail_(std::move(detail)) {}

void library_init() {
  static std::once_flag once;
  std::call_once(once, [] {
    (void)kNoAtExit;
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  });
}

std::string error_detail() {
  StackSummary summary;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, summarise_frame, &summary);
  H5Eclear2(H5E_DEFAULT);
  if (summary.locked)
    return "locked by another process, probably a run still writing it (" + summary.os_message +
           "); wait for it, or set HDF5_USE_FILE_LOCKING=FALSE to read it anyway";
  if (!summary.os_message.empty()) return summary.os_message;
  if (summary.not_hdf5) return "not an HDF5 file";
  if (summary.truncated) return "file is truncated (" + one_line(summary.innermost) + ")";
  if (!summary.innermost.empty()) return one_line(summary.innermost);
  return "unknown HDF5 error";
}

void fail(std::string op) { throw Failure(std::move(op), error_detail()); }

hid_t check_id(hid_t id, std::string_view op) {
  if (id < 0) fail(std::string(op));
  return id;
}

void check_ok(herr_t status, std::string_view op) {
  if (status < 0) fail(std::string(op));
}

bool check_tri(htri_t value, std::string_view op) {
  if (value < 0) fail(std::string(op));
  return value > 0;
}

Handle& Handle::operator=(Handle&& other) noexcept {
  if (this != &other) {
    close();
    id_ = std::exchange(other.id_, H5I_INVALID_HID);
    closer_ = other.closer_;
  }
  return *this;
}

bool Handle::close() noexcept {
  if (id_ < 0) return true;
  // Whatever the outcome, the identifier is never used again (see header).
  return closer_(std::exchange(id_, H5I_INVALID_HID)) >= 0;
}

Handle file_handle(hid_t id, std::string_view op) { return {check_id(id, op), H5Fclose}; }
Handle group_handle(hid_t id, std::string_view op) { return {check_id(id, op), H5Gclose}; }
Handle dataset_handle(hid_t id, std::string_view op) { return {check_id(id, op), H5Dclose}; }
Handle attribute_handle(hid_t id, std::string_view op) { return {check_id(id, op), H5Aclose}; }
Handle type_handle(hid_t id, std::string_view op) { return {check_id(id, op), H5Tclose}; }
Handle space_handle(hid_t id, std::string_view op) { return {check_id(id, op), H5Sclose}; }
Handle plist_handle(hid_t id, std::string_view op) { return {check_id(id, op), H5Pclose}; }

std::string object_name(hid_t object) {
  // Messages are often built right after a failed call: keep its error
  // stack, which any HDF5 call would otherwise clear.
  const hid_t saved = H5Eget_current_stack();
  const ssize_t size = H5Iget_name(object, nullptr, 0);
  std::string name = "(unnamed object)";
  if (size > 0) {
    name.assign(static_cast<std::size_t>(size) + 1, '\0');
    H5Iget_name(object, name.data(), name.size());
    name.resize(static_cast<std::size_t>(size));
  }
  if (saved >= 0) H5Eset_current_stack(saved);
  return name;
}

Handle string_type() {
  Handle type = type_handle(H5Tcopy(H5T_C_S1), "make string type");
  check_ok(H5Tset_size(type, H5T_VARIABLE), "make string type");
  check_ok(H5Tset_cset(type, H5T_CSET_UTF8), "make string type");
  return type;
}

Handle ordered_group_plist() {
  constexpr unsigned order = H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED;
  Handle plist = plist_handle(H5Pcreate(H5P_GROUP_CREATE), "make group property list");
  check_ok(H5Pset_link_creation_order(plist, order), "make group property list");
  check_ok(H5Pset_attr_creation_order(plist, order), "make group property list");
  return plist;
}

Handle create_group(hid_t parent, const std::string& name) {
  Handle plist = ordered_group_plist();
  return group_handle(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, plist, H5P_DEFAULT),
                      fmt::format("create group '{}' in {}", name, object_name(parent)));
}

Handle open_group(hid_t parent, const std::string& name) {
  return group_handle(H5Gopen2(parent, name.c_str(), H5P_DEFAULT),
                      fmt::format("open group '{}' in {}", name, object_name(parent)));
}

bool has_link(hid_t parent, const std::string& name) {
  return check_tri(H5Lexists(parent, name.c_str(), H5P_DEFAULT),
                   fmt::format("look up '{}' in {}", name, object_name(parent)));
}

std::vector<std::string> link_names(hid_t group) {
  std::vector<std::string> names;
  hsize_t next = 0;
  // Creation order is an index only where it was recorded (our own files).
  if (H5Literate(group, H5_INDEX_CRT_ORDER, H5_ITER_INC, &next, collect_link, &names) >= 0)
    return names;
  H5Eclear2(H5E_DEFAULT);
  names.clear();
  next = 0;
  check_ok(H5Literate(group, H5_INDEX_NAME, H5_ITER_INC, &next, collect_link, &names),
           "list the members of " + object_name(group));
  return names;
}

void write_attr(hid_t object, const std::string& name, const std::string& value) {
  Handle type = string_type();
  const char* data = value.c_str();
  write_scalar(object, name, type, &data);
}

void write_attr(hid_t object, const std::string& name, double value) {
  write_scalar(object, name, H5T_NATIVE_DOUBLE, &value);
}

void write_attr(hid_t object, const std::string& name, std::int64_t value) {
  write_scalar(object, name, H5T_NATIVE_INT64, &value);
}

void write_attr(hid_t object, const std::string& name, std::uint64_t value) {
  write_scalar(object, name, H5T_NATIVE_UINT64, &value);
}

void write_attr(hid_t object, const std::string& name, std::int32_t value) {
  write_scalar(object, name, H5T_NATIVE_INT32, &value);
}

void write_attr(hid_t object, const std::string& name, bool value) {
  const std::int8_t stored = value ? 1 : 0;
  write_scalar(object, name, H5T_NATIVE_INT8, &stored);
}

void write_attr(hid_t object, const std::string& name, const std::vector<std::string>& value) {
  const auto op = attr_op("write", object, name);
  if (has_attr(object, name)) check_ok(H5Adelete(object, name.c_str()), op);
  std::vector<const char*> data;
  data.reserve(value.size());
  for (const auto& s : value) data.push_back(s.c_str());
  const hsize_t size = data.size();
  Handle type = string_type();
  Handle space = space_handle(H5Screate_simple(1, &size, nullptr), op);
  Handle attr = attribute_handle(
      H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), op);
  check_ok(H5Awrite(attr, type, data.data()), op);
}

bool has_attr(hid_t object, const std::string& name) {
  return check_tri(H5Aexists(object, name.c_str()),
                   attr_op("look up", object, name));
}

void read_attr(hid_t object, const std::string& name, std::string& value) {
  const auto op = attr_op("read", object, name);
  Handle attr = attribute_handle(H5Aopen(object, name.c_str(), H5P_DEFAULT), op);
  const Declared declared = declared_attribute(attr, op);
  require_single(declared, op);
  if (declared.type_class != H5T_STRING) throw Failure(op, "not a string attribute");
  Handle stored = type_handle(H5Aget_type(attr), op);
  if (!check_tri(H5Tis_variable_str(stored), op)) {
    value = read_fixed_string(attr, stored, op);
    return;
  }
  Handle type = vlen_string_like(stored);
  char* data = nullptr;
  check_ok(H5Aread(attr, type, &data), op);
  value = data != nullptr ? data : "";
  H5free_memory(data);
}

void read_attr(hid_t object, const std::string& name, double& value) {
  read_scalar(object, name, H5T_NATIVE_DOUBLE, &value, Numeric::real);
}

void read_attr(hid_t object, const std::string& name, std::int64_t& value) {
  read_scalar(object, name, H5T_NATIVE_INT64, &value, Numeric::integer);
}

void read_attr(hid_t object, const std::string& name, std::uint64_t& value) {
  read_scalar(object, name, H5T_NATIVE_UINT64, &value, Numeric::integer);
}

void read_attr(hid_t object, const std::string& name, std::int32_t& value) {
  read_scalar(object, name, H5T_NATIVE_INT32, &value, Numeric::integer);
}

void read_attr(hid_t object, const std::string& name, bool& value) {
  std::int32_t stored = 0;
  read_scalar(object, name, H5T_NATIVE_INT32, &stored, Numeric::integer);
  value = stored != 0;
}

void read_attr(hid_t object, const std::string& name, std::vector<std::string>& value) {
  const auto op = attr_op("read", object, name);
  Handle attr = attribute_handle(H5Aopen(object, name.c_str(), H5P_DEFAULT), op);
  const Declared declared = declared_attribute(attr, op);
  if (declared.type_class != H5T_STRING || !declared.variable_string || declared.dims.size() > 1)
    throw Failure(op, "not an array of variable-length strings");
  const std::uint64_t count = declared.points().value_or(kMaxAttributeElements + 1);
  if (count > kMaxAttributeElements)
    throw Failure(op, fmt::format("declares {} strings, more than an attribute holds ({})",
                                  declared.shape_text(), kMaxAttributeElements));
  Handle stored = type_handle(H5Aget_type(attr), op);
  std::vector<char*> data(static_cast<std::size_t>(count), nullptr);
  Handle type = vlen_string_like(stored);
  check_ok(H5Aread(attr, type, data.data()), op);
  value.clear();
  for (char* s : data) {
    value.emplace_back(s != nullptr ? s : "");
    H5free_memory(s);
  }
}

std::vector<std::string> attr_names(hid_t object) {
  std::vector<std::string> names;
  hsize_t next = 0;
  if (H5Aiterate2(object, H5_INDEX_CRT_ORDER, H5_ITER_INC, &next, collect_attr, &names) >= 0)
    return names;
  H5Eclear2(H5E_DEFAULT);
  names.clear();
  next = 0;
  check_ok(H5Aiterate2(object, H5_INDEX_NAME, H5_ITER_INC, &next, collect_attr, &names),
           "list the attributes of " + object_name(object));
  return names;
}

// ---- checked reading ----------------------------------------------------------

namespace {

Declared declared_from(hid_t space, hid_t type, std::string_view op) {
  Declared declared;
  declared.type_class = H5Tget_class(type);
  if (declared.type_class == H5T_NO_CLASS) fail(std::string(op));
  declared.type_size = H5Tget_size(type);
  if (declared.type_class == H5T_STRING)
    declared.variable_string = check_tri(H5Tis_variable_str(type), op);
  switch (H5Sget_simple_extent_type(space)) {
    case H5S_SCALAR: break;
    case H5S_SIMPLE: {
      const int rank = H5Sget_simple_extent_ndims(space);
      if (rank < 0) fail(std::string(op));
      declared.dims.assign(static_cast<std::size_t>(rank), 0);
      if (H5Sget_simple_extent_dims(space, declared.dims.data(), nullptr) < 0)
        fail(std::string(op));
      break;
    }
    case H5S_NULL: declared.dims = {0}; break;  // no data at all
    default: fail(std::string(op));
  }
  return declared;
}

}  // namespace

std::optional<std::uint64_t> Declared::points() const {
  std::uint64_t product = 1;
  for (hsize_t d : dims)
    if (__builtin_mul_overflow(product, std::uint64_t{d}, &product)) return std::nullopt;
  return product;
}

std::string Declared::shape_text() const { return h5::shape_text(dims); }

std::string shape_text(const std::vector<hsize_t>& dims) {
  if (dims.empty()) return "a scalar";
  std::string out;
  for (hsize_t d : dims) out += (out.empty() ? "" : " x ") + std::to_string(d);
  return out;
}

Declared declared_attribute(hid_t attr, std::string_view op) {
  Handle space = space_handle(H5Aget_space(attr), op);
  Handle type = type_handle(H5Aget_type(attr), op);
  return declared_from(space, type, op);
}

Declared declared_dataset(hid_t dataset, std::string_view op) {
  Handle space = space_handle(H5Dget_space(dataset), op);
  Handle type = type_handle(H5Dget_type(dataset), op);
  return declared_from(space, type, op);
}

void require_single(const Declared& declared, std::string_view op) {
  if (declared.points() != std::uint64_t{1})
    throw Failure(std::string(op),
                  fmt::format("holds {} values where one belongs", declared.shape_text()));
}

std::size_t checked_bytes(std::uint64_t points, std::size_t element_bytes, std::string_view op) {
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(points, std::uint64_t{element_bytes}, &bytes) ||
      bytes > kMaxReadBytes)
    throw Failure(std::string(op), fmt::format("declares {} elements of {} bytes, more than the "
                                               "{} TiB a read may take: the file is damaged",
                                               points, element_bytes, kMaxReadBytes >> 40));
  return static_cast<std::size_t>(bytes);
}

std::uint64_t require_stored(hid_t dataset, const Declared& declared, std::string_view op) {
  const std::optional<std::uint64_t> points = declared.points();
  if (!points)
    throw Failure(std::string(op), fmt::format("declares {} elements, more than 2^64: the file "
                                               "is damaged", declared.shape_text()));
  const std::uint64_t bytes = checked_bytes(*points, declared.type_size, op);
  if (bytes == 0 || declared.variable_string) return *points;  // strings: their descriptors
  // Deflate encodes at most 258 bytes in about 2 bits: no stream inflates by
  // more than 1032:1. Shuffle and Fletcher-32 do not shrink data; any other
  // filter is of unknown ratio, so only the bound of checked_bytes applies.
  std::uint64_t ratio = 1;
  Handle plist = plist_handle(H5Dget_create_plist(dataset), op);
  const int filters = H5Pget_nfilters(plist);
  if (filters < 0) fail(std::string(op));
  for (int i = 0; i < filters; ++i) {
    unsigned flags = 0, config = 0;
    std::size_t values = 0;
    const H5Z_filter_t id = H5Pget_filter2(plist, static_cast<unsigned>(i), &flags, &values,
                                           nullptr, 0, nullptr, &config);
    if (id == H5Z_FILTER_DEFLATE) ratio = 1032;
    else if (id != H5Z_FILTER_SHUFFLE && id != H5Z_FILTER_FLETCHER32) return *points;
  }
  const std::uint64_t stored = H5Dget_storage_size(dataset);
  if ((bytes + ratio - 1) / ratio > stored)
    throw Failure(std::string(op),
                  fmt::format("declares {} elements ({} bytes) but the file stores {} bytes of "
                              "them: the file is damaged or was never fully written",
                              declared.shape_text(), bytes, stored));
  return *points;
}

void write_string_dataset(hid_t parent, const std::string& name, const std::string& value) {
  const auto op = fmt::format("write dataset '{}' in {}", name, object_name(parent));
  Handle type = string_type();
  Handle space = space_handle(H5Screate(H5S_SCALAR), op);
  Handle dataset = dataset_handle(
      H5Dcreate2(parent, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), op);
  const char* data = value.c_str();
  check_ok(H5Dwrite(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, &data), op);
}

std::string read_string_dataset(hid_t parent, const std::string& name) {
  const auto op = fmt::format("read dataset '{}' in {}", name, object_name(parent));
  Handle dataset = dataset_handle(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), op);
  const Declared declared = declared_dataset(dataset, op);
  require_single(declared, op);
  if (declared.type_class != H5T_STRING || !declared.variable_string)
    throw Failure(op, "not a variable-length string");
  Handle stored = type_handle(H5Dget_type(dataset), op);
  Handle type = vlen_string_like(stored);
  char* data = nullptr;
  check_ok(H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, &data), op);
  std::string value = data != nullptr ? data : "";
  H5free_memory(data);
  return value;
}

}  // namespace slaterlab::h5
