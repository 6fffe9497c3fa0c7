// Error-free slicing (error_free_slices.hpp).

#include "slaterlab/reference/error_free_slices.hpp"

#include <algorithm>
#include <cmath>

namespace slaterlab::reference::slices {

int ceil_log2(Eigen::Index n) {
  int k = 0;
  while ((Eigen::Index(1) << k) < n) ++k;
  return k;
}

int exponent_above(double m) {
  int e = 0;
  const double f = std::frexp(m, &e);
  return f == 0.5 ? e - 1 : e;
}

int exponent_of(double m) {
  int e = 0;
  std::frexp(m, &e);
  return e;
}

Eigen::VectorXi magnitude_exponents(const Eigen::MatrixXd& m, bool by_rows) {
  const Eigen::VectorXd max = by_rows ? Eigen::VectorXd(m.cwiseAbs().rowwise().maxCoeff())
                                      : Eigen::VectorXd(m.cwiseAbs().colwise().maxCoeff().transpose());
  Eigen::VectorXi e(max.size());
  for (Eigen::Index i = 0; i < max.size(); ++i) e(i) = exponent_of(max(i));
  return e;
}

double rounding_shift(int e, int bits) { return 1.5 * std::ldexp(1.0, 52 + e - bits); }

void slice(const double* x, std::size_t m, const double* shift, int bits, int count,
           double* const* slices, double* rest) {
  std::copy_n(x, m, rest);
  const double step = std::ldexp(1.0, -bits);
  std::vector<double> sigma(shift, shift + m);
  for (int s = 0; s < count; ++s) {
    double* out = slices[s];
    for (std::size_t i = 0; i < m; ++i) {
      out[i] = (rest[i] + sigma[i]) - sigma[i];  // IEEE order: no reassociation without -ffast-math
      rest[i] -= out[i];
      sigma[i] *= step;
    }
  }
}

void slice_matrix(const Eigen::MatrixXd& m, const Eigen::VectorXi& e, bool by_rows, int bits,
                  const std::vector<Eigen::MatrixXd*>& slices, Eigen::MatrixXd& rest) {
  const std::size_t rows = std::size_t(m.rows());
  rest.resize(m.rows(), m.cols());
  for (Eigen::MatrixXd* s : slices) s->resize(m.rows(), m.cols());
  std::vector<double> shift(rows);
  if (by_rows) {
    for (std::size_t i = 0; i < rows; ++i) shift[i] = rounding_shift(e(Eigen::Index(i)), bits);
  }
  std::vector<double*> out(slices.size());
  for (Eigen::Index j = 0; j < m.cols(); ++j) {
    if (!by_rows) std::fill(shift.begin(), shift.end(), rounding_shift(e(j), bits));
    for (std::size_t s = 0; s < slices.size(); ++s) out[s] = slices[s]->col(j).data();
    slice(m.col(j).data(), rows, shift.data(), bits, int(slices.size()), out.data(),
          rest.col(j).data());
  }
}

}  // namespace slaterlab::reference::slices
