// The long-double oracle and its trace of a case (contract in oracle.hpp;
// why long double, and how its own error enters the bounds:
// docs/properties.md).

#include "verify/properties/oracle.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <utility>

namespace slaterlab {
namespace properties {
namespace {

class Oracle {
 public:
  explicit Oracle(const Eigen::MatrixXd& a) { set(a); }

  void set(const Eigen::MatrixXd& a) {
    a_ = a.cast<LongDouble>();
    lu_.compute(a_);
    const auto& lu = lu_;
    inv_ = lu.inverse();
    row_norms_ = inv_.rowwise().norm();
    {
      const MatrixLongDouble lu_abs = lu.matrixLU().cwiseAbs();
      const MatrixLongDouble l = lu_abs.triangularView<Eigen::UnitLower>();
      const MatrixLongDouble u = lu_abs.triangularView<Eigen::Upper>();
      // |L||U| of P A: columns in A's order, rows permuted back.
      const MatrixLongDouble lu_product = lu.permutationP().transpose() * (l * u);
      info_.lu_growth = double(lu_product.norm() / a_.norm());
      auto state = std::make_shared<InverseState>();
      state->inverse = inv_.cast<double>();
      state->residual_size = (inv_.cwiseAbs() * lu_product).cast<double>();
      info_.state = std::move(state);
    }
    info_.norm_f = double(a_.norm());
    info_.inv_norm_f = double(inv_.norm());
    LogDetLongDouble d;
    d.sign = int(lu.permutationP().determinant());
    for (Eigen::Index i = 0; i < a_.rows(); ++i) {
      const LongDouble u = lu.matrixLU()(i, i);
      d.log_abs += std::log(std::abs(u));
      if (u < 0) d.sign = -d.sign;
      if (u == 0) d.sign = 0;
    }
    info_.log_det = d;
  }

  const MatrixInfo& info() const { return info_; }

  /// The cycle ratio det(A_after) / det(A) = det B, B = W^T C: W the rows
  /// `columns` of A^{-1}, C the cycle's last column written to each (the
  /// mp reference's block form: no intermediate matrix enters it). B's rows
  /// are formed by solves with A^T (backward stable, as propose()'s column
  /// solve); `beta` = ||B^{-1}||_F ||W||_F ||C||_F, the condition number
  /// of det B under perturbations of W and C (d log det B = tr(B^{-1} dB),
  /// ||dB||_F <= ||dW||_F ||C||_F + ||W||_F ||dC||_F).
  LongDouble block_ratio(const std::vector<Eigen::Index>& columns, const MatrixLongDouble& c,
                 double& beta) const {
    const Eigen::Index m = Eigen::Index(columns.size());
    MatrixLongDouble e = MatrixLongDouble::Zero(a_.rows(), m);
    for (Eigen::Index j = 0; j < m; ++j) e(columns[std::size_t(j)], j) = 1;
    const MatrixLongDouble w = lu_.transpose().solve(e);  // columns are the rows of A^{-1}
    const MatrixLongDouble b = w.transpose() * c;
    const Eigen::PartialPivLU<MatrixLongDouble> block(b);
    beta = double(block.inverse().norm() * w.norm() * c.norm());
    if (!std::isfinite(beta)) beta = std::numeric_limits<double>::infinity();
    return block.determinant();
  }

  OracleStep propose(Eigen::Index k, const Eigen::VectorXd& column) const {
    const VectorLongDouble a = column.cast<LongDouble>();
    const VectorLongDouble x = inv_.row(k).transpose();
    // rho = (A^{-1} a')_k from a solve with a' (backward stable: error
    // c N eps_ld kappa_rho), never as row k of the inverse times a': Eigen
    // forms the inverse column by column, so its columns are backward stable
    // but its rows are not, and a row times a' then errs by up to
    // eps_ld kappa(A) ||x|| ||a'|| / |rho| (found by fuzzing: a ratio of
    // 3.7536e-8 at kappa = 3e8, N = 6, off by 5e-5 relative, where every
    // double strategy agreed with a 60-digit determinant ratio to 2e-8).
    const VectorLongDouble y = lu_.solve(a);
    OracleStep s;
    s.rho = y(k);
    s.row_norm = double(x.norm());
    s.solve_norm = double(y.norm());
    s.sensitivity = s.row_norm * s.solve_norm / double(std::abs(s.rho));
    MatrixLongDouble cand = a_;
    cand.col(k) = a;
    s.candidate.norm_f = double(cand.norm());
    // Sherman-Morrison in long double, only for the norm of the inverse.
    VectorLongDouble yk = y;
    yk(k) -= 1;
    s.candidate.inv_norm_f = double((inv_ - yk * x.transpose() / s.rho).norm());
    s.vectors = std::make_shared<const StepVectors>(StepVectors{k, a, x, yk, row_norms_});
    return s;
  }

