#pragma once
// Which orbital sets a VMC run or a walk workload may name (`orbitals =
// "..."`) and how one is built: the built-in sets ("analytic", the system's
// own orbitals; "bspline-double" and "bspline-float", tricubic B-splines of
// them; their "-cuda" tables on a GPU) and those a user registers. A new set
// is one file holding its OrbitalSet class and a factory, plus one
// register_orbital_set() call (docs/extending.md); VMC runs, the
// electron-gas workload, the plan and the orbital accuracy table then take
// it like any other.
//
// Every set is built from the system's analytic orbitals (the harmonic
// oscillator's or the electron gas's plane waves), which it approximates or
// wraps, on the box the system's B-spline rule gives: OrbitalSource.
// Errors: std::invalid_argument with one line naming the bad value (an
// unknown name lists the valid ones). Not thread-safe: register before
// running.

#include <Eigen/Core>

#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "slaterlab/strategies/orbitals/bspline.hpp"
#include "slaterlab/strategies/orbitals/orbital_set.hpp"

namespace slaterlab {

/// What a set is built from.
struct OrbitalSource {
  /// The system's analytic orbitals, exact; a set may keep a share of them.
  std::shared_ptr<const OrbitalSet> exact;
  /// The box and grid the system's rule gives for the study's `grid` key
  /// (0: the rule's own grid): where a gridded set tabulates.
  BsplineBox box;
};

/// Builds a set; it may throw std::invalid_argument naming what it refuses.
using OrbitalFactory = std::function<std::shared_ptr<const OrbitalSet>(const OrbitalSource&)>;

struct OrbitalSetKind {
  std::string name;
  OrbitalFactory make{};
  /// It tabulates on OrbitalSource::box: the `grid` key applies, the
  /// results record that grid, and runs with the same grid share one set.
  bool gridded = false;
  /// The peak bytes of building it for n orbitals on a grid (the plan's
  /// memory model); may be empty: nothing beyond the exact set.
  std::function<double(Eigen::Index grid, Eigen::Index n)> build_bytes{};
  /// Why it cannot be used here, one line (a GPU set without a device), or
  /// nullopt; may be empty: always usable.
  std::function<std::optional<std::string>()> unavailable{};
  /// It can drive a walk workload (the electron gas's), whose moves are
  /// evaluated one position at a time on the CPU; false for GPU sets.
  bool walks = true;
  /// The machine epsilon of the precision it computes in: the unit of the
  /// orbital accuracy table's "eps" columns.
  double epsilon = std::numeric_limits<double>::epsilon();
  /// `slaterlab bench` measures it: orbitals/<name>/vgl/N:<N>, built here
  /// from harmonic-oscillator orbitals (the built-in sets have cases of
  /// their own, bench_orbitals.hpp).
  bool benchmarked = false;
};

/// The name of the system's own orbitals, which every other set is measured
/// against (the orbital accuracy table) and which a run's divergence twin uses.
inline constexpr const char* kAnalyticOrbitals = "analytic";

/// Adds a set after the built-in ones. Throws std::invalid_argument for an
/// empty or taken name or an empty factory.
void register_orbital_set(OrbitalSetKind kind);

/// Every name, in a stable order (the built-in ones first), also of sets
/// that cannot be used here (orbital_set_unusable says why).
std::vector<std::string> known_orbital_sets();

/// The named kind; std::invalid_argument "unknown orbitals 'x' (did you mean
/// ...?)" for a name not registered.
const OrbitalSetKind& orbital_set_kind(const std::string& name);

/// Why the named set cannot be used here, or nullopt (also for an unknown
/// name, which orbital_set_kind refuses).
std::optional<std::string> orbital_set_unusable(const std::string& name);

/// Builds the named set from `source` (orbital_set_kind's errors, the
/// factory's, and orbital_set_unusable's reason as std::invalid_argument).
std::shared_ptr<const OrbitalSet> make_orbital_set(const std::string& name,
                                                   const OrbitalSource& source);

}  // namespace slaterlab
