// Checks a determinant-update strategy against slaterlab's references, as a
// QMC code would check its own: the reference log-determinant of a matrix
// (50-digit LU, and an Arb enclosure with the bits it certifies), the exact
// ratios of a few column moves, and a delayed rank-K update run against them.
//
//   reference_and_delayed [MATRIX.txt] [--moves M] [--k K]
//
// MATRIX.txt holds N rows of N numbers (A(i, j) = phi_i(r_j); '#' starts a
// comment). Without it, a 64 x 64 Gaussian matrix is drawn. Each move replaces
// column k = move mod N by a'_k = a_k + 0.1 s g (s the RMS entry of A, g
// Gaussian): a small step, ratios near 1, as in diffusion Monte Carlo; every
// move is accepted. Exit 0 if every error is within its bound (below), 1 if
// not, 2 on bad input.
#include <slaterlab/reference/certified.hpp>
#include <slaterlab/reference/mp.hpp>
#include <slaterlab/strategies/determinant/delayed_update.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
// Rounding constant of the bounds: a backward-stable step commits an error of
// at most c N eps times the norms of its inputs, with c of order 1; 10 is
// the project's stated multiple (docs/fuzzing.md, "The error model").
constexpr double kRoundingConstant = 10.0;

struct Options {
  std::string matrix_file;
  int moves = 48;
  int k = 16;
};

[[noreturn]] void bad_input(const std::string& what) {
  std::cerr << "reference_and_delayed: error: " << what << "\n";
  std::exit(2);
}

int positive(const std::string& flag, const std::string& text) {
  try {
    std::size_t used = 0;
    const int value = std::stoi(text, &used);
    if (used == text.size() && value >= 1) return value;
  } catch (const std::exception&) {
  }
  bad_input(flag + " needs a positive integer, got '" + text + "'");
}

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::cout << "usage: reference_and_delayed [MATRIX.txt] [--moves M] [--k K]\n"
                   "Compares a delayed rank-K update with the 50-digit and the certified\n"
                   "references on MATRIX.txt (N rows of N numbers) or a 64 x 64 Gaussian matrix.\n";
      std::exit(0);
    }
    if ((arg == "--moves" || arg == "--k") && i + 1 < argc) {
      (arg == "--moves" ? options.moves : options.k) = positive(arg, argv[++i]);
    } else if (arg.starts_with("-") || !options.matrix_file.empty()) {
      bad_input("unexpected argument '" + arg + "' (see --help)");
    } else {
      options.matrix_file = arg;
    }
  }
  return options;
}

Eigen::MatrixXd read_matrix(const std::string& path) {
  std::ifstream in(path);
  if (!in) bad_input("cannot read '" + path + "'");
  std::vector<std::vector<double>> rows;
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    std::istringstream fields(line);
    std::vector<double> row;
    std::string field;
    while (fields >> field) {
      try {
        std::size_t used = 0;
        row.push_back(std::stod(field, &used));
        if (used != field.size()) throw std::invalid_argument(field);
      } catch (const std::exception&) {
        bad_input(path + " line " + std::to_string(rows.size() + 1) + ": '" + field +
                  "' is not a number");
      }
    }
    if (!row.empty()) rows.push_back(std::move(row));
  }
  const auto n = static_cast<Eigen::Index>(rows.size());
  Eigen::MatrixXd a(n, n);
  for (Eigen::Index i = 0; i < n; ++i) {
    if (static_cast<Eigen::Index>(rows[i].size()) != n)
      bad_input(path + ": row " + std::to_string(i + 1) + " has " +
                std::to_string(rows[i].size()) + " numbers, expected N = " + std::to_string(n));
    for (Eigen::Index j = 0; j < n; ++j) a(i, j) = rows[i][j];
  }
  if (n == 0) bad_input(path + " holds no matrix");
  if (!a.allFinite()) bad_input(path + " holds a non-finite number");
  return a;
}

Eigen::MatrixXd gaussian(Eigen::Index rows, Eigen::Index cols, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  return Eigen::MatrixXd::NullaryExpr(rows, cols, [&] { return normal(rng); });
}

// Bits of log|det A| the enclosure certifies: its radius is an absolute error
// of log|det| = a relative error of |det|.
double certified_bits(const slaterlab::reference::CertifiedLogDet& c) {
  return c.certified ? -std::log2(c.log_abs_radius) : 0.0;
}

}  // namespace

