#include "tests/fuzz/fuzz_input.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string_view>
#include <system_error>
#include <vector>

namespace slaterlab::fuzz {

namespace {

herr_t collect_attribute(hid_t, const char* name, const H5A_info_t*, void* data) {
  auto* out = static_cast<std::pair<std::string, std::vector<Slot>*>*>(data);
  out->second->push_back({out->first, name, true});
  return 0;
}

herr_t collect_object(hid_t root, const char* name, const H5O_info_t* info, void* data) {
  auto* slots = static_cast<std::vector<Slot>*>(data);
  std::string path = "/";
  if (std::string_view(name) != ".") path += name;
  if (info->type == H5O_TYPE_DATASET) {
    const auto cut = path.find_last_of('/');
    slots->push_back({cut == 0 ? "/" : path.substr(0, cut), path.substr(cut + 1), false});
  }
  std::pair<std::string, std::vector<Slot>*> context{path, slots};
  hsize_t next = 0;
  H5Aiterate_by_name(root, name, H5_INDEX_NAME, H5_ITER_INC, &next, collect_attribute, &context,
                     H5P_DEFAULT);
  return 0;
}

/// One type decoded from a byte (the caller closes it).
hid_t decoded_type(FuzzInput& in) {
  switch (in.byte() % 11) {
    case 0: return H5Tcopy(H5T_NATIVE_INT8);
    case 1: return H5Tcopy(H5T_NATIVE_INT32);
    case 2: return H5Tcopy(H5T_NATIVE_INT64);
    case 3: return H5Tcopy(H5T_NATIVE_UINT64);
    case 4: return H5Tcopy(H5T_NATIVE_FLOAT);
    case 5: return H5Tcopy(H5T_NATIVE_DOUBLE);
    case 6: {
      const hid_t type = H5Tcopy(H5T_C_S1);
      H5Tset_size(type, H5T_VARIABLE);
      H5Tset_cset(type, in.byte() % 2 ? H5T_CSET_UTF8 : H5T_CSET_ASCII);
      return type;
    }
    case 7: {
      const hid_t type = H5Tcopy(H5T_C_S1);
      H5Tset_size(type, 1 + in.byte() % 64);
      return type;
    }
    case 8: {
      const hid_t type = H5Tenum_create(H5T_NATIVE_INT8);
      std::int8_t no = 0, yes = 1;
      H5Tenum_insert(type, "FALSE", &no);
      H5Tenum_insert(type, "TRUE", &yes);
      return type;
    }
    case 9: {  // a compound with a member name that a reader may look up
      const hid_t type = H5Tcreate(H5T_COMPOUND, 16);
      const char* names[] = {"move", "walker", "level", "energy", "x"};
      H5Tinsert(type, names[in.byte() % 5], 0, H5T_NATIVE_INT64);
      H5Tinsert(type, names[in.byte() % 5 == 0 ? 4 : 3], 8, H5T_NATIVE_DOUBLE);
      return type;
    }
    default: return H5Tcopy(H5T_STD_I16BE);  // a non-native byte order
  }
}

/// Element values for `count` elements of `type` from the fuzz bytes.
struct Values {
  std::vector<std::uint8_t> raw;
  std::vector<std::string> strings;  // variable-length strings
  std::vector<const char*> pointers;
};

Values decoded_values(hid_t type, std::size_t count, FuzzInput& in) {
  Values v;
  if (H5Tis_variable_str(type) > 0) {
    for (std::size_t i = 0; i < count; ++i) {
      std::string s(in.byte() % 24, 'x');
      for (char& c : s) c = char(in.byte());
      v.strings.push_back(s);
    }
    for (const auto& s : v.strings) v.pointers.push_back(s.c_str());
    return v;
  }
  v.raw.resize(count * H5Tget_size(type));
  for (auto& b : v.raw) b = in.byte();
  return v;
}

}  // namespace

std::vector<Slot> slots_of(hid_t file) {
  std::vector<Slot> slots;
  H5Ovisit(file, H5_INDEX_NAME, H5_ITER_INC, collect_object, &slots);
  return slots;
}

void replace(hid_t file, const Slot& slot, FuzzInput& in) {
  const hid_t parent = H5Oopen(file, slot.parent.c_str(), H5P_DEFAULT);
  if (parent < 0) return;
  const int kind = in.byte() % 8;
  if (slot.attribute) {
    if (H5Aexists(parent, slot.name.c_str()) > 0) H5Adelete(parent, slot.name.c_str());
  } else if (H5Lexists(parent, slot.name.c_str(), H5P_DEFAULT) > 0) {
    H5Ldelete(parent, slot.name.c_str(), H5P_DEFAULT);
  }
  if (kind == 0) {  // left deleted
    H5Oclose(parent);
    return;
  }
  const hid_t type = decoded_type(in);
  const int rank = in.byte() % 4;
  const bool declared_only = !slot.attribute && kind == 7;
  hsize_t dims[3] = {0, 0, 0};
  std::size_t count = 1;
  for (int i = 0; i < rank; ++i) {
    dims[i] = declared_only ? in.u64() >> (in.byte() % 64) : in.byte() % 7;
    count *= declared_only ? 1 : std::size_t(dims[i]);
  }
  const hsize_t unlimited[3] = {H5S_UNLIMITED, H5S_UNLIMITED, H5S_UNLIMITED};
  const hid_t space = rank == 0 ? H5Screate(H5S_SCALAR)
                                : H5Screate_simple(rank, dims, declared_only || kind == 6
                                                                   ? unlimited
                                                                   : nullptr);
  const Values values = declared_only ? Values{} : decoded_values(type, count, in);
  const void* buffer = values.pointers.empty() ? static_cast<const void*>(values.raw.data())
                                               : static_cast<const void*>(values.pointers.data());
  if (slot.attribute) {
    const hid_t attr =
        H5Acreate2(parent, slot.name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT);
    if (attr >= 0) {
      if (count > 0) H5Awrite(attr, type, buffer);
      H5Aclose(attr);
    }
  } else {
    const hid_t plist = H5Pcreate(H5P_DATASET_CREATE);
    if (rank > 0 && (declared_only || kind >= 5)) {
      const hsize_t chunk[3] = {1 + in.byte() % 4u, 1 + in.byte() % 4u, 1 + in.byte() % 4u};
      H5Pset_chunk(plist, rank, chunk);
      if (kind == 5) H5Pset_deflate(plist, 1);
    }
    const hid_t set =
        H5Dcreate2(parent, slot.name.c_str(), type, space, H5P_DEFAULT, plist, H5P_DEFAULT);
    if (set >= 0) {
      if (!declared_only && count > 0)
        H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer);
      H5Dclose(set);
    }
    H5Pclose(plist);
  }
  H5Sclose(space);
  H5Tclose(type);
  H5Oclose(parent);
  H5Eclear2(H5E_DEFAULT);
}

