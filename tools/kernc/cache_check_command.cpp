// kernc cache check SPEC.json --target sm_86[,cpu-x86-64-v3,...]: the CI gate for shipped caches. Exits
// 0 only when every variant of every kernel of the spec can be served for each device
// architecture from the caches alone — the user's cache and the read-only tiers, through
// the architecture ladder (see NOTE [ architecture ladder ] in src/kernels/engine.cpp) —
// with no compiler loaded. Otherwise it lists what is missing and exits 8.

#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli_context.hpp"
#include "kernc/spec_file.hpp"

namespace kernc::cli {

int run_cache_check(const std::string& spec_path, const std::string& target_list, const std::string& format,
                    const Config& config) {
  Spec spec = load_spec(spec_path);
  std::vector<Target> devices;
  for (const auto& name : split_list(target_list)) {
    Target target = Target::parse(name);
    if (target.binary_kind() == BinaryKind::ptx) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("--target names device architectures (sm_NN, gfxNNN, cpu-x86-64-vN, cpu), not {}: a cache "
                              "is checked for the devices that will run it",
                              name));
    }
    devices.push_back(target);
  }
  if (devices.empty()) throw Error(ErrorCode::invalid_argument, "--target names no target");
  Cache cache(config.cache_config());
  const std::vector<SpecVariant> variants = spec.variants();

  nlohmann::json report = {{"ok", true}, {"locations", cache.locations()}, {"targets", nlohmann::json::array()},
                           {"missing", nlohmann::json::array()}};
  for (const auto& problem : cache.tier_problems()) report["problems"].push_back(problem);
  if (!cache.disk_problem().empty()) report["problems"].push_back(cache.disk_problem());
  std::size_t missing = 0;
  for (const Target& device : devices) {
    const std::vector<Target> ladder = binary_ladder(device);
    std::map<std::string, std::size_t> served_by;
    std::size_t found = 0;
    for (const auto& variant : variants) {
      auto hit = cache.find(variant.program, ladder);
      if (hit) {
        ++found;
        ++served_by[hit->program->target.str()];
        continue;
      }
      ++missing;
      report["missing"].push_back({{"target", device.str()}, {"kernel", variant.kernel}, {"variant", variant.description}});
    }
    report["targets"].push_back(
        {{"target", device.str()}, {"variants", variants.size()}, {"servable", found}, {"served_by", served_by}});
  }
  report["ok"] = missing == 0;

  if (format == "json") {
    fmt::print("{}\n", report.dump(2));
  } else {
    const auto locations = cache.locations();
    fmt::print("searched {}\n", locations.empty() ? std::string("no cache directory") : fmt::format("{}", fmt::join(locations, ", ")));
    if (report.contains("problems")) {
      for (const auto& problem : report["problems"]) fmt::print("note: {}\n", problem.get<std::string>());
    }
    for (const auto& row : report["targets"]) {
      std::string by;
      for (const auto& [target, count] : row["served_by"].items()) {
        by += fmt::format("{}{} from {}", by.empty() ? "" : ", ", count.get<std::size_t>(), target);
      }
      fmt::print("{:<8} {} of {} variant(s) servable{}\n", row["target"].get<std::string>(),
                 row["servable"].get<std::size_t>(), row["variants"].get<std::size_t>(),
                 by.empty() ? "" : " (" + by + ")");
    }
    for (const auto& row : report["missing"]) {
      fmt::print("missing  {:<8} {:<14} {}\n", row["target"].get<std::string>(), row["kernel"].get<std::string>(),
                 row["variant"].get<std::string>());
    }
    if (missing > 0) {
      fmt::print(stderr, "kernc: {} variant(s) cannot be served without compiling; add them with: kernc precompile {} "
                         "--target {}\n",
                 missing, spec_path, target_list);
    }
  }
  return missing == 0 ? kExitOk : kExitNotPrecompiled;
}

}  // namespace kernc::cli
