#include "verify/store/results_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "verify/store/results_layout.hpp"

namespace slaterlab::store_detail {

[[noreturn]] void throw_errno(std::string_view action, const fs::path& path, int error) {
  throw IoError(fmt::format("cannot {} {}: {}", action, path.string(), std::strerror(error)));
}

std::string file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

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

}  // namespace slaterlab::store_detail
