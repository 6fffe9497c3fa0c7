#pragma once
// Opening an existing results file and the IoErrors its failures become:
// open_file refuses, with the reason, a path that is missing, a directory,
// not a regular file, unreadable or not HDF5; require_schema one whose
// schema_version is not this build's; in_file turns an h5::Failure inside
// the file into IoError naming the file; throw_errno an errno. Internal to
// verify/store.

#include <sys/types.h>

#include <fmt/format.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "verify/store/hdf5_handle.hpp"
#include "verify/store/hdf5_store.hpp"

namespace slaterlab::store_detail {

namespace fs = std::filesystem;
using h5::Handle;

[[noreturn]] void throw_errno(std::string_view action, const fs::path& path, int error);

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
std::string file_kind(mode_t mode);

/// Opens an existing file; the message says why it is not readable.
Handle open_file(const fs::path& path, unsigned flags, std::string_view action);

/// Throws unless the file's root carries schema_version == kSchemaVersion.
void require_schema(hid_t file, const fs::path& path, std::string_view action);

/// The file's schema_version, nullopt where it has none.
std::optional<int> read_schema_version_here(const fs::path& path);

}  // namespace slaterlab::store_detail