 private:
  MatrixLongDouble a_;
  Eigen::PartialPivLU<MatrixLongDouble> lu_;
  MatrixLongDouble inv_;  // for norms only
  VectorLongDouble row_norms_;
  MatrixInfo info_;
};

/// kappa_F and log|det| of A from a long-double LU (+inf and -inf for an
/// exactly singular A).
std::pair<double, LongDouble> kappa_and_log_det(const Eigen::MatrixXd& a) {
  const MatrixLongDouble al = a.cast<LongDouble>();
  const Eigen::PartialPivLU<MatrixLongDouble> lu(al);
  const double k = double(al.norm() * lu.inverse().norm());
  LongDouble log_abs = 0;
  for (Eigen::Index i = 0; i < a.rows(); ++i) log_abs += std::log(std::abs(lu.matrixLU()(i, i)));
  if (!std::isfinite(k))
    return {std::numeric_limits<double>::infinity(), -std::numeric_limits<LongDouble>::infinity()};
  return {k, log_abs};
}

}  // namespace

double kappa_f(const MatrixInfo& a) {
  const double k = a.norm_f * a.inv_norm_f;
  return std::isfinite(k) ? k : std::numeric_limits<double>::infinity();
}

namespace {

/// The oracle along a case of update cycles.
void trace_cycles(const Case& c, Oracle& oracle, CaseTrace& t) {
  Eigen::MatrixXd current = c.initial;
  std::size_t first = 0;
  for (int length : c.cycles) {
    CycleStep s;
    // The distinct columns, the last write to each winning.
    std::vector<std::size_t> source;
    for (std::size_t i = first + std::size_t(length); i-- > first;) {
      const Eigen::Index k = c.moves[i].electron;
      if (std::find(s.columns.begin(), s.columns.end(), k) != s.columns.end()) continue;
      s.columns.push_back(k);
      source.push_back(i);
    }
    MatrixLongDouble columns(c.n(), Eigen::Index(source.size()));
    for (std::size_t j = 0; j < source.size(); ++j)
      columns.col(Eigen::Index(j)) = c.moves[source[j]].column.cast<LongDouble>();
    s.rho = oracle.block_ratio(s.columns, columns, s.beta);
    s.kappa_before = kappa_f(oracle.info());
    LongDouble log_det = oracle.info().log_det.log_abs;
    s.min_step = std::numeric_limits<double>::infinity();
    const auto step_to = [&](LongDouble next) {
      s.min_step = std::min(s.min_step, double(std::exp(next - log_det)));
      log_det = next;
    };
    for (std::size_t i = first; i < first + std::size_t(length); ++i) {
      current.col(c.moves[i].electron) = c.moves[i].column;
      if (i + 1 < first + std::size_t(length)) {
        const auto [kappa, next] = kappa_and_log_det(current);
        s.kappa_path = std::max(s.kappa_path, kappa);
        step_to(next);
      }
    }
    oracle.set(current);
    s.after = oracle.info();
    s.kappa_after = kappa_f(s.after);
    step_to(s.after.log_det.log_abs);
    t.cycles.push_back(std::move(s));
    first += std::size_t(length);
  }
  t.final_matrix = current;
}

}  // namespace
}  // namespace properties

std::shared_ptr<const CaseTrace> trace_case(const Case& c) {
  validate_case(c);
  auto t = std::make_shared<CaseTrace>();
  properties::Oracle oracle(c.initial);
  t->initial = oracle.info();
  Eigen::MatrixXd current = c.initial;
  if (c.has_cycles()) {
    properties::trace_cycles(c, oracle, *t);
    return t;
  }
  for (const CaseMove& mv : c.moves) {
    t->steps.push_back(oracle.propose(mv.electron, mv.column));
    if (mv.accept) {
      current.col(mv.electron) = mv.column;
      oracle.set(current);
    }
    t->after.push_back(oracle.info());
  }
  t->final_matrix = current;
  return t;
}

}  // namespace slaterlab
