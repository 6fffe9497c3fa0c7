// A property check of one fuzz configuration, in a child process for an
// external kernel (contract in kernel_check.hpp).

#include "verify/properties/kernel_check.hpp"

#include <fmt/format.h>

#include <sstream>
#include <string>

#include "slaterlab/strategies/determinant/external_kernel.hpp"
#include "verify/properties/check_case.hpp"
#include "verify/store/child_process.hpp"

namespace slaterlab {

std::optional<PropertyFailure> check_config(Property p, const PropertyConfig& c,
                                            const UpdaterOptions& o, const Case& property_case,
                                            const CaseTrace* trace, CheckStats* stats) {
  const auto direct = [&](CheckStats* s) {
    return trace ? check_case(p, c.name, o, property_case, *trace, s)
                 : check_case(p, c.name, o, property_case, s);
  };
  if (!strategy_traits(c.name).loads_library) return direct(stats);
  const double timeout = kernel_case_timeout(property_case.n(), property_case.moves.size());
  const ChildOutcome child = run_in_child(
      [&] {
        CheckStats s;
        const auto f = direct(&s);
        std::string out = fmt::format("{} {} {} {} {} {} {} {}\n", s.ratios, s.ratios_checked,
                                      s.log_dets_checked, s.residuals_checked,
                                      s.breakdowns_checked, s.vacuous, s.cycles,
                                      s.cycles_checked);
        if (f) out += f->property + "\n" + f->message;
        return out;
      },
      timeout);
  const std::string property(to_string(p));
  if (child.signal) {
    return PropertyFailure{property,
                           "the kernel killed its process: " + describe_signal(child.signal)};
  }
  if (child.timed_out) {
    return PropertyFailure{property, fmt::format("the kernel hung: the case did not finish within "
                                                 "{:.3g} s (child process killed with SIGKILL)",
                                                 timeout)};
  }
  if (!child.completed) {
    return PropertyFailure{property, "the kernel's check failed: " + child.error};
  }
  std::istringstream in(child.result);
  CheckStats s;
  in >> s.ratios >> s.ratios_checked >> s.log_dets_checked >> s.residuals_checked >>
      s.breakdowns_checked >> s.vacuous >> s.cycles >> s.cycles_checked;
  if (stats) *stats += s;
  std::string line, name, message;
  std::getline(in, line);  // the end of the counts' line
  if (!std::getline(in, name)) return std::nullopt;
  std::getline(in, message, '\0');
  return PropertyFailure{name, message};
}

double kernel_case_timeout(Eigen::Index n, std::size_t moves) {
  return 2 * kernel_call_timeout(n) + 1e-3 * double(moves);
}

}  // namespace slaterlab
