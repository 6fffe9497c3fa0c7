#pragma once
// Delayed (rank-K) Sherman-Morrison-Woodbury updates (seed 004, McDaniel et
// al.), with an O(N m + m^2) look-ahead.
//
// State. Ainv = A0^{-1}, the inverse of the matrix A0 at the last flush (or
// refactorisation), stored TRANSPOSED so that a row of Ainv is a contiguous
// column. The window holds the m < K moves accepted since then:
//   U = [u_1 .. u_m] (N x m),  u_i = a'_i - (column k_i as it stood when move i
//                                            was proposed, earlier moves of the
//                                            window included),
//   V = [e_k1 .. e_km],
// so the current matrix is exactly A = A0 + U V^T, also when one electron
// moves several times inside the window (V then holds e_k several times and
// each u is taken against the column that already contains the earlier ones).
// Woodbury gives the current inverse
//   A^{-1} = Ainv - (Ainv U) B^{-1} (V^T Ainv),   B = I_m + V^T Ainv U.
// Stored besides Ainv: U, W = (V^T Ainv)^T (the m rows of Ainv the window
// touches, N x m) and B^{-1} (incremental) or B (naive), all preallocated at
// reset for m up to K (memory O(N K + K^2)).
//
// Ratio for a proposal (k, a'), with u = a' - a_k (a_k the current column) and
// r = Ainv^T e_k (row k of Ainv):
//   b = W^T u (= V^T Ainv u),  c = U^T r (= (e_k^T Ainv U)^T),  d = 1 + r^T u,
//   B' = [[B, b], [c^T, d]]  is the B of the window extended by this move, and
//   rho = det(A') / det(A) = det(B') / det(B) = d - c^T B^{-1} b.
// This is DESIGN.md's rho = e_k^T Ainv a' - (e_k^T Ainv U) B^{-1} (V^T Ainv a')
// rewritten with a' = a_k + u and A^{-1} a_k = e_k. The u-form is used because
// rho is then exactly the Schur-complement pivot by which B^{-1} is bordered
// on accept (ratio, B^{-1} and det B stay mutually consistent), the accept
// needs no further O(N m) product, and an unchanged column gives rho = 1.
//   - incremental (default): rho = d - c^T (B^{-1} b). Per proposal: two
//     O(N m) GEMVs (b, c), O(N) for u, r, d and O(m^2) for B^{-1} b; no O(N^2)
//     work. Accept: B^{-1} grows by bordering,
//       B'^{-1} = [[B^{-1} + t q^T / rho, -t / rho], [-q^T / rho, 1 / rho]],
//       t = B^{-1} b, q^T = c^T B^{-1},
//     O(m^2) plus O(N) copies of u and r into U and W.
//   - naive (the paper's look-ahead): rho = det(B') / det(B) with det(B') from
//     a fresh LU of the (m+1) x (m+1) bordered matrix per proposal (O(m^3)),
//     det(B) kept from the accepted one. Same rho to rounding; its cost and
//     its rounding (a ratio of two log-determinants) grow with m.
// Flush (after K accepted moves, or on flush()): two BLAS-3 GEMMs,
//   Y = Ainv U (N x m, N x N x m),  Z = W B^{-T} (N x m, N x m x m),
//   Ainv^T <- Ainv^T - Z Y^T  (N x N x m),   about 4 N^2 K flops per K moves.
// Rejected moves store nothing and do not flush.
//
// log_det accumulates log|rho| and the sign per accepted move (as sm); a
// refactorisation (reset, the recompute_every cadence, an accepted
// breakdown) takes the LU value and discards the window (the exact current
// matrix already contains it). maintained() forms A^{-1} = Ainv - Y Z^T on
// the side, with the same GEMMs a flush would run, and changes no state.
//
// Precision (Storage is the N x N inverse, Look the look-ahead):
//   - double: Storage = Look = double.
//   - float:  Storage = Look = float, everything in float.
//   - mixed:  Storage = float, Look = double. Refactorisations are done in
//     double and rounded to float (as sm). Everything the look-ahead touches
//     is double: u = a' - a_k is formed from the exact data without rounding,
//     r and W are exact double copies of float rows, U, B^{-1} (or B), the
//     bordering and every dot product / GEMV of the ratio run in double. The
//     flush GEMMs run in float on U and Z rounded to float.

