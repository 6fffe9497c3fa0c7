#pragma once
// Delayed (rank-K) Sherman-Morrison-Woodbury updates on a CUDA GPU: the
// algorithm of the CPU DelayedUpdate (strategies/determinant/delayed_update.hpp,
// whose comment derives it), incremental look-ahead, with the N x N inverse
// and every O(N) and O(N m) quantity kept on the device.
//
// The inverse (transposed), the window's columns and rows and every O(N)
// and O(N m) vector live on the device; the host keeps the counts, the
// growth guard's decisions (the CPU code's own, delayed_window.hpp) and
// log|det|. Refactorisations run the CPU's LU inversion and upload it. The
// per-proposal and flush steps are listed in delayed_cuda_update.cpp.
//
// Results differ from the CPU delayed update only by the rounding of the
// cuBLAS reductions and fused multiply-adds: the same error model bounds
// both (tests/determinant/update_test_support.hpp).

#include <cstdint>
#include <vector>

#include "slaterlab/strategies/cuda/runtime.hpp"
#include "slaterlab/strategies/determinant/delayed_update.hpp"
#include "slaterlab/strategies/determinant/delayed_window.hpp"
#include "slaterlab/strategies/determinant/linalg.hpp"

namespace slaterlab {

template <class Storage, class LookAheadScalar>
class CudaDelayedUpdate final : public DelayedWindowUpdater {
 public:
  explicit CudaDelayedUpdate(UpdaterOptions options);

  /// "delayed-cuda-<K>-<precision>".
  std::string label() const override;
  void reset(const Eigen::MatrixXd& a) override;
  Ratio ratio(Eigen::Index k, const Eigen::VectorXd& new_column) override;
  void accept() override;
  MaintainedState maintained() const override;

 private:
  template <class T>
  using Array = cuda::DeviceArray<T>;

  /// Scratch of the Woodbury correction (flush() owns one; maintained()
  /// makes its own).
  struct CorrectionWork {
    Array<Storage> y;              // Ainv U, N x m
    Array<LookAheadScalar> z;                 // W B^{-T}, N x m
    Array<LookAheadScalar> lu;                // B's LU factors, m x m
    Array<int> order;              // the column order of W P, m
    Array<Storage> z_store;        // Z in Storage (mixed)
    Array<Storage> columns_store;  // A' in Storage (mixed)
    Array<Storage> x, row;         // sm's update of a move applied singly, N
    Array<LookAheadScalar> pivot_row, pivot_column;  // mixed: sm's pivot in double, N
  };

  int n() const { return int(size()); }
  int capacity() const { return options().k; }
  void allocate();
  void refactorise() override;
  void close_window() override;
  void correct_flushed_inverse() override {
    if (!correct(ainvt_, flush_work_)) refactorise();
  }
  /// r <- row k of Ainv, in LookAheadScalar.
  void load_row(Eigen::Index k);
  // The window operations place_accepted_move (delayed_window.hpp) decides between.
  template <class Updater>
  friend void place_accepted_move(Updater& u, Eigen::Index k, double pivot, double step_growth);
  bool in_window(Eigen::Index k) const { return last_move_of_[std::size_t(k)] >= 0; }
  void open_window(Eigen::Index k, LookAheadScalar pivot);
  bool extend_window(Eigen::Index k, LookAheadScalar pivot);
  bool reopen_window(Eigen::Index k);
  /// Stores the pending move as window move i; `opens`: it is the window's
  /// first (its electron's row just after it is r / pivot, else cur / pivot).
  void store_move(int i, Eigen::Index k, double pivot, bool opens);
  /// ainvt <- ainvt - Z Y^T, or for rows grown beyond the flush's guard a
  /// prefix and single moves (flush_window, rule 7); false, ainvt then to be
  /// discarded, when B (or a leading block) is singular to working
  /// precision or a single move's pivot is 0 or not finite.
  bool correct(Array<Storage>& ainvt, CorrectionWork& work) const;
  /// work.z = W B^{-T} for the window's first p moves, solved with the LU of
  /// B's leading p x p block; false when it is singular.
  bool solve_window_rows(CorrectionWork& work, int p) const;
  /// ainvt <- ainvt - Z Y^T for the first p moves (columns: A' in Storage).
  void woodbury_update(Array<Storage>& ainvt, const Storage* columns, CorrectionWork& work, int p) const;
  /// The moves from `first` on, one by one as sm applies them (pivot
  /// r^T a' against the inverse so far); false when a pivot is 0 or not finite.
  bool apply_moves_singly(Array<Storage>& ainvt, const Storage* columns, CorrectionWork& work,
                          int first) const;

  cuda::Blas blas_;

  // Device state.
  Array<Storage> ainvt_;      // Ainv^T at the last flush, N x N
  Array<LookAheadScalar> columns_;       // A', N x K
  Array<LookAheadScalar> w_;             // W, N x K
  Array<LookAheadScalar> binv_;          // B^{-1}, K x K
  Array<LookAheadScalar> wa_table_;      // W^T A', K x K
  Array<int> electron_dev_;   // k_i, K
  Array<double> exact_;       // a' as given (double), N
  Array<LookAheadScalar> column_, row_, cur_row_;  // a', r, cur: N
  Array<LookAheadScalar> ra_, c_row_, q_, wa_, t_;  // K each
  CorrectionWork flush_work_;

  // Host bookkeeping.
  std::vector<int> electron_, last_move_of_;
  std::vector<double> w_norm2_;  // ||w_j||^2 per window move (the growth guard)
  std::vector<double> moved_norm2_;  // ||cur_j / rho_j||^2 per window move (the flush's split)
  std::vector<LookAheadScalar> q_host_;     // q of the move being placed (the growth guard)
  double pending_ratio_ = 0.0;
  double column_norm_ = 0.0;  // ||a'|| of the accepted move
  double cur_norm_ = 0.0;     // ||cur|| of the accepted move
};

}  // namespace slaterlab
