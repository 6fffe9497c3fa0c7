#pragma once
// Deterministic random numbers: the same (seed, stream id) gives the same
// bits on every platform and compiler. Nothing here uses the standard
// library's distributions (std::normal_distribution and friends are
// implementation-defined) or the C library's log (not correctly rounded, and
// different between libms).
//
// The algorithm, exactly (enough to reproduce a stream in Python with
// integer arithmetic and IEEE doubles; tests/verify/inputs/rng_test.cpp carries
// such a reference implementation):
//
// 1. Seeding. sm(x) is the first output of SplitMix64 started from state x:
//        z = x + 0x9E3779B97F4A7C15                       (mod 2^64)
//        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9          (mod 2^64)
//        z = (z ^ (z >> 27)) * 0x94D049BB133111EB          (mod 2^64)
//        sm(x) = z ^ (z >> 31)
//    The engine seed of stream `s` under `seed` is
//        engine_seed(seed, s) = sm(sm(seed) XOR s),
//    and the engine is std::mt19937_64 constructed from that single 64-bit
//    value (MT19937-64's init_genrand64; its output sequence is fixed by the
//    C++ standard, [rand.predef]). sm is a bijection on 64-bit words, so for a
//    fixed seed distinct streams get distinct engine seeds, and vice versa.
// 2. next_u64(): the engine's next output w.
// 3. uniform(): (w >> 11) * 2^-53, the top 53 bits of one word: a multiple of
//    2^-53 in [0, 1), every value equally likely.
// 4. normal(): Marsaglia's polar method, NO cached second variate:
//        repeat: u = 2*uniform() - 1; v = 2*uniform() - 1; q = u*u + v*v
//        until 0 < q < 1
//        return u * sqrt((-2 * portable_log(q)) / q)
//    (sqrt is correctly rounded under IEEE-754, portable_log is defined
//    below.) The second variate v * sqrt(...) is discarded, so the generator's whole
//    state is the engine: the output of any interleaving of calls is a pure
//    function of the call sequence. (Costs 4/pi * 2 words per normal on
//    average; irrelevant next to the O(N^3) work the variates feed.)
// 5. index(n): unbiased integer in [0, n) by rejection: t = (2^64 - n) mod n;
//    draw w until w >= t; return w mod n. (The accepted range has a length
//    that is a multiple of n, so every residue is equally likely.)
// 6. normal_vector(n): n successive normal() calls, element 0 first.
//    normal_matrix(r, c): r*c successive normal() calls in column-major
//    order (column 0 top to bottom, then column 1, ...), Eigen's storage
//    order and the order in which a Slater matrix's electron columns are
//    filled.
//
// Floating-point requirements for bit-identical streams: IEEE-754 binary64
// without extended precision, and no fused multiply-add contraction in
// rng.cpp. rng.cpp turns contraction off by pragma (GCC's optimize pragma,
// the standard FP_CONTRACT pragma for clang); only clang's
// -ffp-contract=fast overrides that. rng_test's bit-exact digest of 20000
// normals fails on any build that breaks this.

#include <cstdint>
#include <random>

#include <Eigen/Core>

namespace slaterlab {

/// Natural logarithm built only from frexp, +, -, *, / (all exactly
/// specified by IEEE-754), so its result is the same on every platform:
///   x = m 2^e with m in [1/sqrt2, sqrt2) (frexp, then m *= 2, e -= 1 when
///   m < 0x1.6a09e667f3bcdp-1);  f = m - 1;  s = f / (2 + f);  z = s*s;
///   p = 1/21; for k = 9..1: p = p*z + 1/(2k+1)   (each constant 1.0/(2k+1));
///   log m = 2 * (s + s * (z*p))                   (2 atanh s, 10 series terms);
///   result = e*ln2_hi + (e*ln2_lo + log m), with fdlibm's split of ln 2:
///   ln2_hi = 0x1.62e42fee00000p-1, ln2_lo = 0x1.a39ef35793c76p-33.
/// Accuracy: a few ulp for positive finite x (the series is truncated at
/// |s|^20 / 21 < 2^-54 relative; measured against glibc's log, under
/// 1.5 * 2^-52 relative). It only has to be deterministic: it shapes the
/// normal variates, whose distribution does not care about an ulp.
/// x = 0 gives -inf, +inf gives +inf, negative or NaN gives NaN.
double portable_log(double x);

/// One independent, reproducible stream of random numbers (see the file
/// comment for the exact algorithm). Copyable: a copy continues the same
/// stream independently.
class Rng {
 public:
  /// Stream `stream_id` of `seed`.
  explicit Rng(std::uint64_t seed, std::uint64_t stream_id = 0);

  /// Same as Rng(seed, stream_id); reads better at call sites.
  static Rng stream(std::uint64_t seed, std::uint64_t stream_id) { return Rng(seed, stream_id); }

  /// The 64-bit value std::mt19937_64 is constructed from: sm(sm(seed) ^ stream_id).
  static std::uint64_t engine_seed(std::uint64_t seed, std::uint64_t stream_id);

  /// SplitMix64's first output from state x (the bijection sm above).
  static std::uint64_t splitmix64(std::uint64_t x);

  /// Next raw 64-bit engine output.
  std::uint64_t next_u64();

  /// Uniform double in [0, 1), a multiple of 2^-53.
  double uniform();

  /// Standard normal variate (polar method, no caching).
  double normal();

  /// Uniform integer in [0, n), unbiased. Throws std::invalid_argument if n == 0.
  std::uint64_t index(std::uint64_t n);

  /// n iid N(0,1) variates. Throws std::invalid_argument if n < 0.
  Eigen::VectorXd normal_vector(Eigen::Index n);

  /// r x c matrix of iid N(0,1) variates filled column by column. Throws
  /// std::invalid_argument if r < 0 or c < 0.
  Eigen::MatrixXd normal_matrix(Eigen::Index rows, Eigen::Index cols);

 private:
  std::mt19937_64 engine_;
};

}  // namespace slaterlab
