#include "verify/stats/statistics.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string_view>

#include <boost/math/distributions/chi_squared.hpp>
#include <fmt/format.h>

// How the error bars are computed (the contract is in the header).
//
// Conventions (used by every function here):
// - Integrated autocorrelation time tau is defined by
//       Var(mean) = 2 tau sigma^2 / n,
//   sigma^2 the per-sample variance, n the number of samples; so tau = 1/2
//   for independent samples and tau = 1/2 + sum_{t>=1} rho(t) in general.
//   The effective sample size is n / (2 tau) = sigma^2 / Var(mean).
//   (Some codes call 2 tau "the" autocorrelation time or the "correlation
//   length" n_corr; with this convention AR(1) with coefficient phi has
//   tau = (1/2)(1 + phi)/(1 - phi).)
// - An error is one standard error (a 68.3% interval for a normal mean).
//
// Blocking (H. Flyvbjerg and H. G. Petersen, J. Chem. Phys. 91, 461 (1989)):
// level k replaces the series by the means of consecutive pairs of level
// k - 1, so a level-k block averages 2^k samples. An odd element left at the
// end of a level is dropped (level k then covers the first m_k = n_k 2^k
// samples). Per level, with y_i the n_k block means and ybar their mean:
//     c0_k    = (1/n_k) sum (y_i - ybar)^2                   (biased variance)
//     gamma_k = (1/n_k) sum_{i<n_k-1} (y_i - ybar)(y_{i+1} - ybar)
//     error_k = sqrt(c0_k / (n_k - 1) * m_k / n)
// c0_k/(n_k - 1) estimates Var(mean of the m_k covered samples) once blocks
// are independent; the factor m_k/n rescales it to the mean of all n samples
// (Var(mean) ~ 1/length), which is what Estimate::mean is. For n a power of
// two m_k = n. The uncertainty of error_k is error_k / sqrt(2 (n_k - 1)) (the
// standard deviation of a sample standard deviation of n_k normal values).
//
// Choosing the level (BlockingRule):
// - jonsson: M. Jonsson, Phys. Rev. E 98, 043304 (2018). Under the
//   hypothesis "the level-k block means are independent" each
//       t_k = n_k ((n_k - 1)/n_k^2 + gamma_k / c0_k)^2
//   is asymptotically chi^2 with one degree of freedom ((n_k - 1)/n_k^2 is
//   minus the expectation of gamma_k/c0_k for independent data, so the bracket
//   is centred). With L the deepest level (n_L >= 2), the statistic
//       M_j = sum_{k=j}^{L} t_k   ~   chi^2 with L - j + 1 degrees of freedom,
//   and the chosen level is the smallest j with M_j < q(confidence, L - j + 1),
//   the chi^2 quantile (Boost.Math). Note: the Python sample code in
//   Jonsson's repository (github.com/computative/block) compares M_j with the
//   quantile for j + 1 degrees of freedom; the theorem gives L - j + 1
//   (= d - j for n = 2^d), which is used here.
// - wolff_lee (default): U. Wolff, Comput. Phys. Commun. 156, 143 (2004),
//   Eq. (47) and R. M. Lee et al., Phys. Rev. E 83, 066706 (2011), Eq. (14):
//   the block size B that balances the bias of a too-small block (~ 2 tau / B)
//   against the statistical error of too few blocks (~ sqrt(2 B / n)) satisfies
//   B^3 = 2 n (2 tau)^2; with 2 tau estimated as (error_k / error_0)^2 the
//   chosen level is the smallest k with 2^{3k} > 2 n (error_k / error_0)^4
//   (the rule pyblock implements).
// Why wolff_lee is the default: on AR(1) series with tau = 9.5 (phi = 0.9),
// 2000 independent series each, measured mean(tau_hat)/tau and the coverage
// of mean +- error (nominal 0.683) were
//     n = 2^12: jonsson 0.73, 0.598   wolff_lee 0.95, 0.643
//     n = 2^14: jonsson 0.82, 0.640   wolff_lee 0.97, 0.669
//     n = 2^16: jonsson 0.87, 0.630   wolff_lee 0.98, 0.652 (500 series)
// and for tau = 99.5 (phi = 0.99) at n = 2^14: jonsson 0.65, 0.578;
// wolff_lee 0.93, 0.646. Jonsson's test stops at the first level whose
// remaining lag-1 correlations are not significant, but the few levels that
// still carry correlation are summed with the many that carry only chi^2_1
// noise, so it accepts while neighbouring blocks are still correlated by a
// few percent (lag-1 correlation ~ 4.7/B for phi = 0.9, B the block size),
// and the error misses that residual. Both rules agree on independent data.
// A chosen level is `converged` only if it has at least min_blocks blocks.
// If Wolff-Lee finds no level, the deepest level with at least min_blocks
// blocks is used (level 0 if none) and converged is false: collect more data;
// the error is then probably an underestimate.

