#pragma once
// A GoogleTest fixture with a private scratch directory (removed afterwards)
// and helpers to write and read files in it and to run the `slaterlab`
// binary as a user would: one place for what the command-line tests share.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace slaterlab::testing {

struct CommandResult {
  int exit_code = -1;  // -1 when the command did not exit normally
  std::string out;
  std::string err;
};

class ScratchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("slaterlab_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  /// Writes `text` to `name` in the scratch directory; returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path(name), std::ios::binary) << text;
    return path(name);
  }

  static std::string slurp(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  /// Runs a shell command with no standard input, capturing both streams.
  CommandResult run_command(const std::string& command) const {
    const std::string out = path(".stdout"), err = path(".stderr");
    const int status =
        std::system((command + " >'" + out + "' 2>'" + err + "' </dev/null").c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
  }

#ifdef SLATERLAB_BINARY
  /// Runs `slaterlab ARGS`.
  CommandResult run(const std::string& args) const {
    return run_command(std::string(SLATERLAB_BINARY) + " " + args);
  }
#endif

  std::filesystem::path dir_;
};

}  // namespace slaterlab::testing
