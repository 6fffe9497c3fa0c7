#pragma once
// Exact results for the VMC model of DESIGN.md: N spin-polarised fermions in
// the isotropic 3D trap V(r) = w^2 r^2 / 2 (hbar = m = 1), trial function the
// Slater determinant of the lowest N harmonic-oscillator orbitals of
// frequency alpha. Derived here from the algebra of the oscillator alone
// (nothing from strategies/), so it can judge the orbital and sampling code.
//
// Shells. The oscillator states (nx, ny, nz) of shell n = nx + ny + nz have
// energy alpha (n + 3/2); shell n holds (n+1)(n+2)/2 states. The lowest N
// states fill the shells in order, so the shell of state i (0-based) follows
// by counting. Closed shells: N = (K+1)(K+2)(K+3)/6 = 1, 4, 10, 20, 35, ...
//
// Local energy in closed form. Every orbital obeys
//   -1/2 lap phi_i = (alpha (n_i + 3/2) - alpha^2 r^2 / 2) phi_i,
// and the determinant is linear in each column, so
//   sum_j lap_j Psi / Psi = sum_j sum_i Ainv(j, i) lap phi_i(r_j)
//                         = sum_i 2 alpha (n_i + 3/2) - alpha^2 R2,
// with R2 = sum_j |r_j|^2 (the alpha^2 r_j^2 terms sum with (Ainv A)(j,j) = 1,
// the eigenvalue terms with (A Ainv)(i,i) = 1). Hence, with S = sum_i (n_i + 3/2),
//   E_L(R) = alpha S + (w^2 - alpha^2) R2 / 2             (exact_local_energy)
// is a function of R2 alone; for alpha = w it is the constant w S.
//
// Moments of R2 under |Psi|^2 (a one-body operator in a Slater determinant
// of orthonormal orbitals). With x = (a + a^+) / sqrt(2 alpha) per axis,
//   r^2 = sum_d (2 n_d + 1) / (2 alpha) + (a_d^2 + a_d^+2) / (2 alpha):
//   <R2>     = sum_i <i|r^2|i> = S / alpha,
//   Var(R2)  = sum_{i occupied} sum_{p empty} |<p|r^2|i>|^2
// (the occupied-occupied part cancels against the exchange term), where r^2
// links i only to the states two quanta up or down along one axis:
//   |<n_d + 2|r^2|n_d>|^2 = (n_d + 1)(n_d + 2) / (4 alpha^2),
//   |<n_d - 2|r^2|n_d>|^2 = n_d (n_d - 1) / (4 alpha^2).
// For a closed shell only the upward links of the top two shells leave the
// occupied set. Then
//   E(alpha)     = <E_L> = (alpha/2 + w^2/(2 alpha)) S,
//   Var(E_L)     = ((w^2 - alpha^2) / 2)^2 Var(R2),
// minimal (E = w S) and zero-variance at alpha = w. Check, N = 1: <r^2> =
// 3 / (2 alpha), Var(r^2) = 3 / (2 alpha^2), the moments of a Gaussian of
// variance 1/(2 alpha) per axis.
//
// Open shells. The energy, <R2> and E_L depend only on the shells, so they
// hold for any N. The variance depends on which degenerate states of the
// last shell are occupied; the closed-shell overload rejects open N and the
// explicit-occupation overload takes the states.

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
