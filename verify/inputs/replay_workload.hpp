#pragma once
// The "replay" workload: a user's recorded initial matrix and moves
// (replay.hpp reads and validates the file; docs/replay.md).

#include <memory>

#include "verify/inputs/workload.hpp"

namespace slaterlab {

/// spec.file read with read_replay (so a bad file is reported when the
/// workload is built, before any run); spec.n must be the file's N. Moves are
/// served in file order, with the recorded decision and uniform when the
/// file has them. parameters(): file, n, moves_in_file, layout,
/// recorded_accept, recorded_uniform, content_fnv1a64 (a checksum of the
/// file's bytes, so that results name the exact data) and the metadata
/// attributes as "meta.<name>". Throws std::invalid_argument (one line).
std::unique_ptr<Workload> make_replay_workload(const WorkloadSpec& spec);

}  // namespace slaterlab
