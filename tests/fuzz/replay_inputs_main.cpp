// A main() for a fuzz target without libFuzzer: runs the target on every file
// named (or in every directory named), so that the kept regression inputs
// and seeds are checked by the ordinary test suite with any compiler.

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <cstdlib>
#include <cstring>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

/// --random=N: N inputs of 1 to 512 bytes from a fixed-seed generator, so
/// that the suite also runs the target on inputs no one chose.
std::vector<std::vector<char>> random_inputs(std::size_t count) {
  std::uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&] {  // xorshift64
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  std::vector<std::vector<char>> out(count);
  for (auto& input : out) {
    input.resize(1 + next() % 512);
    for (char& c : input) c = char(next());
  }
  return out;
}

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> inputs;
  std::size_t random = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--random=", 9) == 0) {
      random = std::strtoul(argv[i] + 9, nullptr, 10);
      continue;
    }
    const std::filesystem::path arg = argv[i];
    if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::directory_iterator(arg))
        if (entry.is_regular_file() && entry.path().filename() != "README.md")
          inputs.push_back(entry.path());
    } else {
      inputs.push_back(arg);
    }
  }
  for (const auto& input : inputs) {
    std::ifstream in(input, std::ios::binary);
    const std::vector<char> bytes{std::istreambuf_iterator<char>(in), {}};
    std::printf("%s\n", input.c_str());
    std::fflush(stdout);
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  for (const auto& bytes : random_inputs(random))
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  std::printf("%zu inputs and %zu random inputs ran\n", inputs.size(), random);
  return 0;
}
