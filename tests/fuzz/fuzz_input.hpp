#pragma once
// Fuzz bytes decoded into choices, and hostile HDF5 objects built from them.
//
// The HDF5 fuzz targets are structure-aware: libhdf5 1.10 has many crash
// bugs of its own on damaged bytes (a byte-level mutation of a file mostly
// finds those), so the bytes choose what a well-formed HDF5 file declares
// (object kind, type class, rank, dims, values, a size it never stores) and
// the HDF5 API writes it; any crash or unexpected exception is then a bug
// of our reader. Byte-level damage is exercised through the child-process
// defence (verify/store/isolated.hpp) instead.

#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace slaterlab::fuzz {

/// Reads choices from the fuzz bytes; past the end every read gives 0.
class FuzzInput {
 public:
  FuzzInput(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t byte() { return at_ < size_ ? data_[at_++] : 0; }
  std::uint64_t u64() {
    std::uint64_t value = 0;
    for (int i = 0; i < 8; ++i) value = value << 8 | byte();
    return value;
  }
  bool empty() const { return at_ >= size_; }
  std::size_t left() const { return size_ - std::min(at_, size_); }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

/// Where a hostile object goes: an attribute `name` of the object at
/// `parent`, or the dataset `parent`/`name`.
struct Slot {
  std::string parent;
  std::string name;
  bool attribute = true;
};

/// Every attribute and dataset of a file (the slots a mutation may replace).
std::vector<Slot> slots_of(hid_t file);

/// Replaces (or deletes, or adds) the object at slot with one decoded from
/// in: a type (integers and floats of each width, variable-length and fixed
/// strings, an enum, a compound), a rank of 0 to 3 with small dims, values
/// from the bytes; for datasets also chunked and deflated storage, or an
/// extent declared up to 2^64 and never written. HDF5 refusing a choice is
/// not a finding: the object is then left out.
void replace(hid_t file, const Slot& slot, FuzzInput& in);

/// The bytes of a file; writes bytes to a file.
std::vector<std::uint8_t> read_bytes(const std::filesystem::path& path);
void write_bytes(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes);

/// A scratch file path of this process for a target, removed at its exit.
std::filesystem::path scratch_file(const std::string& target);

/// Applies byte-level damage decoded from in (offset, xor value pairs).
void damage_bytes(std::vector<std::uint8_t>& file, FuzzInput& in);

/// Writes the template file `bytes` to path, mutated as in decides: one
/// input in four byte-level damage (damage_bytes; returns true), otherwise
/// 1 to 4 of its slots replaced through the HDF5 API (replace; false).
bool write_mutated(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes,
                   const std::vector<Slot>& slots, FuzzInput& in);

}  // namespace slaterlab::fuzz
