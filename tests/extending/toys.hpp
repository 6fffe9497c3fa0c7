#pragma once
// Three extensions of slaterlab written as a user writes them, outside its
// libraries: a determinant-update strategy (toy_strategy.cpp), a workload
// kind (toy_workload.cpp) and an orbital set (toy_orbitals.cpp), each one
// file and one registration call. docs/extending.md walks through them;
// extending_test.cpp runs them through run, regress, fuzz, bench and table.
// Register each once per process, before any run (the registries are not
// thread-safe); a second call is std::invalid_argument (the name is taken).

namespace slaterlab::toys {

/// "toy-refresh": Sherman-Morrison on a double inverse that refreshes the
/// inverse from the exact matrix every `k` accepted moves, counting each
/// refresh as the named event "refreshes".
void register_toy_strategy();

/// "toy-shift": A = I + delta G / sqrt(N), each move replacing column k
/// (in sweep order) by e_k + delta g / sqrt(N) (G, g standard normal).
void register_toy_workload();

/// "toy-rounded": the system's analytic orbitals with every value, gradient
/// and Laplacian rounded to float.
void register_toy_orbitals();

}  // namespace slaterlab::toys
