#include "verify/store/partial_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>

#include "verify/store/hdf5_store.hpp"
#include "verify/store/results_file.hpp"

namespace slaterlab {

namespace fs = std::filesystem;

namespace store_detail {

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

}  // namespace store_detail

using namespace store_detail;

namespace {

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

}  // namespace slaterlab