namespace slaterlab {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

void require_series(std::span<const double> series) {
  if (series.size() < 2) {
    throw std::invalid_argument(
        fmt::format("statistics: a series needs at least 2 samples, got {}", series.size()));
  }
  for (std::size_t i = 0; i < series.size(); ++i) {
    if (!std::isfinite(series[i])) {
      throw std::invalid_argument(
          fmt::format("statistics: sample {} is not finite ({})", i, series[i]));
    }
  }
}

// Neumaier-compensated mean: a QMC energy series has a large common offset
// (say -7.96) and errors near 1e-4, so the mean should not lose digits to
// the order of summation.
double mean_of(std::span<const double> y) {
  double sum = 0.0;
  double carry = 0.0;
  for (double v : y) {
    const double t = sum + v;
    carry += std::abs(sum) >= std::abs(v) ? (sum - t) + v : (v - t) + sum;
    sum = t;
  }
  return (sum + carry) / static_cast<double>(y.size());
}

struct Moments {
  double mean;
  double c0;     // (1/n) sum (y - mean)^2
  double gamma;  // (1/n) sum (y_i - mean)(y_{i+1} - mean)
};

// Two passes (mean first, then deviations) so that a large offset does not
// cancel catastrophically in the variance.
Moments moments_of(std::span<const double> y) {
  const double mean = mean_of(y);
  double c0 = 0.0;
  double gamma = 0.0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double d = y[i] - mean;
    c0 += d * d;
    if (i + 1 < y.size()) gamma += d * (y[i + 1] - mean);
  }
  const auto n = static_cast<double>(y.size());
  return {mean, c0 / n, gamma / n};
}

// Means of consecutive pairs; an odd last element is dropped.
std::vector<double> halve(std::span<const double> y) {
  std::vector<double> out(y.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = 0.5 * (y[2 * i] + y[2 * i + 1]);
  return out;
}

BlockingLevel make_level(int k, std::span<const double> y, std::int64_t n_total) {
  const Moments m = moments_of(y);
  BlockingLevel row;
  row.level = k;
  row.block_size = std::int64_t{1} << k;
  row.blocks = static_cast<std::int64_t>(y.size());
  row.mean = m.mean;
  row.variance = m.c0;
  row.lag1_autocovariance = m.gamma;
  const auto nk = static_cast<double>(row.blocks);
  const double covered = nk * static_cast<double>(row.block_size);  // m_k
  row.error = std::sqrt(m.c0 / (nk - 1.0) * covered / static_cast<double>(n_total));
  row.error_uncertainty = row.error / std::sqrt(2.0 * (nk - 1.0));
  return row;
}

// t_k of Jonsson's test: asymptotically chi^2_1 for independent blocks.
// Constant blocks (c0 = 0) carry no evidence of correlation.
double jonsson_term(const BlockingLevel& row) {
  if (row.variance == 0.0) return 0.0;
  const auto nk = static_cast<double>(row.blocks);
  const double centred = (nk - 1.0) / (nk * nk) + row.lag1_autocovariance / row.variance;
  return nk * centred * centred;
}

// Fills M_j and its quantile on every row; returns the smallest j that
// passes. The deepest level always passes for n_L in {2, 3} (t_L <= 3 <
// q(0.99, 1) = 6.63), but a very low confidence could make none pass.
int jonsson_level(std::vector<BlockingLevel>& levels, double confidence) {
  const int deepest = static_cast<int>(levels.size()) - 1;
  double suffix = 0.0;
  for (int j = deepest; j >= 0; --j) {
    suffix += jonsson_term(levels[static_cast<std::size_t>(j)]);
    const boost::math::chi_squared law(static_cast<double>(deepest - j + 1));
    levels[static_cast<std::size_t>(j)].jonsson_statistic = suffix;
    levels[static_cast<std::size_t>(j)].jonsson_quantile = boost::math::quantile(law, confidence);
  }
  for (int j = 0; j <= deepest; ++j) {
    const auto& row = levels[static_cast<std::size_t>(j)];
    if (row.jonsson_statistic < row.jonsson_quantile) return j;
  }
  return -1;
}

// Smallest k with B^3 > 2 n (2 tau_k)^2, 2 tau_k = (error_k / error_0)^2.
int wolff_lee_level(const std::vector<BlockingLevel>& levels, std::int64_t n) {
  const double e0 = levels.front().error;
  if (e0 == 0.0) return 0;
  for (const auto& row : levels) {
    const double b = static_cast<double>(row.block_size);
    const double ratio2 = (row.error / e0) * (row.error / e0);
    if (b * b * b > 2.0 * static_cast<double>(n) * ratio2 * ratio2) return row.level;
  }
  return -1;
}

int deepest_with_blocks(const std::vector<BlockingLevel>& levels, std::int64_t min_blocks) {
  int level = 0;
  for (const auto& row : levels) {
    if (row.blocks >= min_blocks) level = row.level;
  }
  return level;
}

}  // namespace

