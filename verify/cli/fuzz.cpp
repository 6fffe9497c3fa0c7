// `slaterlab fuzz`: the report of a fuzz run, each failure and the summary
// table (contract in fuzz.hpp; the engine is verify/properties/fuzz_engine).

#include "verify/cli/fuzz.hpp"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <ostream>

namespace slaterlab {
namespace {

/// While it lives, file descriptor 1 goes to /dev/null: an external kernel's
/// own prints to stdout (a debugging printf, a Fortran WRITE) would
/// otherwise interleave with the report, or fill it, since the kernel runs
/// in this process. The report is written once it is gone; stderr (the
/// progress line, the kernel's stderr) is left alone.
class StdoutSilenced {
 public:
  StdoutSilenced() {
    std::fflush(stdout);
    saved_ = ::dup(STDOUT_FILENO);
    const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (saved_ >= 0 && null >= 0) ::dup2(null, STDOUT_FILENO);
    if (null >= 0) ::close(null);
  }
  ~StdoutSilenced() {
    std::fflush(stdout);  // what the kernels left in stdio's buffer goes to /dev/null
    if (saved_ >= 0) {
      ::dup2(saved_, STDOUT_FILENO);
      ::close(saved_);
    }
  }
  StdoutSilenced(const StdoutSilenced&) = delete;
  StdoutSilenced& operator=(const StdoutSilenced&) = delete;

 private:
  int saved_ = -1;
};

FuzzReport run_fuzz_quietly(const FuzzArgs& args, std::ostream* progress) {
  if (args.kernels.empty()) return run_fuzz(args, progress);
  const StdoutSilenced silenced;
  return run_fuzz(args, progress);
}

void print_failure(std::ostream& out, const FuzzFailure& f) {
  fmt::print(out, "FAILED {} {}\n", f.config.label, f.failure.property);
  fmt::print(out, "  {}\n", f.failure.message);
  fmt::print(out, "  counterexample ({} shrink steps{}): {}\n", f.shrink_steps,
             f.shrink_cut ? ", cut short by --shrink-seconds" : "",
             fmt::streamed(f.counterexample));
  fmt::print(out, "  reproduction seed {}; reproduce with:\n    {}\n", f.seed, f.reproduce);
  fmt::print(out, "  saved {}\n", f.file.string());
}

void print_summary(std::ostream& out, const FuzzArgs& args, const FuzzReport& r) {
  fmt::print(out,
             "\n| configuration | cases | ratios compared | log-dets compared | "
             "residuals compared | breakdown probes | cycle ratios compared | failures |\n");
  fmt::print(out, "|---|---:|---:|---:|---:|---:|---:|---:|\n");
  int cases = 0;
  for (const FuzzTally& t : r.tallies) {
    cases += t.cases;
    fmt::print(out, "| {} | {} | {} of {} | {} | {} | {} | {} of {} | {} |\n", t.config.label,
               t.cases, t.stats.ratios_checked, t.stats.ratios, t.stats.log_dets_checked,
               t.stats.residuals_checked, t.stats.breakdowns_checked, t.stats.cycles_checked,
               t.stats.cycles, t.failures);
  }
  fmt::print(out,
             "\nfuzz: {} configurations, {} case checks, {} failure{}; seed {}, {} "
             "batch{}, N <= {}, {:.1f} s\n",
             r.tallies.size(), cases, r.failures.size(), r.failures.size() == 1 ? "" : "s", r.seed,
             r.batches, r.batches == 1 ? "" : "es", args.max_n, r.seconds);
}

}  // namespace

int fuzz_command(const FuzzArgs& args, std::ostream& out, std::ostream* progress) {
  const FuzzReport report = run_fuzz_quietly(args, args.quiet ? nullptr : progress);
  for (const FuzzFailure& f : report.failures) print_failure(out, f);
  print_summary(out, args, report);
  return report.failures.empty() ? 0 : 1;
}

}  // namespace slaterlab
