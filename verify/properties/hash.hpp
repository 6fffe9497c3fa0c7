#pragma once
// The hashes of the fuzz engine and the corpus: FNV-1a (64 bit) of bytes,
// for the seeds of runs and the checksums of cases in corpus file names,
// and splitmix64 to mix a seed. Pure functions: the same input gives the
// same value on every platform of the same byte order.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace slaterlab {

/// FNV-1a of `size` bytes, continuing from `h`.
inline std::uint64_t fnv1a(const void* data, std::size_t size,
                           std::uint64_t h = 14695981039346656037ull) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  return h;
}

inline std::uint64_t fnv1a(std::string_view s) { return fnv1a(s.data(), s.size()); }

/// One step of splitmix64 (Steele, Lea & Flood, OOPSLA 2014): mixes a seed.
inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace slaterlab