std::vector<std::uint8_t> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_bytes(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

std::filesystem::path scratch_file(const std::string& target) {
  // Removed when the process exits (libFuzzer ends a run with exit()); a
  // crash leaves them, next to its finding.
  struct Removed {
    std::vector<std::filesystem::path> paths;
    ~Removed() {
      for (const auto& path : paths) {
        std::error_code ignored;
        std::filesystem::remove(path, ignored);
      }
    }
  };
  static Removed at_exit;
  auto path = std::filesystem::temp_directory_path() /
              ("slaterlab-fuzz-" + target + "-" + std::to_string(::getpid()) + ".h5");
  at_exit.paths.push_back(path);
  return path;
}

void damage_bytes(std::vector<std::uint8_t>& file, FuzzInput& in) {
  if (file.empty()) return;
  while (in.left() >= 5) {
    const std::uint32_t offset = std::uint32_t(in.byte()) << 24 | std::uint32_t(in.byte()) << 16 |
                                 std::uint32_t(in.byte()) << 8 | in.byte();
    file[offset % file.size()] ^= in.byte();
  }
}

bool write_mutated(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes,
                   const std::vector<Slot>& slots, FuzzInput& in) {
  const bool byte_level = in.byte() % 4 == 0;
  if (byte_level) {
    std::vector<std::uint8_t> damaged = bytes;
    damage_bytes(damaged, in);
    write_bytes(path, damaged);
    return true;
  }
  write_bytes(path, bytes);
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  if (file < 0) __builtin_trap();  // the template itself must open
  for (int n = 1 + in.byte() % 4; n > 0 && !in.empty(); --n) {
    const std::size_t pick = (std::size_t(in.byte()) << 8 | in.byte()) % slots.size();
    replace(file, slots[pick], in);
  }
  H5Fclose(file);
  return false;
}

}  // namespace slaterlab::fuzz
