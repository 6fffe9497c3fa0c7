#pragma once
// Orbital-evaluation cases of `slaterlab bench`: B-spline values, gradients
// and Laplacians of a batch of positions on the CPU (BsplineOrbitals<T>) and
// on the GPU (the same table, CudaBsplineOrbitals<T>), float and double, in
// positions per second (items_per_second). The GPU time includes copying the
// positions up and the results down, as the OrbitalSet interface does.
//
// - register_orbital_benchmarks (where a CUDA device is present): N = 56, 220
//   harmonic-oscillator orbitals, all electrons of 32 walkers per call, named
//   orbitals/bspline-<p>[-cuda]/vgl/N:<N>. The table is on a fixed 48^3 grid
//   (the evaluation's cost does not depend on G beyond cache effects; the
//   default grid of N = 220 would take 1.75 GiB in float), built once per
//   (T, N) on first use.
// - register_registered_orbital_benchmarks (always): every registered set
//   that asks for it (OrbitalSetKind::benchmarked, verify/inputs/
//   orbital_registry.hpp), built through the registry from N = 56 and 220
//   harmonic-oscillator orbitals on the box of a 48^3 grid, the trap's
//   positions, named orbitals/<name>/vgl/N:<N>.
// - register_gas_orbital_benchmarks (always; the -cuda cases where a device
//   is present): the electron gas's closed shells nearest 256, 512, 1024 and
//   2048 orbitals (257, 515, 1021, 2007) on the grid of gas_bspline_box, or
//   the largest grid whose build fits 3 GiB where the rule's would not
//   (counters G and G_rule, and a label, say so), 1024 positions uniform in
//   the cell per call, named orbitals/gas-bspline-<p>[-cuda]/vgl/N:<N>.
//   Counters: bytes_per_position (the stencil's 64 rows of Npad T's),
//   bytes_per_s and, on the CPU, of_bandwidth (over memory_bandwidth).
//   One table is held at a time (the largest takes 2.2 GiB). With them,
//   orbitals/gas-analytic/vgl/N:<N>, the analytic orbitals (ElectronGasOrbitals)
//   on the same positions.
// docs/benchmarks.md describes the cases and the measured rates.

#include <functional>

namespace slaterlab {

void register_orbital_benchmarks();

void register_registered_orbital_benchmarks();

/// memory_bandwidth: the run's measured bytes/s (the triad probe), called
/// when a CPU case ends. The cases run for Google Benchmark's minimum time
/// (--benchmark_min_time), as the trap's, not --seconds.
void register_gas_orbital_benchmarks(const std::function<double()>& memory_bandwidth,
                                     bool on_device);

}  // namespace slaterlab
