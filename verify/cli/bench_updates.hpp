#pragma once
// The update cases of slaterlab bench (bench.cpp's file comment): each
// strategy's walk of accepted column replacements at size N and precision
// p, timed in whole windows, with its counters against the limits
// (bench_limits.hpp) and against sm's rate at the same N and p, which is
// why sm registers first. Internal to verify/cli.

#include <Eigen/Core>

#include <string>

#include "slaterlab/strategies/determinant/precision.hpp"

namespace slaterlab::bench_detail {

/// Every (k, variant) a strategy's traits ask the benchmark to walk, at p.
void register_walks(const std::string& strategy, Eigen::Index n, Precision p);

/// The CPU strategies at size n and precision p, in registration order (the
/// baseline before the others, for vs_sm).
void register_updates(Eigen::Index n, Precision p);

/// Seconds of one sm-double move (ratio + accept) at n: this run's walk when
/// it ran, otherwise a walk of its own.
double sm_move_seconds(Eigen::Index n);

}  // namespace slaterlab::bench_detail
