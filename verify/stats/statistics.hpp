#pragma once
// Error bars for Monte Carlo time series: Flyvbjerg-Petersen blocking with an
// automatic choice of the block size, the integrated autocorrelation time,
// independent walkers, agreement tests and the compact "mean(error)" notation.
//
// Conventions: the integrated autocorrelation time tau is defined by
// Var(mean) = 2 tau sigma^2 / n (tau = 1/2 for independent samples; AR(1)
// with coefficient phi has tau = (1/2)(1 + phi)/(1 - phi)), so the effective
// sample size is n / (2 tau); an error is one standard error.
// Blocking (Flyvbjerg & Petersen, J. Chem. Phys. 91, 461 (1989)) picks its
// level by BlockingRule: wolff_lee (default; Wolff, Comput. Phys. Commun.
// 156, 143 (2004); Lee et al., Phys. Rev. E 83, 066706 (2011)) or jonsson
// (Jonsson, Phys. Rev. E 98, 043304 (2018), measured to stop too early on
// correlated series). Guarantees: a level is `converged` only with at least
// min_blocks blocks; otherwise the deepest such level is used and converged
// is false (collect more data: the error is then probably an underestimate).
// Errors: input series must be finite and hold at least 2 samples
// (std::invalid_argument, naming the index). The formulas, the two rules and
// the measurements behind the default: statistics.cpp.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace slaterlab {

enum class BlockingRule { jonsson, wolff_lee };

struct BlockingOptions {
  BlockingRule rule = BlockingRule::wolff_lee;
  double confidence = 0.99;  // Jonsson's test: 1 - significance level
  std::int64_t min_blocks = 16;  // fewer blocks at the chosen level: not converged
};

/// One row of the blocking table (see the file comment for the formulas).
struct BlockingLevel {
  int level = 0;                    // k
  std::int64_t block_size = 1;      // 2^k samples per block
  std::int64_t blocks = 0;          // n_k = floor(n_{k-1} / 2)
  double mean = 0.0;                // mean of the n_k block means (data units)
  double variance = 0.0;            // c0_k, biased variance of block means (units^2)
  double lag1_autocovariance = 0.0; // gamma_k (units^2)
  double error = 0.0;               // error_k: standard error of the mean of all n samples (units)
  double error_uncertainty = 0.0;   // error_k / sqrt(2 (n_k - 1)) (units)
  double jonsson_statistic = 0.0;   // M_k (dimensionless)
  double jonsson_quantile = 0.0;    // chi^2 quantile it is compared with
};

struct Blocking {
  std::vector<BlockingLevel> levels;  // level 0 (the raw series) first
  std::int64_t samples = 0;           // n
  double mean = 0.0;                  // mean of all n samples
  double variance = 0.0;              // per-sample variance, (1/(n-1)) sum (x - mean)^2
  BlockingRule rule = BlockingRule::wolff_lee;
  int chosen_level = 0;
  bool converged = false;
};

/// Blocking table of `series` and the level chosen by options.rule.
Blocking block_analysis(std::span<const double> series, const BlockingOptions& options = {});

/// Summary of one series. mean, error, variance in data units (variance in
/// units^2); tau and effective_samples dimensionless (see the conventions);
/// block_level is the chosen blocking level (blocks of 2^level samples), -1
/// where not applicable (combined walkers).
struct Estimate {
  double mean;
  double error;
  double variance;
  double tau;
  double effective_samples;
  std::int64_t samples;
  int block_level;
};

/// Estimate at the chosen level: error = error_k, tau = n error^2 / (2
/// variance), effective_samples = variance / error^2. Blocking noise can give
/// tau < 1/2; it is not clamped. A constant series has error 0 and tau,
/// effective_samples NaN (no fluctuation to correlate).
Estimate estimate(const Blocking& blocking);

/// block_analysis then estimate. The `converged` flag is dropped: callers that
/// must warn about too-short series call block_analysis themselves.
Estimate estimate(std::span<const double> series, const BlockingOptions& options = {});

/// Sokal's windowed estimator (A. D. Sokal, "Monte Carlo methods in
/// statistical mechanics", 1996, Sec. 3): tau(W) = 1/2 + sum_{t=1}^{W} rho(t)
/// with rho(t) = C(t)/C(0), C(t) = (1/n) sum_{i<n-t} (x_i - xbar)(x_{i+t} - xbar),
/// and the window W the smallest with W >= window_factor * tau(W) (Sokal's
/// automatic windowing; c = 5 is adequate for roughly exponential decay).
/// Its statistical error is tau sqrt(2 (2W + 1) / n) (Sokal's Eq. 3.19).
/// Cost O(n W). Same tau convention as above.
struct WindowedTau {
  double tau = 0.0;
  double error = 0.0;
  std::int64_t window = 0;
  bool converged = false;  // a window was found below n / 2
};
WindowedTau sokal_tau(std::span<const double> series, double window_factor = 5.0);

