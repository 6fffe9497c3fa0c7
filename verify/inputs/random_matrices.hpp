#pragma once
// Random matrices of known structure, from iid standard normal matrices the
// caller draws with its own random source (each user keeps its streams, so
// its cases stay the same bit for bit): Haar-distributed orthogonal
// matrices, and randsvd matrices A = U diag(sigma) V^T of given singular
// values. The one home of both algorithms: the randsvd workloads, the
// property cases, the unit tests and scripts/hard_cases.py (the same two in
// numpy, tested against these by tests/verify/inputs/random_matrices_test.cpp)
// use them. Header only (Eigen): the strategies' tests use it without
// linking verify/.

#include <Eigen/Core>
#include <Eigen/QR>

#include <stdexcept>

namespace slaterlab {

/// Q diag(sign(R_jj)) of the Householder QR G = Q R of a square matrix G of
/// iid standard normals, sign(0) = +1. The QR whose R has a positive
/// diagonal is unique, which makes this Q exactly Haar distributed (Stewart,
/// SIAM J. Numer. Anal. 17, 403 (1980); Mezzadri, Notices of the AMS 54,
/// 592 (2007)). std::invalid_argument for a G that is not square.
inline Eigen::MatrixXd haar_orthogonal(const Eigen::MatrixXd& gaussian) {
  if (gaussian.rows() != gaussian.cols())
    throw std::invalid_argument("haar_orthogonal: the Gaussian matrix is not square");
  const Eigen::HouseholderQR<Eigen::MatrixXd> qr(gaussian);
  Eigen::MatrixXd q = qr.householderQ();
  for (Eigen::Index j = 0; j < q.cols(); ++j)
    if (qr.matrixQR()(j, j) < 0.0) q.col(j) = -q.col(j);
  return q;
}

/// A randsvd matrix as its two factors, A = u_sigma v^T: u_sigma = U
/// diag(sigma) (whose columns' law new columns are drawn from) and V.
struct RandsvdFactors {
  Eigen::MatrixXd u_sigma;
  Eigen::MatrixXd v;
  Eigen::MatrixXd matrix() const { return u_sigma * v.transpose(); }
};

/// U = haar_orthogonal(gaussian_u), V = haar_orthogonal(gaussian_v): A has
/// the singular values sigma (to rounding) and Haar-distributed singular
/// vectors. std::invalid_argument when the sizes differ.
inline RandsvdFactors randsvd(const Eigen::MatrixXd& gaussian_u, const Eigen::MatrixXd& gaussian_v,
                              const Eigen::VectorXd& sigma) {
  if (gaussian_u.rows() != sigma.size() || gaussian_v.rows() != sigma.size())
    throw std::invalid_argument("randsvd: the Gaussian matrices and sigma differ in size");
  return {haar_orthogonal(gaussian_u) * sigma.asDiagonal(), haar_orthogonal(gaussian_v)};
}

}  // namespace slaterlab
