#pragma once
// The fields of the results records, listed once: visit_fields(record, f)
// calls f(Field, member) for each stored member of a record of
// verify/store/results.hpp, in stored order, with its unit and meaning.
// The HDF5 store builds its compound types, attributes and column
// descriptions from these lists; regress compares records' definitions
// over them, so a field added here is written, read and compared alike.
//
// Field::name is the C++ member's name (FIELD stringifies it), so a stored
// name cannot drift from the code. Field::optional marks a member added
// after files were written: absent on read, it keeps its default.
// A record passed as const gives const members. Members a list leaves out
// (ExperimentInfo's name and parameters, RunMetadata's config_toml, the
// strategies' provenance and named events) are stored by other means and
// named in a comment at their list.

#include <concepts>
#include <cstddef>
#include <type_traits>
#include <vector>

#include "verify/store/results.hpp"

namespace slaterlab {

struct Field {
  const char* name;
  const char* unit;
  const char* description;
  bool optional = false;  // added after files were written: absent on read keeps the default
};

#define FIELD(member, unit, description) f(Field{#member, unit, description}, r.member)
#define OPTIONAL_FIELD(member, unit, description) \
  f(Field{#member, unit, description, true}, r.member)

template <class R, class F>
  requires std::same_as<std::remove_const_t<R>, ReferenceCheckpoint>
void visit_fields(R& r, F&& f) {
  FIELD(move, "count", "proposals made so far");
  FIELD(accepted, "count", "proposals accepted so far");
  FIELD(log_det, "1", "log|det A| of the multiprecision reference, rounded to double");
  FIELD(sign, "1", "sign of det A (+1 or -1; 0 when A is singular to working precision)");
  FIELD(condition_1, "1", "1-norm condition number ||A||_1 ||A^-1||_1 (multiprecision inverse)");
  FIELD(ratio_condition_max, "1",
        "largest ratio condition number kappa_rho of the proposals since the last checkpoint");
  FIELD(elapsed_s, "s", "cumulative time spent in the reference");
  OPTIONAL_FIELD(cycles, "count", "update cycles applied so far");
}

// StrategyCheckpoint minus events (columns after these, one per event).
template <class R, class F>
  requires std::same_as<std::remove_const_t<R>, StrategyCheckpoint>
void visit_fields(R& r, F&& f) {
  FIELD(move, "count", "proposals made so far");
  FIELD(accepted, "count", "proposals accepted so far");
  FIELD(log_det_error, "1", "|log|det|_s - log|det|_ref| (= relative error of |det|)");
  FIELD(log_det_error_eps, "eps", "log_det_error in units of the strategy's machine epsilon");
  FIELD(sign_agrees, "bool", "1 if the sign of det matches the reference, else 0");
  FIELD(ratio_error_max, "1",
        "max |rho_s - rho_ref| / |rho_ref| over the proposals since the last checkpoint");
  FIELD(ratio_error_max_eps, "eps", "ratio_error_max in units of the strategy's epsilon");
  FIELD(ratio_error_rms, "1", "RMS relative ratio error since the last checkpoint");
  FIELD(ratio_error_normalised_max, "1",
        "max relative ratio error / (N eps kappa_rho) since the last checkpoint");
  FIELD(flips, "count",
        "accept/reject decisions differing from the reference since the last checkpoint");
  FIELD(inverse_residual_max, "1", "max_ij |(A Ainv - I)_ij| (NaN without an inverse)");
  FIELD(inverse_residual_fro, "1", "||A Ainv - I||_F / sqrt(N) (NaN without an inverse)");
  FIELD(inverse_divergence, "1", "||Ainv - Ainv_ref||_F / ||Ainv_ref||_F (NaN without an inverse)");
  FIELD(qr_residual, "1", "||Q R - A P||_F / ||A||_F (QR strategies, else NaN)");
  FIELD(orthogonality_loss, "1", "||Q^T Q - I||_F (QR strategies, else NaN)");
  FIELD(condition_estimate, "1", "||A||_1 ||Ainv_s||_1 from the strategy's own inverse");
  FIELD(breakdowns, "count", "updates classified as breakdowns so far (cumulative)");
  FIELD(recomputes, "count", "from-scratch refactorisations so far");
  FIELD(elapsed_s, "s", "cumulative CPU time inside the strategy's calls");
  OPTIONAL_FIELD(cycle_ratio_error_max, "1",
                 "max |rho_s - rho_ref| / |rho_ref| of the update cycles since the last checkpoint "
                 "(NaN: no cycle)");
  OPTIONAL_FIELD(cycle_ratio_error_max_eps, "eps", "cycle_ratio_error_max in units of epsilon");
  OPTIONAL_FIELD(cycle_breakdowns, "count", "update cycles reported as breakdowns so far");
  OPTIONAL_FIELD(singular_restarts, "count",
                 "restarts from the exact matrix after the strategy found it singular so far");
  OPTIONAL_FIELD(ratio_error_median, "1",
                 "median relative ratio error of the proposals since the last checkpoint "
                 "(NaN: none measured)");
}

// ExperimentInfo minus name (the group's name) and parameters ("param.*").
template <class R, class F>
  requires std::same_as<std::remove_const_t<R>, ExperimentInfo>
void visit_fields(R& r, F&& f) {
  FIELD(workload, "text", "workload kind (gaussian, randsvd, small-step, ...)");
  FIELD(n, "count", "matrix size N (electrons)");
  FIELD(moves, "count", "proposals per strategy");
  FIELD(checkpoint_every, "count", "proposals between checkpoints");
  FIELD(seed, "1", "random seed of the workload");
  FIELD(acceptance, "text", "\"metropolis\" or \"forced\"");
  FIELD(acceptance_rate, "1", "fraction of proposals accepted (forced acceptance)");
}

// StrategyInfo minus provenance (attributes of their own) and events (the
// checkpoint table's columns).
template <class R, class F>
  requires std::same_as<std::remove_const_t<R>, StrategyInfo>
void visit_fields(R& r, F&& f) {
  FIELD(label, "text", "unique label within the run, e.g. sm-float");
  FIELD(name, "text", "strategy kind: sm, delayed, qr-givens, recompute, splitting");
  FIELD(precision, "text", "float, double or mixed");
  FIELD(epsilon, "1", "machine epsilon of the storage precision");
  FIELD(recompute_every, "count", "accepted moves between from-scratch recomputes (0: never)");
  FIELD(breakdown, "1", "breakdown threshold on |ratio|");
  FIELD(k, "count", "delay rank K of delayed updates");
  FIELD(variant, "text", "strategy-specific variant");
}

// StrategySummary minus events (attributes after these, one per event).
template <class R, class F>
  requires std::same_as<std::remove_const_t<R>, StrategySummary>
void visit_fields(R& r, F&& f) {
  FIELD(worst_log_det_error, "1", "max over checkpoints of log_det_error");
  FIELD(final_log_det_error, "1", "log_det_error at the last checkpoint");
  FIELD(max_ratio_error, "1", "max relative ratio error over the run");
  FIELD(max_ratio_error_eps, "eps", "max_ratio_error in units of the strategy's epsilon");
  FIELD(max_ratio_error_normalised, "1", "max relative ratio error / (N eps kappa_rho)");
  FIELD(max_inverse_residual, "1", "max over checkpoints of inverse_residual_max");
  FIELD(final_inverse_divergence, "1", "inverse_divergence at the last checkpoint");
  FIELD(max_inverse_divergence, "1", "max over checkpoints of inverse_divergence");
  FIELD(max_qr_residual, "1", "max over checkpoints of qr_residual");
  FIELD(max_orthogonality_loss, "1", "max over checkpoints of orthogonality_loss");
  FIELD(sign_disagreements, "count", "checkpoints whose sign disagreed with the reference");
  FIELD(flips, "count", "decision flips over the run");
  FIELD(breakdowns, "count", "breakdowns over the run");
  FIELD(recomputes, "count", "from-scratch recomputes over the run");
  FIELD(elapsed_s, "s", "CPU time inside the strategy's calls");
  OPTIONAL_FIELD(max_cycle_ratio_error, "1", "max relative cycle-ratio error over the run (NaN: no cycle)");
  OPTIONAL_FIELD(max_cycle_ratio_error_eps, "eps", "max_cycle_ratio_error in units of epsilon");
  OPTIONAL_FIELD(cycle_breakdowns, "count", "update cycles reported as breakdowns over the run");
  OPTIONAL_FIELD(singular_restarts, "count",
                 "restarts from the exact matrix after the strategy found it singular");
  OPTIONAL_FIELD(cycles, "count", "update cycles of the experiment");
  OPTIONAL_FIELD(singular_checkpoints, "count",
                 "checkpoints where the matrix was singular to the reference's precision (det 0)");
  FIELD(failed, "bool", "1 if the strategy could not continue");
  FIELD(failure, "text", "why it could not continue (empty otherwise)");
}

template <class R, class F>
  requires std::same_as<std::remove_const_t<R>, CertifiedLogDet>
void visit_fields(R& r, F&& f) {
  FIELD(certified, "bool", "1 if Arb certified the enclosure at this precision");
  FIELD(log_abs_mid, "1", "midpoint of the ball enclosing log|det A|");
  FIELD(log_abs_radius, "1", "radius of that ball");
  FIELD(sign, "1", "certified sign of det A (0 if not certified)");
  FIELD(precision_bits, "bit", "working precision of the ball arithmetic");
  FIELD(mp_log_abs, "1", "the multiprecision reference's log|det A| for the same matrix");
  FIELD(mp_inside, "bool", "1 if mp_log_abs lies inside the ball");
  FIELD(message, "text", "why certification failed (empty otherwise)");
}

template <class R, class F>
  requires std::same_as<std::remove_const_t<R>, ReferenceEngineInfo>
void visit_fields(R& r, F&& f) {
  FIELD(engine, "text", "lockstep reference: mp, or fast (mp for the results it does not trust)");
  FIELD(fallbacks, "count", "fast: results taken from mp because the fast bound was too large");
}

// RunMetadata minus config_toml (the /config dataset).
template <class R, class F>
  requires std::same_as<std::remove_const_t<R>, RunMetadata>
void visit_fields(R& r, F&& f) {
  FIELD(tool_version, "text", "slaterlab version that wrote the file");
  FIELD(git_commit, "text", "source commit of that build");
  FIELD(created_utc, "text", "start of the run, ISO 8601 UTC");
  FIELD(host, "text", "host name");
  FIELD(command_line, "text", "the command line of the run");
}

template <class R, class F>
  requires std::same_as<std::remove_const_t<R>, VmcRunInfo>
void visit_fields(R& r, F&& f) {
  OPTIONAL_FIELD(system, "text", "harmonic-trap, electron-gas or molecule (absent: harmonic-trap)");
  FIELD(n, "count", "electrons N (trap); electrons per spin (electron gas); spin-up electrons (molecule)");
  OPTIONAL_FIELD(n_down, "count", "molecule: spin-down electrons (0 for the trap and the gas)");
  OPTIONAL_FIELD(spins, "count", "determinants sampled: 1, or 2 for the unpolarised gas and a molecule with both spins");
  OPTIONAL_FIELD(file, "text", "molecule: the wavefunction file, absolute (empty otherwise)");
  OPTIONAL_FIELD(source, "text", "molecule: the file's origin as it says, e.g. trexio (empty otherwise)");
  FIELD(alpha, "1", "frequency alpha of the trial orbitals (hbar = m = 1); 0 for the gas");
  FIELD(omega, "1", "trap frequency w (V = w^2 r^2 / 2); 0 for the gas");
  OPTIONAL_FIELD(rs, "bohr", "electron gas: Wigner-Seitz radius rs (0 for the trap)");
  OPTIONAL_FIELD(cell_length, "bohr", "electron gas: side L of the periodic cube (0 for the trap)");
  OPTIONAL_FIELD(interacting, "bool", "electron gas: 1 with the Ewald energy, 0 without (0 for the trap)");
  FIELD(orbitals, "text", "orbital set: analytic, bspline-double or bspline-float; double or float (molecule)");
  FIELD(grid, "count", "B-spline grid points per dimension (0 for analytic orbitals)");
  FIELD(scheme, "text", "sampling scheme: pbp, qs or qs-batched");
  FIELD(strategy, "text", "determinant strategy label, e.g. sm-double");
  FIELD(step, "length", "trial step: fixed, or the start of the tuning");
  FIELD(target_acceptance, "1", "acceptance the step was tuned to in equilibration (0: fixed step)");
  FIELD(walkers, "count", "independent walkers");
  FIELD(equilibration_sweeps, "count", "discarded sweeps per walker");
  FIELD(sweeps, "count", "measured sweeps per walker (one local energy each)");
  FIELD(seed, "1", "random seed of the run");
  FIELD(reference_run, "text", "run whose energy is the reference (independent streams), or empty");
}

template <class R, class F>
  requires std::same_as<std::remove_const_t<R>, VmcRunSummary>
void visit_fields(R& r, F&& f) {
  FIELD(exact_energy, "E", "exact energy: E(alpha) (trap), Hartree-Fock E_HF (electron gas), the study's or the file's (molecule)");
  OPTIONAL_FIELD(exact_kinetic, "E", "its kinetic part, exact");
  OPTIONAL_FIELD(kinetic, "E", "mean kinetic part of the local energy, -1/2 sum trace(A^-1 L)");
  OPTIONAL_FIELD(kinetic_error, "E", "its standard error (blocked)");
  OPTIONAL_FIELD(potential, "E", "mean potential part of the local energy (E_L - kinetic)");
  OPTIONAL_FIELD(potential_error, "E", "its standard error (blocked)");
  FIELD(energy, "E", "mean local energy over all walkers");
  FIELD(error, "E", "standard error of energy (blocking per walker, walkers combined)");
  FIELD(variance, "E^2", "variance of the local energy");
  FIELD(tau, "sweep", "integrated autocorrelation time (1/2 = uncorrelated)");
  FIELD(effective_samples, "count", "samples / (2 tau)");
  FIELD(samples, "count", "local-energy samples over all walkers");
  FIELD(walker_scatter_p, "1", "p-value of the chi^2 of the walker means (walker consistency)");
  FIELD(acceptance, "1", "fraction of proposals accepted in measured sweeps");
  FIELD(final_step, "length", "mean frozen trial step over walkers");
  FIELD(z_exact, "1", "|energy - exact_energy| / error");
  FIELD(detectable_bias_exact, "E", "3 error: the smallest bias the run could detect");
  FIELD(z_reference, "1", "z against reference_run (NaN without one)");
  FIELD(detectable_bias_reference, "E", "3 sqrt(error^2 + error_ref^2) (NaN without one)");
  FIELD(walkers_diverged, "count", "walkers whose decisions left the lockstep double reference");
  FIELD(divergence_sweep_median, "sweep", "median first divergent sweep over diverged walkers (NaN if none)");
  FIELD(divergence_sweep_min, "sweep", "earliest first divergent sweep, -1 if none");
  FIELD(max_energy_difference, "E", "max |E_L - E_L,ref| while in lockstep");
  FIELD(breakdowns, "count", "determinant breakdowns over all walkers");
  FIELD(failed_walkers, "count", "walkers whose strategy gave up");
  FIELD(elapsed_s, "s", "wall time of the run");
}

template <class R, class F>
  requires std::same_as<std::remove_const_t<R>, VmcWalkerRow>
void visit_fields(R& r, F&& f) {
  FIELD(walker, "count", "walker index");
  FIELD(stream, "1", "random stream id");
  FIELD(energy, "E", "mean local energy of the walker");
  FIELD(error, "E", "its blocked standard error");
  FIELD(tau, "sweep", "its integrated autocorrelation time");
  FIELD(acceptance, "1", "its acceptance in measured sweeps");
  FIELD(step, "length", "its frozen trial step");
  FIELD(divergence_sweep, "sweep", "first sweep whose decisions differ from the reference, -1 never");
  FIELD(divergence_move, "count", "first differing move (sweep * N + electron), -1 never");
  FIELD(expected_flips, "count", "sum of decision-flip probabilities while in lockstep");
  FIELD(max_ratio_difference, "1", "max relative ratio difference to the reference in lockstep");
  FIELD(max_energy_difference, "E", "max |E_L - E_L,ref| while in lockstep");
  FIELD(breakdowns, "count", "determinant breakdowns");
  FIELD(recomputes, "count", "determinant refactorisations");
  FIELD(failed, "bool", "1 if the strategy gave up");
}

template <class R, class F>
  requires std::same_as<std::remove_const_t<R>, BlockingRow>
void visit_fields(R& r, F&& f) {
  FIELD(level, "count", "blocking level k (blocks of 2^k sweeps)");
  FIELD(block_size, "sweep", "sweeps per block");
  FIELD(blocks, "count", "blocks per walker at this level");
  FIELD(error, "E", "standard error of the mean at this level, walkers combined");
  FIELD(error_uncertainty, "E", "statistical uncertainty of that error");
  FIELD(chosen, "bool", "1 at the level chosen by the automatic rule");
}

template <class R, class F>
  requires std::same_as<std::remove_const_t<R>, OrbitalAccuracyRecord>
void visit_fields(R& r, F&& f) {
  FIELD(orbitals, "text", "orbital set measured: bspline-double or bspline-float");
  FIELD(n, "count", "orbitals");
  FIELD(alpha, "1", "orbital frequency alpha");
  FIELD(grid, "count", "grid points per dimension");
  FIELD(samples, "count", "sample positions");
  FIELD(epsilon, "1", "machine epsilon of the set's precision");
  FIELD(value_max_abs, "1", "max |phi - phi_exact|");
  FIELD(value_rms_abs, "1", "RMS |phi - phi_exact|");
  FIELD(value_max_rel, "1", "value_max_abs / max |phi_exact|");
  FIELD(value_max_eps, "eps", "value_max_rel in units of epsilon");
  FIELD(gradient_max_abs, "1", "max |grad phi - grad phi_exact| (components)");
  FIELD(gradient_rms_abs, "1", "RMS of the gradient error");
  FIELD(gradient_max_rel, "1", "gradient_max_abs / max |grad phi_exact|");
  FIELD(gradient_max_eps, "eps", "gradient_max_rel in units of epsilon");
  FIELD(laplacian_max_abs, "1", "max |lap phi - lap phi_exact|");
  FIELD(laplacian_rms_abs, "1", "RMS of the Laplacian error");
  FIELD(laplacian_max_rel, "1", "laplacian_max_abs / max |lap phi_exact|");
  FIELD(laplacian_max_eps, "eps", "laplacian_max_rel in units of epsilon");
}

#undef FIELD
#undef OPTIONAL_FIELD

/// Calls f(field, a_member, b_member) for each field of two records of the
/// same type, in stored order.
template <class R, class F>
void visit_field_pairs(const R& a, const R& b, F&& f) {
  std::vector<const void*> b_members;
  visit_fields(b, [&](const Field&, const auto& member) { b_members.push_back(&member); });
  std::size_t i = 0;
  visit_fields(a, [&](const Field& field, const auto& member) {
    using Member = std::remove_cvref_t<decltype(member)>;
    f(field, member, *static_cast<const Member*>(b_members[i++]));
  });
}

}  // namespace slaterlab
