// A `slaterlab` of one's own: the toys (toys.hpp) registered, then the
// command line as the shipped binary runs it (verify/cli/command_line.hpp).
// Every command then takes them: `slaterlab_with_toys run study.toml`
// with `name = "toy-refresh"`, `workload = "toy-shift"` or `orbitals =
// "toy-rounded"`, and fuzz, bench, regress and table alike.

#include "tests/extending/toys.hpp"
#include "verify/cli/command_line.hpp"

extern "C" void openblas_set_num_threads(int);

int main(int argc, char** argv) {
  openblas_set_num_threads(1);  // as the shipped binary: reproducible, per core
  slaterlab::toys::register_toy_strategy();
  slaterlab::toys::register_toy_workload();
  slaterlab::toys::register_toy_orbitals();
  return slaterlab::run_command_line(argc, argv);
}