#include <memory>
#include <vector>

#include "strategies/determinant/linalg.hpp"
#include "strategies/determinant/updater_base.hpp"

namespace slaterlab {

enum class DelayedVariant { incremental, naive };

/// Parses options.variant for delayed updates: "" or "incremental", "naive".
/// Throws std::invalid_argument naming the bad value otherwise.
DelayedVariant parse_delayed_variant(const std::string& text);

template <class Storage, class Look>
class DelayedUpdate final : public UpdaterBase {
 public:
  explicit DelayedUpdate(UpdaterOptions options);

  /// "delayed-<K>-<precision>", suffixed "-naive" for the naive look-ahead.
  std::string label() const override;
  void reset(const Eigen::MatrixXd& a) override;
  Ratio ratio(Eigen::Index k, const Eigen::VectorXd& new_column) override;
  void accept() override;
  void reject() override;
  void flush() override;
  LogDet log_det() const override { return log_det_; }
  MaintainedState maintained() const override;

  DelayedVariant variant() const { return variant_; }
  /// Accepted moves waiting in the window (0 right after a flush).
  Eigen::Index pending_moves() const { return m_; }

 private:
  /// Scratch for the Woodbury correction; flush() owns one, maintained()
  /// makes its own so that observing changes nothing.
  struct CorrectionWork {
    MatrixX<Storage> y;        // Ainv U, N x m
    MatrixX<Look> z;           // W B^{-T}, N x m
    MatrixX<Storage> z_store;  // Z rounded to Storage (mixed only)
    MatrixX<Storage> u_store;  // U rounded to Storage (mixed only)
    MatrixX<Look> window_inverse;  // B^{-1} for the naive variant
  };

  void refactorise();
  double incremental_ratio();
  double naive_ratio();
  void border_inverse();
  void border_matrix();
  void apply_window();
  /// ainvt <- ainvt - Z Y^T for the current window (m_ > 0).
  void correct(MatrixX<Storage>& ainvt, CorrectionWork& work) const;
  Eigen::Index capacity() const { return Eigen::Index(options().k); }

  DelayedVariant variant_;
  MatrixX<Storage> ainvt_;  // Ainv^T at the last flush, N x N
  LogDet log_det_;
  Eigen::Index m_ = 0;      // accepted moves in the window

  // Window, preallocated N x K and K x K (leading dimensions N and K).
  MatrixX<Look> u_;     // U
  MatrixX<Look> w_;     // W = (V^T Ainv)^T
  MatrixX<Look> binv_;  // B^{-1} (incremental)
  MatrixX<Look> b_;     // B (naive)
  LogDet log_det_b_;    // log|det B| and sign (naive)

  // The pending proposal's look-ahead quantities (valid between ratio() and
  // accept()/reject()).
  bool proposal_open_ = false;
  double pending_ratio_ = 0.0;
  Look d_{};              // 1 + r^T u
  Look pivot_{};          // rho in Look precision (incremental bordering pivot)
  LogDet log_det_b_new_;  // log|det B'| (naive)
  VectorX<Look> du_;      // u, N
  VectorX<Look> row_;     // r, N
  VectorX<Look> b_col_;   // b, K
  VectorX<Look> c_row_;   // c, K
  VectorX<Look> t_;       // B^{-1} b, K
  VectorX<Look> q_;       // B^{-T} c, K
  MatrixX<Look> bordered_;     // naive: LU workspace, K x K
  std::vector<int> pivots_;    // naive: LU pivots

  CorrectionWork flush_work_;
};

/// Builds the delayed strategy for options.precision: double -> <double,
/// double>, float -> <float, float>, mixed -> <float, double>.
std::unique_ptr<DeterminantUpdater> make_delayed_update(const UpdaterOptions& options);

}  // namespace slaterlab