Blocking block_analysis(std::span<const double> series, const BlockingOptions& options) {
  require_series(series);
  if (!(options.confidence > 0.0 && options.confidence < 1.0)) {
    throw std::invalid_argument(
        fmt::format("statistics: confidence must lie in (0, 1), got {}", options.confidence));
  }
  Blocking out;
  out.samples = static_cast<std::int64_t>(series.size());
  out.rule = options.rule;

  std::vector<double> current(series.begin(), series.end());
  for (int k = 0; current.size() >= 2; ++k) {
    out.levels.push_back(make_level(k, current, out.samples));
    current = halve(current);
  }
  const BlockingLevel& raw = out.levels.front();
  out.mean = raw.mean;
  const auto n = static_cast<double>(out.samples);
  out.variance = raw.variance * n / (n - 1.0);

  // Both rules' bookkeeping is filled in; only the selected rule chooses.
  const int by_jonsson = jonsson_level(out.levels, options.confidence);
  const int chosen = options.rule == BlockingRule::jonsson
                         ? by_jonsson
                         : wolff_lee_level(out.levels, out.samples);
  out.chosen_level = chosen >= 0 ? chosen : deepest_with_blocks(out.levels, options.min_blocks);
  out.converged =
      chosen >= 0 && out.levels[static_cast<std::size_t>(chosen)].blocks >= options.min_blocks;
  return out;
}

Estimate estimate(const Blocking& blocking) {
  const BlockingLevel& row = blocking.levels.at(static_cast<std::size_t>(blocking.chosen_level));
  const double var = blocking.variance;
  const double err = row.error;
  const auto n = static_cast<double>(blocking.samples);
  Estimate e{};
  e.mean = blocking.mean;
  e.error = err;
  e.variance = var;
  e.tau = var > 0.0 ? n * err * err / (2.0 * var) : kNaN;
  e.effective_samples = var > 0.0 ? (err > 0.0 ? var / (err * err) : kInf) : kNaN;
  e.samples = blocking.samples;
  e.block_level = blocking.chosen_level;
  return e;
}

Estimate estimate(std::span<const double> series, const BlockingOptions& options) {
  return estimate(block_analysis(series, options));
}

