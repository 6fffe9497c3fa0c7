#pragma once
// The .partial protocol's file-system steps (hdf5_store.hpp states the
// guarantees): require_unused refuses a .partial that a live run holds
// locked; sync_path makes a renamed file, then its directory entry,
// durable; directory_of is the directory a path's rename happens in. Each
// failure throws IoError naming the path. The public through_links,
// partial_path and check_output_path are defined beside them
// (partial_file.cpp). Internal to verify/store.

#include <filesystem>

namespace slaterlab::store_detail {

/// Makes the renamed file durable: its data, then the directory entry.
void sync_path(const std::filesystem::path& path, int flags);

/// A .partial left by a killed run may be replaced, but not one that a live
/// run is writing.
void require_unused(const std::filesystem::path& partial);

std::filesystem::path directory_of(const std::filesystem::path& path);

}  // namespace slaterlab::store_detail
