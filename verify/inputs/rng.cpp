#include "verify/inputs/rng.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

// Bit-identical streams need every a*b + c below rounded twice, never fused
// into an FMA, whatever -ffp-contract the build passes.
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace slaterlab {

namespace {

// fdlibm's split of ln 2: ln2_hi has 32 trailing zero bits, so e * ln2_hi is
// exact for any binary exponent e of a double.
constexpr double kLn2Hi = 0x1.62e42fee00000p-1;
constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;
constexpr double kSqrtHalf = 0x1.6a09e667f3bcdp-1;

// 2 atanh(s) = log((1 + s) / (1 - s)) for |s| <= 3 - 2 sqrt2 ~ 0.1716.
double log_of_mantissa(double m) {
  const double f = m - 1.0;  // exact (Sterbenz): m in [1/sqrt2, sqrt2)
  const double s = f / (2.0 + f);
  const double z = s * s;
  double p = 1.0 / 21.0;
  for (int k = 9; k >= 1; --k) {
    const double pz = p * z;
    p = pz + 1.0 / static_cast<double>(2 * k + 1);
  }
  const double t = z * p;
  const double st = s * t;
  return 2.0 * (s + st);
}

}  // namespace

double portable_log(double x) {
  if (std::isnan(x) || x < 0.0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0.0) return -std::numeric_limits<double>::infinity();
  if (std::isinf(x)) return x;
  int e = 0;
  double m = std::frexp(x, &e);  // exact, m in [0.5, 1), subnormals included
  if (m < kSqrtHalf) {
    m *= 2.0;
    --e;
  }
  const double de = static_cast<double>(e);
  const double hi = de * kLn2Hi;
  const double lo = de * kLn2Lo;
  return hi + (lo + log_of_mantissa(m));
}

std::uint64_t Rng::splitmix64(std::uint64_t x) {
  std::uint64_t z = x + 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::uint64_t Rng::engine_seed(std::uint64_t seed, std::uint64_t stream_id) {
  return splitmix64(splitmix64(seed) ^ stream_id);
}

Rng::Rng(std::uint64_t seed, std::uint64_t stream_id)
    : engine_(static_cast<std::mt19937_64::result_type>(engine_seed(seed, stream_id))) {}

std::uint64_t Rng::next_u64() { return static_cast<std::uint64_t>(engine_()); }

double Rng::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

double Rng::normal() {
  for (;;) {
    const double u = 2.0 * uniform() - 1.0;
    const double v = 2.0 * uniform() - 1.0;
    const double uu = u * u;
    const double vv = v * v;
    const double q = uu + vv;
    if (q > 0.0 && q < 1.0) {
      const double minus_two_log = -2.0 * portable_log(q);
      return u * std::sqrt(minus_two_log / q);
    }
  }
}

std::uint64_t Rng::index(std::uint64_t n) {
  if (n == 0) throw std::invalid_argument("Rng::index: n must be >= 1, got 0");
  // 2^64 mod n, computed as (2^64 - n) mod n in 64-bit arithmetic. Words
  // below it are the incomplete last block of residues; rejecting them makes
  // the accepted count, 2^64 - t, a multiple of n.
  const std::uint64_t threshold = (0 - n) % n;
  for (;;) {
    const std::uint64_t w = next_u64();
    if (w >= threshold) return w % n;
  }
}

Eigen::VectorXd Rng::normal_vector(Eigen::Index n) {
  if (n < 0) throw std::invalid_argument("Rng::normal_vector: negative size " + std::to_string(n));
  Eigen::VectorXd v(n);
  for (Eigen::Index i = 0; i < n; ++i) v(i) = normal();
  return v;
}

Eigen::MatrixXd Rng::normal_matrix(Eigen::Index rows, Eigen::Index cols) {
  if (rows < 0 || cols < 0) {
    throw std::invalid_argument("Rng::normal_matrix: negative size " + std::to_string(rows) +
                                " x " + std::to_string(cols));
  }
  Eigen::MatrixXd a(rows, cols);
  for (Eigen::Index j = 0; j < cols; ++j) {
    for (Eigen::Index i = 0; i < rows; ++i) a(i, j) = normal();
  }
  return a;
}

}  // namespace slaterlab