/// Independent walkers (streams). The combined mean is the sample-count
/// weighted average sum_i w_i m_i, w_i = n_i / sum n_i, i.e. the plain average
/// of walker means for equal-length chains, with error sqrt(sum_i w_i^2 e_i^2)
/// (= sqrt(sum e_i^2) / n_w for equal lengths). The weights are fixed
/// numbers, so the combination is unbiased whenever each walker mean is.
/// Inverse-variance weights are not used: they are estimated from the same
/// data, and for skewed data such as QMC local energies a walker's mean and
/// its estimated error are correlated (cov(mean, s^2) = mu_3 / n: a walker
/// that visits a rare high-energy region has both a higher mean and a larger
/// error, so it is down-weighted exactly when it is high). That biases the
/// weighted mean by O(mu_3 / (sigma^2 n_eff)) per walker, a bias that does
/// not shrink as walkers are added while the error does. For equal-length
/// chains of one process the true weights are equal, so estimated weights
/// add only that bias and noise.
///
/// Scatter check (Birge test): chi2 = sum_i (m_i - m_ivw)^2 / e_i^2, with
/// m_ivw the inverse-variance weighted mean (used only here, as the centre
/// that makes the statistic exactly chi^2 with n_w - 1 degrees of freedom for
/// normal walker means with known errors), follows that law if the per-walker
/// errors are honest and the walkers sample the same distribution; p_value is
/// its upper tail. A small p_value means underestimated errors,
/// unequilibrated walkers, or a walker stuck somewhere. scatter_error
/// is the error of the combined mean from the scatter of walker means alone,
/// sqrt(sum w_i^2 (m_i - mean)^2 * n_w / (n_w - 1)), independent of blocking
/// (needs many walkers to be precise).
struct WalkerCombination {
  Estimate combined;              // variance: pooled per-sample variance of all samples;
                                  // tau, effective_samples from it; block_level -1
  std::vector<Estimate> walkers;  // as given or as estimated
  double chi2 = 0.0;
  int degrees_of_freedom = 0;     // n_w - 1
  double p_value = 1.0;
  double scatter_error = 0.0;
};

/// Combine walker estimates (each from estimate()). Needs >= 1 walker with
/// samples >= 1; a walker with zero error and a mean off the combined mean
/// makes chi2 infinite (p_value 0).
WalkerCombination combine_walkers(std::span<const Estimate> walkers);

/// Estimate each series with `options`, then combine.
WalkerCombination combine_walkers(const std::vector<std::vector<double>>& series,
                                  const BlockingOptions& options = {});

/// Agreement of two results with independent errors s1, s2:
///   delta = value1 - value2, sigma = sqrt(s1^2 + s2^2), z = |delta| / sigma,
///   agree = z < threshold (strict), detectable_bias = threshold * sigma.
/// detectable_bias is the smallest true difference the comparison flags with
/// 50% probability (3 sigma at the default threshold): a passing comparison
/// says nothing about differences below it. sigma = 0 gives z = 0 if delta = 0,
/// +inf otherwise; any NaN input gives z NaN and agree false.
struct Agreement {
  double delta = 0.0;
  double sigma = 0.0;
  double z = 0.0;
  double threshold = 3.0;
  double detectable_bias = 0.0;
  bool agree = false;
};
/// sigma = sqrt(error1^2 + error2^2 + r^2), r = 2^-48 max(|value1|, |value2|):
/// the values' own rounding (16 ulp), so that a zero-variance estimate is
/// judged against its rounding, never against an error bar of 0.
Agreement agreement(double value1, double error1, double value2, double error2,
                    double threshold = 3.0);
/// Against an exact value (error 0).
Agreement agreement(const Estimate& estimate, double exact, double threshold = 3.0);
/// Two independent estimates.
Agreement agreement(const Estimate& a, const Estimate& b, double threshold = 3.0);

/// Compact QMC notation: the error rounded to two significant digits, the
/// mean rounded to the same decimal place, the error's digits in parentheses:
///   (-7.959094, 0.000172) -> "-7.95909(17)",   (1.2345, 0.0999) -> "1.23(10)",
///   (123.44, 5.64) -> "123.4(5.6)",           (1234.4, 56.4) -> "1234(56)",
///   (12345.6, 123) -> "12350(120)".
/// An error >= 1 printed at one decimal keeps its decimal point (5.6, not 56).
/// Rounding is to nearest on the exact binary value (fmt's fixed format). A
/// mean that rounds to zero prints without a minus sign. Error 0 prints the
/// mean alone in shortest round-trip form ("-7.5"): an exact value; so does
/// an error of at most 2^-48 |mean| (16 units in the mean's last place: its
/// rounding, not a spread; digits beyond a double's would be noise). A NaN or
/// negative error prints the mean to 6 significant digits and "(nan)", an
/// infinite error the same with "(inf)"; a non-finite mean prints "nan",
/// "inf" or "-inf" alone.
std::string format_mean_error(double mean, double error);
std::string format_mean_error(const Estimate& estimate);

}  // namespace slaterlab
