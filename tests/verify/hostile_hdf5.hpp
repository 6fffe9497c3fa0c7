#pragma once
// Hostile and damaged HDF5 files for the tests of the checked readers: each
// helper rewrites one object of an existing file the way a damaged or
// hand-made file could (through the HDF5 API, or by rewriting the bytes of a
// global-heap object), so that a test states one fault at a time.

#include <hdf5.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace slaterlab::testing {

/// An open file (read-write) for rewriting objects; closed on destruction.
class Rewrite {
 public:
  explicit Rewrite(const std::filesystem::path& path)
      : file_(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT)) {
    if (file_ < 0) throw std::runtime_error("cannot open " + path.string());
  }
  ~Rewrite() { H5Fclose(file_); }
  Rewrite(const Rewrite&) = delete;
  Rewrite& operator=(const Rewrite&) = delete;
  hid_t file() const { return file_; }

  /// Replaces attribute `name` of `object` by a 1-D array of `count` int32.
  void array_attribute(const std::string& object, const std::string& name, hsize_t count) {
    const hid_t target = H5Oopen(file_, object.c_str(), H5P_DEFAULT);
    if (H5Aexists(target, name.c_str()) > 0) H5Adelete(target, name.c_str());
    const hid_t space = H5Screate_simple(1, &count, nullptr);
    const hid_t attr =
        H5Acreate2(target, name.c_str(), H5T_NATIVE_INT32, space, H5P_DEFAULT, H5P_DEFAULT);
    const std::vector<std::int32_t> values(count, 1);
    H5Awrite(attr, H5T_NATIVE_INT32, values.data());
    H5Aclose(attr);
    H5Sclose(space);
    H5Oclose(target);
  }

  /// Replaces attribute `name` of `object` by a 1-D array of `count`
  /// variable-length strings.
  void string_array_attribute(const std::string& object, const std::string& name,
                              hsize_t count) {
    const hid_t target = H5Oopen(file_, object.c_str(), H5P_DEFAULT);
    if (H5Aexists(target, name.c_str()) > 0) H5Adelete(target, name.c_str());
    const hid_t type = vlen_string();
    const hid_t space = H5Screate_simple(1, &count, nullptr);
    const hid_t attr = H5Acreate2(target, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT);
    const std::vector<const char*> values(count, "row-major");
    H5Awrite(attr, type, values.data());
    H5Aclose(attr);
    H5Sclose(space);
    H5Tclose(type);
    H5Oclose(target);
  }

  /// Replaces dataset `path` by a 1-D array of `count` variable-length strings.
  void string_array_dataset(const std::string& path, hsize_t count) {
    H5Ldelete(file_, path.c_str(), H5P_DEFAULT);
    const hid_t type = vlen_string();
    const hid_t space = H5Screate_simple(1, &count, nullptr);
    const hid_t set =
        H5Dcreate2(file_, path.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const std::vector<const char*> values(count, "x = 1");
    H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
    H5Dclose(set);
    H5Sclose(space);
    H5Tclose(type);
  }

  /// Declares `rows` rows for an extendible (chunked) dataset without
  /// writing them: the header claims data the file does not hold.
  void extend(const std::string& path, std::vector<hsize_t> dims) {
    const hid_t set = H5Dopen2(file_, path.c_str(), H5P_DEFAULT);
    if (set < 0 || H5Dset_extent(set, dims.data()) < 0)
      throw std::runtime_error("cannot extend " + path);
    H5Dclose(set);
  }

  /// Replaces dataset `path` by a chunked dataset of doubles declaring
  /// `dims` (nothing written) and unlimited maximum dims.
  void declared_only(const std::string& path, const std::vector<hsize_t>& dims) {
    H5Ldelete(file_, path.c_str(), H5P_DEFAULT);
    const std::vector<hsize_t> unlimited(dims.size(), H5S_UNLIMITED), chunk(dims.size(), 1);
    const hid_t space = H5Screate_simple(int(dims.size()), dims.data(), unlimited.data());
    const hid_t plist = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(plist, int(chunk.size()), chunk.data());
    const hid_t set =
        H5Dcreate2(file_, path.c_str(), H5T_IEEE_F64LE, space, H5P_DEFAULT, plist, H5P_DEFAULT);
    if (set < 0) throw std::runtime_error("cannot create " + path);
    H5Dclose(set);
    H5Pclose(plist);
    H5Sclose(space);
  }

 private:
  static hid_t vlen_string() {
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    return type;
  }
  hid_t file_;
};

inline std::vector<char> file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

inline void put_bytes(const std::filesystem::path& path, const std::vector<char>& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(),
                                                                std::streamsize(bytes.size()));
}

/// Rewrites the stored size of the global-heap object holding the
/// variable-length string `text` (a string attribute's value) to `size`:
/// the damage that crashes or hangs libhdf5 1.10 when the string is read.
/// Layout (HDF5 file format spec, "Global Heap"): a collection starts with
/// "GCOL", version, 3 reserved bytes and its size (8 bytes); each object has
/// a 2-byte index, 2-byte reference count, 4 reserved bytes, an 8-byte size,
/// then its data padded to 8 bytes. Returns false if no object holds text.
inline bool damage_heap_string(const std::filesystem::path& path, const std::string& text,
                               std::uint64_t size) {
  std::vector<char> bytes = file_bytes(path);
  for (std::size_t at = 0; at + 16 <= bytes.size(); ++at) {
    if (std::memcmp(bytes.data() + at, "GCOL", 4) != 0) continue;
    std::uint64_t collection = 0;
    std::memcpy(&collection, bytes.data() + at + 8, 8);
    const std::size_t end = std::min(bytes.size(), std::size_t(at + collection));
    for (std::size_t object = at + 16; object + 16 <= end;) {
      std::uint16_t index = 0;
      std::uint64_t stored = 0;
      std::memcpy(&index, bytes.data() + object, 2);
      std::memcpy(&stored, bytes.data() + object + 8, 8);
      if (index == 0 || stored > end - object - 16) break;  // free space
      if (stored == text.size() && std::memcmp(bytes.data() + object + 16, text.data(), stored) == 0) {
        std::memcpy(bytes.data() + object + 8, &size, 8);
        put_bytes(path, bytes);
        return true;
      }
      object += 16 + (stored + 7) / 8 * 8;
    }
  }
  return false;
}

}  // namespace slaterlab::testing
