#pragma once
// The output writers of slaterlab regress: a RegressReport as JUnit XML for
// CI dashboards and as a Markdown summary for people. Pure functions of the
// report: no file access, no judging (the rules are in regress.hpp).

#include <string>
#include <vector>

#include "verify/report/comparison.hpp"

namespace slaterlab {

/// JUnit XML (the Ant/Jenkins form GitLab, GitHub actions and Jenkins read):
/// <testsuites> with one <testsuite> per experiment (file-level comparisons
/// in a suite named "baseline"), one <testcase> per comparison, named after
/// the metric, classname "<experiment>.<strategy>" (dots inside the names
/// become '_', so that dashboards splitting at dots show experiment and
/// strategy), and a <failure message="..."> carrying the figures.
std::string format_junit(const RegressReport& report, const std::string& name);

/// A Markdown summary: verdict, provenance lines, the failures, then every
/// comparison with its status, then the notes.
std::string format_regress_summary(const RegressReport& report, const std::string& title,
                                   const std::vector<std::string>& provenance);

}  // namespace slaterlab
