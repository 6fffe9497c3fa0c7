// Tests of how the command line ends (verify/cli/errors.hpp): whatever is
// thrown, one line on stderr and the documented exit code, never an abort.
#include "verify/cli/errors.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "verify/store/hdf5_store.hpp"

namespace slaterlab {
namespace {

struct Reported {
  int code = -1;
  std::string line;
};

template <class Exception>
Reported report(const Exception& e) {
  std::FILE* out = std::tmpfile();
  Reported r;
  r.code = report_exception(std::make_exception_ptr(e), out);
  std::rewind(out);
  for (int c; (c = std::fgetc(out)) != EOF;) r.line += char(c);
  std::fclose(out);
  return r;
}

void expect_one_line(const Reported& r, const std::string& start) {
  EXPECT_EQ(r.line.rfind(start, 0), 0u) << r.line;
  EXPECT_EQ(r.line.find('\n'), r.line.size() - 1) << r.line;
}

TEST(Errors, BadInputAndSizesAreExitTwo) {
  Reported r = report(std::invalid_argument("study.toml: 'n' must be\nan integer"));
  EXPECT_EQ(r.code, kExitBadInput);
  expect_one_line(r, "slaterlab: error: study.toml: 'n' must be an integer");
  r = report(IoError("cannot open x.h5"));
  EXPECT_EQ(r.code, kExitBadInput);
  expect_one_line(r, "slaterlab: error: cannot open x.h5");
  // What a declared size of 2^62 rows makes a container throw.
  bool thrown = false;
  try {
    std::vector<double> v;
    v.resize(std::size_t(1) << 62);
  } catch (...) {
    thrown = true;
    std::FILE* out = std::tmpfile();
    EXPECT_EQ(report_exception(std::current_exception(), out), kExitBadInput);
    std::fclose(out);
  }
  EXPECT_TRUE(thrown);
  r = report(std::length_error("vector::_M_default_append"));
  EXPECT_EQ(r.code, kExitBadInput);
  expect_one_line(r, "slaterlab: error: a size too large for this machine (vector::");
  r = report(std::bad_array_new_length());
  EXPECT_EQ(r.code, kExitBadInput);
  expect_one_line(r, "slaterlab: error: out of memory");
  r = report(std::bad_alloc());
  EXPECT_EQ(r.code, kExitBadInput);
  expect_one_line(r, "slaterlab: error: out of memory");
  r = report(std::runtime_error("mpi: truncated message"));
  EXPECT_EQ(r.code, kExitBadInput);
  expect_one_line(r, "slaterlab: error: mpi: truncated message");
}

TEST(Errors, BugsAreInternalErrorsWithTheirOwnCode) {
  Reported r = report(std::logic_error("MpReference::accept: no pending proposal"));
  EXPECT_EQ(r.code, kExitInternal);
  expect_one_line(r, "slaterlab: internal error: MpReference::accept: no pending proposal");
  r = report(std::out_of_range("results writer: unknown experiment handle"));
  EXPECT_EQ(r.code, kExitInternal);
  r = report(42);  // not a std::exception
  EXPECT_EQ(r.code, kExitInternal);
  expect_one_line(r, "slaterlab: internal error: an exception of unknown type");
  EXPECT_NE(kExitInternal, kExitBadInput);
  EXPECT_NE(kExitInternal, kExitCheckFailed);
}

TEST(Errors, OneLineKeepsTheTextOnOneLine) {
  EXPECT_EQ(one_line("a\nb\r\nc\n\n"), "a b  c");
  EXPECT_EQ(one_line(""), "");
}

}  // namespace
}  // namespace slaterlab
