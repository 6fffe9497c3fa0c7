#pragma once
// The CSV reporter of slaterlab bench: Google Benchmark's own aborts when a
// later case carries a counter the first lacked, so this one writes every
// run when the run ends, under one header holding the union of the
// counters (bench_csv.cpp). Internal to verify/cli.

#include <benchmark/benchmark.h>

#include <memory>

namespace slaterlab::bench_detail {

/// Our reporter where csv is asked for; nullptr lets the library build its own.
std::unique_ptr<benchmark::BenchmarkReporter> csv_reporter_if(bool csv);

}  // namespace slaterlab::bench_detail
