// The kept corpus of counterexamples: writing, reading and naming entries
// (contract in corpus.hpp).

#include "verify/properties/corpus.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "verify/inputs/replay.hpp"
#include "verify/properties/hash.hpp"
#include "verify/store/results.hpp"

namespace slaterlab {

namespace fs = std::filesystem;

namespace {

std::uint64_t case_checksum(const Case& c) {
  std::uint64_t h = fnv1a(c.initial.data(), sizeof(double) * std::size_t(c.initial.size()));
  for (const CaseMove& m : c.moves) {
    const std::int64_t k = m.electron;
    const char a = m.accept ? 1 : 0;
    h = fnv1a(&k, sizeof k, h);
    h = fnv1a(m.column.data(), sizeof(double) * std::size_t(m.column.size()), h);
    h = fnv1a(&a, 1, h);
  }
  const std::int64_t probe[2] = {c.probe_column, c.probe_source};
  return fnv1a(probe, sizeof probe, h);
}

[[noreturn]] void bad_entry(const fs::path& path, const std::string& what) {
  throw std::invalid_argument("corpus file " + path.string() + ": " + what);
}

template <class T>
T parse_number(const fs::path& path, const std::string& key, const std::string& text) {
  std::istringstream in(text);
  T value{};
  in >> value;
  if (in.fail() || !in.eof()) {
    bad_entry(path, "attribute '" + key + "' = '" + text + "' is not a number");
  }
  return value;
}

}  // namespace

std::string corpus_file_name(const std::string& label, const std::string& property, const Case& c) {
  std::string safe = label;
  for (char& ch : safe)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_') ch = '_';
  return fmt::format("{}-{}-{:08x}.h5", safe, property, case_checksum(c) & 0xffffffffu);
}

void write_corpus_entry(const fs::path& path, const CorpusEntry& e) {
  const Case& c = e.property_case;
  ReplayData data;
  data.initial = c.initial;
  data.columns.resize(c.n(), Eigen::Index(c.moves.size()));
  // A case of update cycles has moves/cycle and no decisions (schema 2).
  if (c.has_cycles()) {
    data.cycle.emplace();
    for (std::size_t i = 0; i < c.cycles.size(); ++i)
      data.cycle->insert(data.cycle->end(), std::size_t(c.cycles[i]), std::int64_t(i));
  } else {
    data.accept.emplace();
  }
  for (std::size_t i = 0; i < c.moves.size(); ++i) {
    data.electron.push_back(c.moves[i].electron);
    data.columns.col(Eigen::Index(i)) = c.moves[i].column;
    if (data.accept) data.accept->push_back(c.moves[i].accept);
  }
  data.metadata = {
      {"strategy", e.strategy},
      {"label", e.label},
      {"precision", std::string(to_string(e.options.precision))},
      {"recompute_every", std::to_string(e.options.recompute_every)},
      {"breakdown", fmt::format("{:.17g}", e.options.breakdown)},
      {"k", std::to_string(e.options.k)},
      {"variant", e.options.variant},
      {"property", e.property},
      {"message", e.message},
      {"status", e.status},
      {"seed", std::to_string(e.seed)},
      {"workload", e.workload},
      {"reproduce", e.reproduce},
      {"probe_column", std::to_string(c.probe_column)},
      {"probe_source", std::to_string(c.probe_source)},
      {"slaterlab_version", SLATERLAB_VERSION " (" SLATERLAB_GIT_COMMIT ")"},
      {"created", utc_timestamp()},
  };
  if (!e.options.library.empty()) data.metadata.emplace_back("library", e.options.library);
  // Never a half-written entry under the final name.
  const fs::path partial =
      path.parent_path() / fmt::format(".{}.partial", path.filename().string());
  write_replay(partial, data);
  std::error_code ec;
  fs::rename(partial, path, ec);
  if (ec) {
    fs::remove(partial, ec);
    throw ReplayError("replay file " + path.string() + ": cannot write: " + ec.message());
  }
}

CorpusEntry read_corpus_entry(const fs::path& path) {
  const ReplayData data = read_replay(path);
  std::map<std::string, std::string> attr(data.metadata.begin(), data.metadata.end());
  auto get = [&](const std::string& key) -> std::optional<std::string> {
    const auto it = attr.find(key);
    if (it == attr.end()) return std::nullopt;
    return it->second;
  };
  auto required = [&](const std::string& key) {
    auto v = get(key);
    if (!v) bad_entry(path, "missing attribute '" + key + "'");
    return *v;
  };
  if (!data.accept && !data.cycle) {
    bad_entry(path, "missing dataset 'moves/accept' or 'moves/cycle' (a case has its decisions "
                    "or its update cycles)");
  }

  CorpusEntry e;
  e.property_case.initial = data.initial;
  for (std::int64_t i = 0; i < data.moves(); ++i) {
    const std::size_t m = std::size_t(i);
    e.property_case.moves.push_back({data.electron[m], data.columns.col(Eigen::Index(i)),
                            data.accept ? bool((*data.accept)[m]) : true});
    // read_replay checked that cycles are runs numbered 0, 1, ...
    if (data.cycle && (m == 0 || (*data.cycle)[m] != (*data.cycle)[m - 1]))
      e.property_case.cycles.push_back(0);
    if (data.cycle) ++e.property_case.cycles.back();
  }
  e.strategy = required("strategy");
  try {
    e.options.precision = parse_precision(required("precision"));
  } catch (const std::invalid_argument& error) {
    bad_entry(path, error.what());
  }
  e.property = required("property");
  e.status = required("status");
  if (auto v = get("recompute_every"))
    e.options.recompute_every = parse_number<int>(path, "recompute_every", *v);
  if (auto v = get("breakdown")) e.options.breakdown = parse_number<double>(path, "breakdown", *v);
  if (auto v = get("k")) e.options.k = parse_number<int>(path, "k", *v);
  if (auto v = get("variant")) e.options.variant = *v;
  if (auto v = get("library")) e.options.library = *v;
  if (auto v = get("seed")) e.seed = parse_number<std::uint64_t>(path, "seed", *v);
  e.property_case.probe_source = e.property_case.n() > 1 ? 1 : 0;
  if (auto v = get("probe_column"))
    e.property_case.probe_column = parse_number<Eigen::Index>(path, "probe_column", *v);
  if (auto v = get("probe_source"))
    e.property_case.probe_source = parse_number<Eigen::Index>(path, "probe_source", *v);
  e.label = get("label").value_or("");
  e.message = get("message").value_or("");
  e.workload = get("workload").value_or("");
  e.reproduce = get("reproduce").value_or("");
  return e;
}

std::vector<fs::path> corpus_files(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".h5") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}


}  // namespace slaterlab
