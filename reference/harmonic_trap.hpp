#pragma once
// Exact results for the VMC model (docs/vmc.md): N spin-polarised fermions in
// the isotropic 3D trap V(r) = w^2 r^2 / 2 (hbar = m = 1), trial function the
// Slater determinant of the lowest N harmonic-oscillator orbitals of
// frequency alpha. Derived from the algebra of the oscillator alone (nothing
// from strategies/), so that it can judge the orbital and sampling code.
//
// What: the shells of the lowest N states; the local energy in closed form,
// E_L(R) = alpha S + (w^2 - alpha^2) R2 / 2 with S = sum_i (n_i + 3/2) and
// R2 = sum_j |r_j|^2; the variational energy E(alpha) = (alpha/2 +
// w^2/(2 alpha)) S (minimal, w S, and zero-variance at alpha = w); <R2> and
// Var(R2), hence Var(E_L).
// Preconditions and errors: each function states what it rejects with
// std::invalid_argument (N < 1, a non-positive frequency, ...). The energy,
// <R2> and E_L hold for any N; the variance depends on which degenerate
// states of an open shell are occupied, so the closed-shell overload rejects
// open N and the explicit-occupation overload takes the states.
// The derivation: harmonic_trap.cpp.

#include <Eigen/Core>

#include <array>
#include <vector>

namespace slaterlab::reference {

/// Quantum numbers (nx, ny, nz) of one oscillator state.
using OscillatorState = std::array<int, 3>;

/// Number of states in shells 0..k: (k+1)(k+2)(k+3)/6. Throws
/// std::invalid_argument for k < 0.
Eigen::Index trap_closed_shell_size(int k);

/// True when n >= 1 fills shells 0..k completely for some k.
bool is_closed_shell(Eigen::Index n);

/// Shell of state i (0-based) when states are filled shell by shell.
/// Throws std::invalid_argument for i < 0.
int trap_shell_of(Eigen::Index i);

/// S = sum_i (n_i + 3/2) over the lowest n states. Throws
/// std::invalid_argument for n < 1.
double trap_energy_sum(Eigen::Index n);

/// E(alpha) = (alpha/2 + w^2/(2 alpha)) S. Throws std::invalid_argument for
/// n < 1, or alpha or omega not finite and positive.
double exact_energy(Eigen::Index n, double alpha, double omega);

/// E_L = alpha S + (w^2 - alpha^2) sum_r2 / 2 at a configuration with
/// sum_j |r_j|^2 = sum_r2. Same argument checks as exact_energy.
double exact_local_energy(Eigen::Index n, double alpha, double omega, double sum_r2);

/// <sum_j |r_j|^2> = S / alpha.
double exact_r2_mean(Eigen::Index n, double alpha);

/// Var(sum_j |r_j|^2) for a closed shell n; throws std::invalid_argument for
/// an open shell (ambiguous) or bad arguments.
double exact_r2_variance(Eigen::Index n, double alpha);

/// Var(sum_j |r_j|^2) for the determinant of the given distinct states.
/// Throws std::invalid_argument for an empty list, negative or repeated
/// quantum numbers, or a bad alpha.
double exact_r2_variance(const std::vector<OscillatorState>& occupied, double alpha);

/// Var(E_L) = ((w^2 - alpha^2) / 2)^2 Var(R2) for a closed shell n.
double exact_local_energy_variance(Eigen::Index n, double alpha, double omega);

}  // namespace slaterlab::reference
