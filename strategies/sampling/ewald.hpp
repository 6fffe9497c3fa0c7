#pragma once
// Ewald sum for electrons (charge -1) in a periodic cubic cell of side L with
// a uniform neutralising background (jellium), Hartree atomic units.
//
// What: the energy per cell E = 1/2 sum_{i != j} phi(r_i - r_j) + N xi / 2,
// phi the periodic Coulomb (Ewald) potential with the G = 0 term removed (its
// mean over the cell is 0: the background), xi = lim_{r->0} (phi(r) - 1/r)
// the Madelung term. Real part erfc(alpha r)/r over images within the real
// cut-off r_c, reciprocal part through structure factors S(G) = sum_j e^{iG.r_j}
// over |G| <= G_c: O(N^2) + O(N * number of G).
// Parameter rule (ewald.cpp): erfc(alpha r_c) <= tolerance and
// exp(-G_c^2 / (4 alpha^2)) <= tolerance; by default r_c = L/2 (each pair
// through its minimum image only) and alpha follows; with an explicit
// splitting alpha, r_c follows and images beyond the minimum one are summed
// when r_c > L/2.
// Preconditions: positions finite, anywhere (they are wrapped); no two
// electrons at the same point (the energy is then infinite).
// Guarantees: const and thread-safe; the energy does not depend on alpha,
// the origin or a shift of one electron by L beyond rounding and the
// tolerance. Errors: std::invalid_argument for a box length that is not
// finite and positive, a tolerance outside (0, 1e-2], a negative splitting,
// or a tolerance and splitting for which the sums would need more than 16
// image cells per direction or reciprocal vectors beyond |g| = 256.
// Derivation and rule: ewald.cpp and docs/electron-gas.md.

#include <Eigen/Core>

#include <array>
#include <vector>

namespace slaterlab {

class EwaldSum {
 public:
  /// Cell of side box_length; splitting = 0 chooses alpha by the rule
  /// (r_c = L/2), a positive value fixes alpha (1/length) and r_c follows.
  explicit EwaldSum(double box_length, double tolerance = 1e-12, double splitting = 0.0);

  /// Electrostatic energy per cell of the electrons at the columns of
  /// `positions` (3 x N) and the background.
  double energy(const Eigen::Matrix3Xd& positions) const;
  /// phi(r), the Ewald pair potential (r not a lattice vector).
  double pair_potential(const Eigen::Vector3d& r) const;
  /// xi = lim_{r->0} (phi(r) - 1/r); -2.837297479480620 / L for a cube.
  double madelung() const { return madelung_; }

  double box_length() const { return box_length_; }
  double splitting() const { return alpha_; }          ///< alpha
  double real_cutoff() const { return real_cutoff_; }  ///< r_c
  double reciprocal_cutoff() const { return reciprocal_cutoff_; }  ///< G_c
  /// Reciprocal vectors summed, one of each +-G pair.
  Eigen::Index reciprocal_vectors() const { return static_cast<Eigen::Index>(coefficient_.size()); }

 private:
  // The G with integer vectors (gx, gy, gz), gz in [gz_first, gz_last], one
  // of each +-G pair; coefficient_ from `offset` on.
  struct Column {
    int gx, gy, gz_first, gz_last;
    std::size_t offset;
  };
  double real_space_pairs(const Eigen::Matrix3Xd& wrapped) const;
  double reciprocal_space(const Eigen::Matrix3Xd& wrapped) const;
  double real_space_potential(const Eigen::Vector3d& minimum_image) const;

  double box_length_;
  double alpha_;
  double real_cutoff_;
  double reciprocal_cutoff_;
  int images_;  // image cells per direction beyond the minimum image
  int g_max_;   // largest |g_d|
  std::vector<Column> columns_;
  std::vector<double> coefficient_;  // (4 pi / V) exp(-G^2 / (4 alpha^2)) / G^2
  double self_images_;               // sum_{n != 0, |n L| < r_c} erfc(alpha |n| L) / (|n| L)
  double madelung_;
};

}  // namespace slaterlab
