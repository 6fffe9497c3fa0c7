#pragma once
// The fast reference's cases of `slaterlab bench` (registered by bench.cpp),
// in the units its cost goals are stated in (docs/fast-reference.md):
// - reference/fast-reset/N:1024        a reset (double LU, inverse, dd log|det|)
//                                      in double LUs (cost_vs_lu)
// - reference/certified-log-det-blas/N:1024  certified_log_det_blas in double LUs,
//                                      with the bits it proves (certified_bits)
// - reference/fast-inverse/N:1024      the refined checkpoint inverse, in double LUs
// - reference/fast-move/N:{1024,2048}  one ratio + accept, in sm-double moves (vs_sm_move)
// - reference/checkpoint-metrics/N:{1024,2048}  one strategy's checkpoint metrics
//                                      (verify/run/metrics.hpp) in double LUs and in
//                                      N sm-double moves, the shared pivot's in LUs
// - reference/whole-study/N:{1024,2048}  `slaterlab run` of the cost goal's study (sm
//                                      double and mixed, delayed-64 double, one
//                                      Metropolis sweep) as a process: its wall time
//                                      over the strategies' own (vs_strategies;
//                                      its CPU time over theirs: cpu_vs_strategies)
// - reference/whole-study-default/N:1024  the same study (seed 3) with the
//                                      default [reference]: engine auto, the
//                                      certified initial and final log|det|
// Each also reports whether its results were trusted (fast_reference.hpp).

#include <Eigen/Core>

#include <functional>

namespace slaterlab {

struct ReferenceBenchUnits {
  std::function<double(Eigen::Index)> lu_seconds;       ///< one LAPACK dgetrf at N
  std::function<double(Eigen::Index)> sm_move_seconds;  ///< one sm-double ratio + accept at N
  std::function<double()> cpu_seconds;                  ///< the thread's CPU clock
  double seconds_per_case = 0.3;
};

void register_fast_reference_benchmarks(const ReferenceBenchUnits& units);

}  // namespace slaterlab
