// The RapidCheck generators of property cases: the picks and their shrink
// order (contract in generators.hpp).

#include "verify/properties/generators.hpp"

#include <cstdint>
#include <ostream>
#include <stdexcept>
#include <vector>

#include "verify/properties/adversarial_case.hpp"
#include "verify/properties/cycles_case.hpp"
#include "verify/properties/randsvd_case.hpp"

namespace slaterlab {
namespace {

/// The picks of the breakdown probe (last in the shrink order).
void pick_probe(Case& c) {
  const Eigen::Index n = c.n();
  c.probe_column = *rc::gen::inRange<Eigen::Index>(0, n);
  c.probe_source =
      n > 1 ? (c.probe_column + *rc::gen::inRange<Eigen::Index>(1, n)) % n : c.probe_column;
}

/// 0 = reject, 1..3 = accept: 3/4 accepted, and shrinking turns accepts into rejects.
std::vector<int> pick_accepts(int length, bool all_accepted) {
  if (all_accepted) return std::vector<int>(std::size_t(length), 1);
  return *rc::gen::container<std::vector<int>>(std::size_t(length), rc::gen::inRange(0, 4));
}

GeneratedCase generate_randsvd(const CaseLimits& lim) {
  const int n = *rc::gen::inRange(lim.n_min, lim.n_max + 1);
  const int kappa_steps = *rc::gen::inRange(0, 81);  // log10 kappa in 1/80ths of the range
  const int length = *rc::gen::inRange(0, lim.length_per_n * n + 1);
  const int recompute_every = lim.recompute ? *rc::gen::inRange(0, n + 1) : 0;
  // Electrons from the first `spread` only: a small spread moves the same
  // electrons again and again inside one delayed window (shrinks towards 1,
  // one electron moving every time).
  const int spread = *rc::gen::inRange(1, n + 1);
  RandsvdRecipe r;
  r.n = n;
  r.seed = *rc::gen::arbitrary<std::uint64_t>();
  r.electrons =
      *rc::gen::container<std::vector<int>>(std::size_t(length), rc::gen::inRange(0, spread));
  r.accepts = pick_accepts(length, lim.all_accepted);
  r.log10_kappa = lim.max_log10_kappa * kappa_steps / 80.0;
  GeneratedCase g{build_randsvd_case(r), recompute_every, CaseMode::randsvd,
                  n == 1 ? 0.0 : r.log10_kappa, 0.0};
  pick_probe(g.property_case);
  return g;
}

GeneratedCase generate_adversarial(const CaseLimits& lim) {
  AdversarialRecipe r;
  r.n = *rc::gen::inRange(lim.n_min, lim.n_max + 1);
  const int eta_steps = *rc::gen::inRange(0, 81);  // log10(1/eta) in 1/80ths of the range
  r.length = *rc::gen::inRange(0, lim.length_per_n * r.n + 1);
  const int recompute_every = lim.recompute ? *rc::gen::inRange(0, r.n + 1) : 0;
  r.chain = *rc::gen::inRange(1, 4);
  r.hold = *rc::gen::inRange(0, 3);
  r.seed = *rc::gen::arbitrary<std::uint64_t>();
  r.accepts = pick_accepts(r.length, lim.all_accepted);
  r.log10_inv_eta = lim.max_log10_inv_eta * eta_steps / 80.0;
  GeneratedCase g{build_adversarial_case(r), recompute_every, CaseMode::adversarial, 0.0,
                  r.log10_inv_eta};
  pick_probe(g.property_case);
  return g;
}

GeneratedCase generate_cycles(const CaseLimits& lim) {
  const int n = *rc::gen::inRange(lim.n_min, lim.n_max + 1);
  const int kappa_steps = *rc::gen::inRange(0, 81);  // log10 kappa in 1/80ths of the range
  const int count = *rc::gen::inRange(1, std::max(1, lim.length_per_n * n) + 1);
  const int recompute_every = lim.recompute ? *rc::gen::inRange(0, n + 1) : 0;
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  const int max_rank = std::max(1, std::min(lim.max_rank, n));
  // Ranks shrink to 1, shifts to plain cycles, positions to 0.
  std::vector<CycleShape> shapes;
  for (int i = 0; i < count; ++i) {
    CycleShape shape;
    shape.rank = *rc::gen::inRange(1, max_rank + 1);
    shape.shift = *rc::gen::inRange(0, 2) == 1;
    shape.position = *rc::gen::inRange(0, n);
    shapes.push_back(shape);
  }
  const double log10_kappa = lim.max_log10_kappa * kappa_steps / 80.0;
  return {build_cycles_case(n, log10_kappa, seed, shapes), recompute_every, CaseMode::cycles,
          n == 1 ? 0.0 : log10_kappa, 0.0};
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const GeneratedCase& g) {
  os << "N=" << g.property_case.n() << ", " << g.property_case.moves.size() << " moves (";
  if (g.property_case.has_cycles()) {
    os << g.property_case.cycles.size() << " cycles of ranks";
    for (int length : g.property_case.cycles) os << " " << length;
  } else {
    os << g.property_case.accepted() << " accepted";
  }
  os << "), " << to_string(g.mode);
  if (g.mode != CaseMode::adversarial) os << " log10 kappa=" << g.log10_kappa;
  if (g.mode == CaseMode::adversarial) os << " log10(1/eta)=" << g.log10_inv_eta;
  return os << ", recompute_every=" << g.recompute_every << ", probe "
            << g.property_case.probe_column << "<-" << g.property_case.probe_source;
}

GeneratedCase pick_case(const CaseLimits& limits) {
  switch (limits.mode) {
    case CaseMode::randsvd: return generate_randsvd(limits);
    case CaseMode::adversarial: return generate_adversarial(limits);
    case CaseMode::cycles: return generate_cycles(limits);
  }
  throw std::invalid_argument("unknown case mode");
}

// gen_case(limits) picks, in this order (RapidCheck shrinks picks in the
// order they were made): N, the conditioning (log10 kappa, or the
// adversarial collapse size eta), the sequence length, then values (the
// recompute cadence, for randsvd the electron spread (electrons drawn from
// the first `spread` only, so that small spreads move the same electrons
// repeatedly inside one delayed window), the seed of the bulk values,
// electron indices, the
// accept pattern — accept shrinks to reject — and the breakdown probe).
// The cycles mode picks N, kappa, the number of cycles, the cadence, the
// seed, then per cycle its rank (shrinks to 1), whether it shifts (shrinks
// to a plain cycle) and its first column (shrinks to 0).
rc::Gen<GeneratedCase> gen_case(const CaseLimits& limits) {
  return rc::gen::exec([limits] { return pick_case(limits); });
}

}  // namespace slaterlab
