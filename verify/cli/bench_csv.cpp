#include "verify/cli/bench_csv.hpp"

#include <fmt/format.h>

#include <ostream>
#include <set>
#include <string>
#include <vector>

namespace slaterlab::bench_detail {
namespace {

// Google Benchmark's CSV reporter (deprecated, to be removed) writes its
// header from the first case it sees and aborts ("All counters must be
// present in each run") when a later case carries a counter the header
// lacks; our cases carry different ones (bytes for the triad, flops for GEMM
// and the updates). This one holds every run back and writes them when the
// run ends, under one header: the library's columns, then the union of the
// counters (items_per_second and bytes_per_second among them), a case
// without one leaving its field empty. Names and texts are quoted as the
// library quotes them; numbers are written to round-trip.
class UnionCsvReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context& context) override {
    PrintBasicContext(&GetErrorStream(), context);
    return true;
  }
  void ReportRuns(const std::vector<Run>& runs) override {
    runs_.insert(runs_.end(), runs.begin(), runs.end());
  }
  void Finalize() override {
    std::set<std::string> counters;
    for (const Run& run : runs_)
      for (const auto& counter : run.counters) counters.insert(counter.first);
    std::ostream& out = GetOutputStream();
    out << "name,iterations,real_time,cpu_time,time_unit,label,error_occurred,error_message";
    for (const std::string& name : counters) out << ',' << quoted(name);
    out << '\n';
    for (const Run& run : runs_) {
      out << quoted(run.benchmark_name()) << ',';
      if (run.error_occurred) {
        out << ",,,,";
      } else {
        out << fmt::format("{},{},{},{},", run.iterations, run.GetAdjustedRealTime(),
                           run.GetAdjustedCPUTime(), benchmark::GetTimeUnitString(run.time_unit));
      }
      out << quoted(run.report_label) << ',' << (run.error_occurred ? "true" : "false") << ','
          << quoted(run.error_message);
      for (const std::string& name : counters) {
        out << ',';
        const auto it = run.counters.find(name);
        if (it != run.counters.end()) out << fmt::format("{}", double(it->second.value));
      }
      out << '\n';
    }
    out.flush();
  }

 private:
  /// "text", an inner " doubled (RFC 4180).
  static std::string quoted(const std::string& text) {
    std::string q = "\"";
    for (const char c : text) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + '"';
  }

  std::vector<Run> runs_;
};

}  // namespace

std::unique_ptr<benchmark::BenchmarkReporter> csv_reporter_if(bool csv) {
  return csv ? std::make_unique<UnionCsvReporter>() : nullptr;
}

}  // namespace slaterlab::bench_detail