WindowedTau sokal_tau(std::span<const double> series, double window_factor) {
  require_series(series);
  if (!(window_factor > 0.0)) {
    throw std::invalid_argument(
        fmt::format("statistics: window factor must be positive, got {}", window_factor));
  }
  const std::size_t n = series.size();
  const double mean = mean_of(series);
  std::vector<double> d(n);
  for (std::size_t i = 0; i < n; ++i) d[i] = series[i] - mean;
  auto autocov = [&](std::size_t t) {
    double s = 0.0;
    for (std::size_t i = 0; i + t < n; ++i) s += d[i] * d[i + t];
    return s / static_cast<double>(n);
  };
  WindowedTau out;
  const double c0 = autocov(0);
  if (c0 == 0.0) {
    out.tau = kNaN;
    out.error = kNaN;
    return out;
  }
  double tau = 0.5;
  std::size_t w = 0;
  while (w + 1 < n / 2) {
    ++w;
    tau += autocov(w) / c0;
    if (static_cast<double>(w) >= window_factor * tau) {
      out.converged = true;
      break;
    }
  }
  out.tau = tau;
  out.window = static_cast<std::int64_t>(w);
  const double window = static_cast<double>(w);
  out.error = std::abs(tau) * std::sqrt(2.0 * (2.0 * window + 1.0) / static_cast<double>(n));
  return out;
}

namespace {

// Birge chi^2 of walker means about their inverse-variance mean.
double scatter_chi2(std::span<const Estimate> walkers) {
  bool exact = false;
  for (const auto& w : walkers) exact = exact || w.error == 0.0;
  if (exact) {
    // A walker without error pins the centre; any other mean off it is
    // infinitely significant.
    double pinned = kNaN;
    for (const auto& w : walkers) {
      if (w.error == 0.0) pinned = w.mean;
    }
    for (const auto& w : walkers) {
      if (w.mean != pinned) return kInf;
    }
    return 0.0;
  }
  double wsum = 0.0;
  double wmean = 0.0;
  for (const auto& w : walkers) {
    const double weight = 1.0 / (w.error * w.error);
    wsum += weight;
    wmean += weight * w.mean;
  }
  wmean /= wsum;
  double chi2 = 0.0;
  for (const auto& w : walkers) {
    const double r = (w.mean - wmean) / w.error;
    chi2 += r * r;
  }
  return chi2;
}

}  // namespace

WalkerCombination combine_walkers(std::span<const Estimate> walkers) {
  if (walkers.empty()) throw std::invalid_argument("statistics: no walkers to combine");
  double total = 0.0;
  for (const auto& w : walkers) {
    if (w.samples < 1) {
      throw std::invalid_argument(fmt::format("statistics: a walker has {} samples", w.samples));
    }
    if (!(w.error >= 0.0)) {
      throw std::invalid_argument(fmt::format("statistics: a walker has error {}", w.error));
    }
    total += static_cast<double>(w.samples);
  }
  double mean = 0.0;
  double err2 = 0.0;
  for (const auto& w : walkers) {
    const double weight = static_cast<double>(w.samples) / total;
    mean += weight * w.mean;
    err2 += weight * weight * w.error * w.error;
  }
  // Pooled per-sample variance of all samples together (within + between).
  double ss = 0.0;
  double scatter2 = 0.0;
  for (const auto& w : walkers) {
    const double ni = static_cast<double>(w.samples);
    const double weight = ni / total;
    const double dm = w.mean - mean;
    ss += (w.samples > 1 ? (ni - 1.0) * w.variance : 0.0) + ni * dm * dm;
    scatter2 += weight * weight * dm * dm;
  }
  const double nw = static_cast<double>(walkers.size());

  WalkerCombination out;
  out.walkers.assign(walkers.begin(), walkers.end());
  out.combined.mean = mean;
  out.combined.error = std::sqrt(err2);
  out.combined.variance = total > 1.0 ? ss / (total - 1.0) : kNaN;
  const double var = out.combined.variance;
  out.combined.tau = var > 0.0 ? total * err2 / (2.0 * var) : kNaN;
  out.combined.effective_samples = var > 0.0 ? (err2 > 0.0 ? var / err2 : kInf) : kNaN;
  out.combined.samples = static_cast<std::int64_t>(total);
  out.combined.block_level = -1;
  out.degrees_of_freedom = static_cast<int>(walkers.size()) - 1;
  out.scatter_error = walkers.size() > 1 ? std::sqrt(scatter2 * nw / (nw - 1.0)) : kNaN;
  if (out.degrees_of_freedom == 0) {
    out.chi2 = 0.0;
    out.p_value = 1.0;
  } else {
    out.chi2 = scatter_chi2(walkers);
    const boost::math::chi_squared law(static_cast<double>(out.degrees_of_freedom));
    out.p_value =
        std::isinf(out.chi2) ? 0.0 : boost::math::cdf(boost::math::complement(law, out.chi2));
  }
  return out;
}

