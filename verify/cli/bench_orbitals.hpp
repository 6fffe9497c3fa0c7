#pragma once
// Orbital-evaluation cases of `slaterlab bench` (registered by bench.cpp
// where a CUDA device is present): B-spline values, gradients and
// Laplacians of N harmonic-oscillator orbitals on the CPU
// (BsplineOrbitals<T>) and on the GPU (the same table, CudaBsplineOrbitals<T>),
// float and double, for a batch of all electrons of 32 walkers per call, in
// positions per second. Names: orbitals/<set label>/vgl/N:<N>, e.g.
// orbitals/bspline-float-cuda/vgl/N:220. The table is on a fixed 48^3 grid
// (the evaluation's cost does not depend on G beyond cache effects; the
// default grid of N = 220 would take 1.75 GiB in float), built once per
// (T, N) on first use. The GPU time includes copying the positions up and
// the results down, as the OrbitalSet interface does.

namespace slaterlab {

void register_orbital_benchmarks();

}  // namespace slaterlab
