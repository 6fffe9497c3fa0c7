#include "verify/inputs/workload_registry.hpp"

#include <map>
#include <stdexcept>

#include "verify/inputs/generated_workloads.hpp"
#include "verify/inputs/replay_workload.hpp"
#include "verify/inputs/walk_workloads.hpp"
#include "verify/inputs/workload_base.hpp"

namespace slaterlab {
namespace {

using namespace workload_detail;

/// The registered kinds, in registration order (the built-in ones first).
struct Registry {
  std::vector<std::string> kinds, cycle_kinds, file_kinds;
  std::map<std::string, WorkloadFactory> make;

  void add(WorkloadKind kind) {
    if (kind.name.empty() || kind.name == "replay" || make.count(kind.name))
      throw std::invalid_argument("workload: the kind '" + kind.name + "' is taken");
    if (!kind.make) throw std::invalid_argument("workload: no factory for the kind '" + kind.name + "'");
    (kind.reads_file ? file_kinds : kind.cycles ? cycle_kinds : kinds).push_back(kind.name);
    make.emplace(std::move(kind.name), std::move(kind.make));
  }
};

Registry& registry() {
  static Registry r = [] {
    Registry built_in;
    for (auto& kind : generated_workloads()) built_in.add(std::move(kind));
    for (auto& kind : walk_workloads()) built_in.add(std::move(kind));
    return built_in;
  }();
  return r;
}

}  // namespace

void register_workload(WorkloadKind kind) { registry().add(std::move(kind)); }

std::vector<std::string> known_workloads() { return registry().kinds; }

std::vector<std::string> known_cycle_workloads() { return registry().cycle_kinds; }

std::vector<std::string> known_file_workloads() { return registry().file_kinds; }

std::unique_ptr<Workload> make_workload(const WorkloadSpec& spec) {
  if (spec.kind == "replay") return make_replay_workload(spec);  // validates its file
  const Registry& r = registry();
  const auto it = r.make.find(spec.kind);
  if (it == r.make.end()) {
    bad("unknown kind '" + spec.kind + "' (valid: " + join(r.kinds) + ", " + join(r.cycle_kinds) +
        ", " + join(r.file_kinds) + ", replay)");
  }
  validate_workload_fields(spec);
  return it->second(spec);
}

}  // namespace slaterlab
