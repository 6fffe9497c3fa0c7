#pragma once
// A thin RAII layer over the HDF5 C API, used only by the results store.
//
// Contract:
// - Handle owns one hid_t and closes it with the matching H5*close exactly
//   once. After a failed close the identifier is abandoned, never touched
//   again: HDF5 1.10 leaves a half-destroyed file object behind a failed
//   H5Fclose, and any further call on it (including the library's own
//   clean-up at exit) crashes.
// - Every helper that fails throws h5::Failure carrying what was attempted
//   ("write attribute 'seed' of /experiments/e1") and the most useful line of
//   the HDF5 error stack; the store adds the file name and rethrows IoError.
// - library_init() turns off HDF5's automatic error printing (the store
//   reports errors itself) and is called by every entry point of the store.
// Not thread-safe: the Debian HDF5 build is not thread-safe, so one thread at
// a time may use the store.

#include <hdf5.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace slaterlab::h5 {

/// An HDF5 call failed. op says what was attempted, detail why.
class Failure : public std::runtime_error {
 public:
  Failure(std::string op, std::string detail);
  const std::string& op() const noexcept { return op_; }
  const std::string& detail() const noexcept { return detail_; }

 private:
  std::string op_;
  std::string detail_;
};

/// Silences HDF5's error printing (once per process).
void library_init();

/// The most informative line of the current HDF5 error stack: a note that
/// another process holds the file's lock, else the operating system's
/// message when there is one ("No space left on device"), else
/// "not an HDF5 file" / "file is truncated (...)", else the innermost
/// description.
std::string error_detail();

/// Throws Failure(op, error_detail()).
[[noreturn]] void fail(std::string op);

/// Throws unless id is a valid identifier / status is non-negative.
hid_t check_id(hid_t id, std::string_view op);
void check_ok(herr_t status, std::string_view op);
/// For htri_t results: returns the truth value, throws on a negative result.
bool check_tri(htri_t value, std::string_view op);

class Handle {
 public:
  using Closer = herr_t (*)(hid_t);

  Handle() noexcept = default;
  Handle(hid_t id, Closer closer) noexcept : id_(id), closer_(closer) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept
      : id_(std::exchange(other.id_, H5I_INVALID_HID)), closer_(other.closer_) {}
  Handle& operator=(Handle&& other) noexcept;
  ~Handle() { close(); }

  hid_t get() const noexcept { return id_; }
  operator hid_t() const noexcept { return id_; }  // NOLINT: used as an hid_t everywhere
  bool valid() const noexcept { return id_ >= 0; }

  /// Closes now (no-op if empty); false if HDF5 reported an error, whose
  /// stack error_detail() then describes. The handle is empty afterwards.
  bool close() noexcept;

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

// Constructors that check the identifier and pick the matching closer.
Handle file_handle(hid_t id, std::string_view op);
Handle group_handle(hid_t id, std::string_view op);
Handle dataset_handle(hid_t id, std::string_view op);
Handle attribute_handle(hid_t id, std::string_view op);
Handle type_handle(hid_t id, std::string_view op);
Handle space_handle(hid_t id, std::string_view op);
Handle plist_handle(hid_t id, std::string_view op);

/// The HDF5 path of an object ("/experiments/e1"), for messages. Leaves the
/// current error stack as it was, so it may be evaluated in any order with
/// the call whose failure it describes.
std::string object_name(hid_t object);

/// A variable-length UTF-8 string type.
Handle string_type();

// Group creation property list that records link and attribute creation
// order, so experiments, strategies and workload parameters read back in the
// order they were written.
Handle ordered_group_plist();

Handle create_group(hid_t parent, const std::string& name);
Handle open_group(hid_t parent, const std::string& name);
bool has_link(hid_t parent, const std::string& name);
/// Names of the links of a group, in creation order when it was recorded.
std::vector<std::string> link_names(hid_t group);

// Scalar attributes. Writing replaces an existing attribute of that name.
// Booleans are stored as int8 0/1; integers and doubles in native types.
void write_attr(hid_t object, const std::string& name, const std::string& value);
void write_attr(hid_t object, const std::string& name, double value);
void write_attr(hid_t object, const std::string& name, std::int64_t value);
void write_attr(hid_t object, const std::string& name, std::uint64_t value);
void write_attr(hid_t object, const std::string& name, std::int32_t value);
void write_attr(hid_t object, const std::string& name, bool value);
// A string literal would otherwise silently become a bool.
void write_attr(hid_t object, const std::string& name, const char* value) = delete;
/// A 1-D array of variable-length strings.
void write_attr(hid_t object, const std::string& name, const std::vector<std::string>& value);

bool has_attr(hid_t object, const std::string& name);
// Reading converts numeric types as HDF5 does; a missing attribute or a
// type that cannot be converted throws Failure.
void read_attr(hid_t object, const std::string& name, std::string& value);
void read_attr(hid_t object, const std::string& name, double& value);
void read_attr(hid_t object, const std::string& name, std::int64_t& value);
void read_attr(hid_t object, const std::string& name, std::uint64_t& value);
void read_attr(hid_t object, const std::string& name, std::int32_t& value);
void read_attr(hid_t object, const std::string& name, bool& value);
void read_attr(hid_t object, const std::string& name, std::vector<std::string>& value);
/// Attribute names, in creation order when it was recorded.
std::vector<std::string> attr_names(hid_t object);

// ---- checked reading ----------------------------------------------------------
//
// Every read of an untrusted file goes through these checks before any data
// is read: an object's header declares its type class, shape and size, and a
// damaged or hostile file may declare anything (an array where one value
// belongs, 2^62 rows, a string longer than the file). Each check throws
// Failure(op, why) naming the object; the readers above use them all.

/// What an attribute or dataset declares about its data (its header only).
struct Declared {
  H5T_class_t type_class = H5T_NO_CLASS;
  std::size_t type_size = 0;   // bytes of one stored element
  bool variable_string = false;
  std::vector<hsize_t> dims;   // empty: a scalar
  /// Number of elements; 0 for an empty extent; nullopt if the product of
  /// the dims overflows 64 bits.
  std::optional<std::uint64_t> points() const;
  std::string shape_text() const;
};

/// "a scalar", "1000", "2147483648 x 2147483648".
std::string shape_text(const std::vector<hsize_t>& dims);

Declared declared_attribute(hid_t attr, std::string_view op);
Declared declared_dataset(hid_t dataset, std::string_view op);

/// Requires one value: a scalar, or an array of exactly one element.
void require_single(const Declared& declared, std::string_view op);

/// Bytes that `points` elements of `element_bytes` each take in memory.
/// Throws when the product overflows or exceeds kMaxReadBytes.
std::size_t checked_bytes(std::uint64_t points, std::size_t element_bytes, std::string_view op);

/// Largest single read (1 TiB): beyond what any machine this runs on holds,
/// so a larger declared size can only be damage.
inline constexpr std::uint64_t kMaxReadBytes = std::uint64_t{1} << 40;

/// Requires that the file stores the data the dataset declares: unfiltered
/// storage holds every element; deflate (at most 1032:1) cannot hold more
/// than 1032 times its stored bytes. Catches a damaged or hostile extent
/// (2^62 rows) before a reader allocates for it. Returns the element count.
std::uint64_t require_stored(hid_t dataset, const Declared& declared, std::string_view op);

/// A scalar variable-length string dataset.
void write_string_dataset(hid_t parent, const std::string& name, const std::string& value);
std::string read_string_dataset(hid_t parent, const std::string& name);

}  // namespace slaterlab::h5
