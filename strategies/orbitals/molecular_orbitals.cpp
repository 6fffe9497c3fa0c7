#include "slaterlab/strategies/orbitals/molecular_orbitals.hpp"

// Evaluation: per position the AOs (gaussian_basis.hpp) into one column of
// an AO matrix, then one matrix product with the selected MO columns. The
// float set does both in float: the positions are rounded to float first, as
// a float code receives them, and the AO values, the coefficients and the
// product are float; only the results are rounded up to double.

#include "slaterlab/strategies/orbitals/gaussian_basis.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace slaterlab {

Eigen::Index MolecularWavefunction::ao_count() const {
  Eigen::Index count = 0;
  for (const auto& shell : shells) count += shell_size(shell.l, shell.spherical);
  return count;
}

double MolecularWavefunction::nuclear_repulsion() const {
  double energy = 0.0;
  for (std::size_t a = 0; a < nuclei.size(); ++a)
    for (std::size_t b = 0; b < a; ++b)
      energy += nuclei[a].charge * nuclei[b].charge / (nuclei[a].position - nuclei[b].position).norm();
  return energy;
}

namespace {

template <class Real>
using Matrix = Eigen::Matrix<Real, Eigen::Dynamic, Eigen::Dynamic>;

template <class Real>
struct Evaluator {
  Matrix<Real> coefficients;  // AOs x selected MOs

  void values(const GaussianBasis& basis, const Eigen::Matrix3Xd& positions, Eigen::MatrixXd& out) const {
    const Eigen::Index m = positions.cols();
    Matrix<Real> ao(basis.size(), m);
    for (Eigen::Index p = 0; p < m; ++p) {
      const Real point[3] = {Real(positions(0, p)), Real(positions(1, p)), Real(positions(2, p))};
      basis.values<Real>(point, ao.col(p).data());
    }
    out = (coefficients.transpose() * ao).template cast<double>();
  }

  void vgl(const GaussianBasis& basis, const Eigen::Matrix3Xd& positions, OrbitalVGL& out) const {
    const Eigen::Index m = positions.cols();
    const Eigen::Index n = basis.size();
    // Five blocks of m columns: values, d/dx, d/dy, d/dz, Laplacians.
    Matrix<Real> ao(n, 5 * m);
    for (Eigen::Index p = 0; p < m; ++p) {
      const Real point[3] = {Real(positions(0, p)), Real(positions(1, p)), Real(positions(2, p))};
      const AoVgl<Real> columns{ao.col(p).data(), ao.col(m + p).data(), ao.col(2 * m + p).data(),
                                ao.col(3 * m + p).data(), ao.col(4 * m + p).data()};
      basis.vgl<Real>(point, columns);
    }
    const Matrix<Real> mo = coefficients.transpose() * ao;
    const Eigen::Index orbitals = coefficients.cols();
    out.value = mo.leftCols(m).template cast<double>();
    out.laplacian = mo.rightCols(m).template cast<double>();
    out.gradient.resize(3 * orbitals, m);
    for (Eigen::Index i = 0; i < orbitals; ++i)
      for (int d = 0; d < 3; ++d)
        out.gradient.row(3 * i + d) = mo.block(i, (1 + d) * m, 1, m).template cast<double>();
  }
};

}  // namespace

struct MolecularOrbitals::Impl {
  std::shared_ptr<const MolecularWavefunction> wavefunction;
  GaussianBasis basis;
  OrbitalPrecision precision;
  Evaluator<double> in_double;
  Evaluator<float> in_float;
};

MolecularOrbitals::MolecularOrbitals(std::shared_ptr<const MolecularWavefunction> wavefunction,
                                     const Eigen::MatrixXd& mo, std::vector<int> mo_indices,
                                     OrbitalPrecision precision) {
  if (!wavefunction) throw std::invalid_argument("molecular orbitals: no wavefunction");
  GaussianBasis basis(wavefunction->shells, wavefunction->nuclei);
  if (mo.rows() != basis.size())
    throw std::invalid_argument("molecular orbitals: the MO matrix has " + std::to_string(mo.rows()) +
                                " rows for " + std::to_string(basis.size()) + " AOs");
  Eigen::MatrixXd selected(mo.rows(), static_cast<Eigen::Index>(mo_indices.size()));
  for (std::size_t i = 0; i < mo_indices.size(); ++i) {
    const int index = mo_indices[i];
    if (index < 0 || index >= mo.cols())
      throw std::invalid_argument("molecular orbitals: MO index " + std::to_string(index) +
                                  " outside 0.." + std::to_string(mo.cols() - 1));
    selected.col(static_cast<Eigen::Index>(i)) = mo.col(index);
  }
  if (!selected.allFinite())
    throw std::invalid_argument("molecular orbitals: an MO coefficient is not finite");
  impl_ = std::make_unique<Impl>(Impl{std::move(wavefunction), std::move(basis), precision, {}, {}});
  if (precision == OrbitalPrecision::kDouble)
    impl_->in_double.coefficients = selected;
  else
    impl_->in_float.coefficients = selected.cast<float>();
}

MolecularOrbitals::~MolecularOrbitals() = default;

Eigen::Index MolecularOrbitals::size() const {
  return impl_->precision == OrbitalPrecision::kDouble ? impl_->in_double.coefficients.cols()
                                                      : impl_->in_float.coefficients.cols();
}

std::string MolecularOrbitals::label() const {
  return impl_->precision == OrbitalPrecision::kDouble ? "gaussian-double" : "gaussian-float";
}

void MolecularOrbitals::evaluate_values(const Eigen::Matrix3Xd& positions, Eigen::MatrixXd& values) const {
  if (impl_->precision == OrbitalPrecision::kDouble)
    impl_->in_double.values(impl_->basis, positions, values);
  else
    impl_->in_float.values(impl_->basis, positions, values);
}

void MolecularOrbitals::evaluate_vgl(const Eigen::Matrix3Xd& positions, OrbitalVGL& out) const {
  if (impl_->precision == OrbitalPrecision::kDouble)
    impl_->in_double.vgl(impl_->basis, positions, out);
  else
    impl_->in_float.vgl(impl_->basis, positions, out);
}

}  // namespace slaterlab