WalkerCombination combine_walkers(const std::vector<std::vector<double>>& series,
                                  const BlockingOptions& options) {
  std::vector<Estimate> estimates;
  estimates.reserve(series.size());
  for (const auto& s : series) estimates.push_back(estimate(s, options));
  return combine_walkers(estimates);
}

Agreement agreement(double value1, double error1, double value2, double error2, double threshold) {
  if (error1 < 0.0 || error2 < 0.0) {
    throw std::invalid_argument(
        fmt::format("statistics: errors must be >= 0, got {} and {}", error1, error2));
  }
  if (!(threshold > 0.0)) {
    throw std::invalid_argument(
        fmt::format("statistics: threshold must be > 0, got {}", threshold));
  }
  Agreement a;
  a.threshold = threshold;
  a.delta = value1 - value2;
  // The rounding of the values themselves, 16 units in the last place (as
  // format_mean_error): a zero-variance estimate (a constant local energy)
  // is judged by it, not by an error bar of rounding noise or of 0.
  const double rounding = 0x1p-48 * std::max(std::abs(value1), std::abs(value2));
  a.sigma = std::hypot(std::hypot(error1, error2), std::isfinite(rounding) ? rounding : 0.0);
  a.detectable_bias = threshold * a.sigma;
  if (std::isnan(a.delta) || std::isnan(a.sigma)) {
    a.z = kNaN;
  } else if (a.sigma > 0.0) {
    a.z = std::abs(a.delta) / a.sigma;
  } else {
    a.z = a.delta == 0.0 ? 0.0 : kInf;
  }
  a.agree = a.z < threshold;  // false for NaN
  return a;
}

Agreement agreement(const Estimate& estimate, double exact, double threshold) {
  return agreement(estimate.mean, estimate.error, exact, 0.0, threshold);
}

Agreement agreement(const Estimate& a, const Estimate& b, double threshold) {
  return agreement(a.mean, a.error, b.mean, b.error, threshold);
}

namespace {

// "-0.00": a mean that rounded to zero; its sign is not worth showing.
bool is_negative_zero(std::string_view text) {
  return text.size() > 1 && text.front() == '-' &&
         text.find_first_not_of("0.", 1) == std::string_view::npos;
}

}  // namespace

std::string format_mean_error(double mean, double error) {
  if (std::isnan(mean)) return "nan";
  if (std::isinf(mean)) return mean > 0.0 ? "inf" : "-inf";
  if (std::isnan(error) || error < 0.0) return fmt::format("{:.6g}(nan)", mean);
  if (std::isinf(error)) return fmt::format("{:.6g}(inf)", mean);
  // An error within 16 units in the last place of the mean is rounding,
  // not spread (a constant local energy summed in another order): digits
  // beyond the double's would be noise, so it prints as an exact value.
  if (error <= 0x1p-48 * std::abs(mean)) return fmt::format("{}", mean);

  // "d.de+XX": the error rounded to two significant digits; the exponent is
  // taken after rounding, so 0.0999 becomes 1.0e-01, not 10e-02.
  const std::string sci = fmt::format("{:.1e}", error);
  const int exponent = std::stoi(sci.substr(sci.find('e') + 1));
  const std::string digits{sci[0], sci[2]};
  const int decimals = 1 - exponent;  // decimal place of the error's second digit

  std::string m;
  std::string e;
  if (decimals >= 0) {
    m = fmt::format("{:.{}f}", mean, decimals);
    e = exponent == 0 ? sci.substr(0, 3) : digits;  // an error in [1, 10) keeps its point: 5.6
  } else {
    const double unit = std::pow(10.0, exponent - 1);
    m = fmt::format("{:.0f}", std::nearbyint(mean / unit) * unit);
    e = digits + std::string(static_cast<std::size_t>(exponent - 1), '0');
  }
  if (is_negative_zero(m)) m.erase(0, 1);
  return fmt::format("{}({})", m, e);
}

std::string format_mean_error(const Estimate& estimate) {
  return format_mean_error(estimate.mean, estimate.error);
}

}  // namespace slaterlab