int main(int argc, char** argv) {
  namespace ref = slaterlab::reference;
  const Options options = parse(argc, argv);
  std::mt19937_64 rng(20261123);
  const Eigen::MatrixXd a0 =
      options.matrix_file.empty() ? gaussian(64, 64, rng) : read_matrix(options.matrix_file);
  const Eigen::Index n = a0.rows();
  const double dn = static_cast<double>(n);

  // The references of the initial matrix.
  const ref::CertifiedLogDet certified = ref::certified_log_det(a0);
  ref::MpReference mp;
  slaterlab::UpdaterOptions delayed_options;  // double, no periodic recompute
  delayed_options.k = options.k;
  slaterlab::DelayedUpdate<double, double> delayed(delayed_options);
  try {
    mp.reset(a0);
    delayed.reset(a0);
  } catch (const std::exception& e) {
    bad_input(std::string("the matrix is singular: ") + e.what());
  }
  // The two references must agree: the 50-digit value, rounded to long
  // double, lies in Arb's ball up to that rounding.
  const long double mp_rounding = 4 * std::numeric_limits<long double>::epsilon() *
                                  std::abs(mp.log_det().log_abs);
  const bool references_agree =
      !certified.certified ||
      std::abs(mp.log_det().log_abs - certified.log_abs_mid) <= certified.log_abs_radius + mp_rounding;
  const double kappa_f = a0.norm() * mp.inverse().norm();
  std::printf("N = %td, kappa_F = %.3g\n", n, kappa_f);
  std::printf("log|det A| (50 digits)  = %.17Lg, sign %+d\n", mp.log_det().log_abs,
              mp.log_det().sign);
  if (certified.certified)
    std::printf("log|det A| (Arb)        = %.17g +- %.2g: %.0f bits certified, sign %+d\n",
                certified.log_abs_mid, certified.log_abs_radius, certified_bits(certified),
                certified.sign);
  else
    std::printf("log|det A| (Arb)        : not certified (%s)\n", certified.message.c_str());

  // Bound on the initial log|det| of an LU in double: a backward error E
  // with ||E||_F <= c N eps ||A||_F changes log|det| by tr(A^-1 E) <=
  // ||A^-1||_F ||E||_F = c N eps kappa_F.
  double log_det_bound = kRoundingConstant * dn * kEps * kappa_f;
  const double step = 0.1 * a0.norm() / dn;  // 0.1 times the RMS entry
  double worst_ratio_error_over_bound = 0;
  double worst_conditioning = kappa_f;
  std::printf("%5s %4s %22s %12s %14s %16s\n", "move", "k", "ratio (50 digits)", "kappa_rho",
              "error [eps]", "bound [eps]");
  for (int move = 0; move < options.moves; ++move) {
    const Eigen::Index k = move % n;
    const Eigen::VectorXd column = mp.matrix().col(k) + step * gaussian(n, 1, rng);
    const ref::RatioInfo exact = mp.ratio(k, column);
    const double ratio = delayed.ratio(k, column).value;
    mp.accept();
    delayed.accept();
    // Bound on this ratio, to first order. A backward-stable solve errs by
    // at most c N eps kappa_rho (docs/compared.md, "Metrics"). An updated inverse also
    // carries the rounding of the factorisation (relative c N eps kappa_F)
    // and of each update since, which is amplified by the conditioning of
    // the state it was committed in: so each of the 1 + move steps adds at
    // most c N eps times the worst condition number met so far.
    worst_conditioning = std::max(worst_conditioning, exact.conditioning);
    const double error = std::abs(ratio - exact.value) / std::abs(exact.value);
    const double bound = kRoundingConstant * dn * kEps * worst_conditioning * (1 + move);
    worst_ratio_error_over_bound = std::max(worst_ratio_error_over_bound, error / bound);
    // log|det| accumulates the logarithms of the ratios: their relative
    // errors add.
    log_det_bound += bound;
    std::printf("%5d %4td %22.15g %12.3g %14.3g %16.3g\n", move, k, exact.value,
                exact.conditioning, error / kEps, bound / kEps);
  }
  delayed.flush();

  const ref::CertifiedLogDet final_certified = ref::certified_log_det(mp.matrix());
  const double log_det_error =
      std::abs(static_cast<double>(static_cast<long double>(delayed.log_det().log_abs) -
                                   mp.log_det().log_abs));
  const bool sign_agrees = delayed.log_det().sign == mp.log_det().sign;
  std::printf("final log|det A| (50 digits) = %.17Lg; Arb: %s (%.0f bits)\n",
              mp.log_det().log_abs, final_certified.certified ? "certified" : "not certified",
              certified_bits(final_certified));
  std::printf("%s: final log|det| error %.3g eps (bound %.3g eps), sign %s, %lld flushes\n",
              delayed.label().c_str(), log_det_error / kEps, log_det_bound / kEps,
              sign_agrees ? "agrees" : "DISAGREES",
              static_cast<long long>(delayed.counters().event(slaterlab::kFlushEvent)));

  if (!references_agree) std::printf("REFERENCES DISAGREE: the 50-digit log|det| is outside Arb's ball\n");
  const bool within = worst_ratio_error_over_bound <= 1 && log_det_error <= log_det_bound &&
                      sign_agrees && references_agree;
  std::printf("%s (worst ratio error / bound = %.3g)\n",
              within ? "within the bounds" : "BOUND EXCEEDED", worst_ratio_error_over_bound);
  return within ? 0 : 1;
}
