// kernc cache explain SPEC.json --kernel NAME --target sm_90[,...]: "why did this
// recompile?", after the fact. For each variant of one spec kernel and each device
// architecture it says which cached entry would serve it (through the architecture ladder,
// as `cache check` and a call do), and for a variant that none serves, the nearest entry
// of the user's cache directory and the inputs of its key that differ from this kernel's:
// an option, a header, the compiler release, the source. Entries record their key's inputs
// (NOTE [ entry description ] in src/cache/entry_format.hpp); entries of an older
// kernc record none and are only counted.

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli_context.hpp"
#include "kernc/cache_directory.hpp"
#include "kernc/spec_file.hpp"

namespace kernc::cli {

namespace {

using Inputs = std::vector<std::pair<std::string, std::string>>;

// An entry of the user's cache that records its inputs.
struct DescribedEntry {
  std::string key;
  std::string kernel;
  std::string variant;
  std::string target;
  Inputs inputs;
};

// One field whose values differ: what the entry was built from, and what the kernel needs now.
struct InputDifference {
  std::string field;
  std::vector<std::string> entry;
  std::vector<std::string> wanted;
};

std::vector<InputDifference> differences(const Inputs& entry, const Inputs& wanted) {
  // Fields may repeat (flag, name_expr, include_dir): compare the lists of values per field,
  // in the order the wanted inputs list the fields, then fields only the entry has.
  std::vector<std::string> order;
  std::map<std::string, std::pair<std::vector<std::string>, std::vector<std::string>>> values;
  for (const auto& [field, value] : wanted) {
    if (!values.count(field)) order.push_back(field);
    values[field].second.push_back(value);
  }
  for (const auto& [field, value] : entry) {
    if (!values.count(field)) order.push_back(field);
    values[field].first.push_back(value);
  }
  std::vector<InputDifference> out;
  for (const auto& field : order) {
    const auto& [had, needs] = values[field];
    if (had != needs) out.push_back({field, had, needs});
  }
  return out;
}

std::vector<DescribedEntry> described_entries(const Config& config, std::size_t* undescribed) {
  std::vector<DescribedEntry> entries;
  if (!config.cache_config().disk_enabled) return entries;
  CacheDirectory store(config.cache_config());
  for (const auto& file : store.list()) {
    std::string problem;
    auto entry = store.read(file, &problem);
    if (!entry) continue;  // damaged: `cache verify` reports it
    const auto metadata = nlohmann::json::parse(entry->metadata_json);
    if (!metadata.contains("inputs")) {
      ++*undescribed;
      continue;
    }
    DescribedEntry described{file.key, "", "", metadata.value("target", ""), {}};
    if (metadata.contains("kernel")) {
      const auto& kernel = metadata["kernel"];
      described.kernel = kernel.value("name", "");
      const std::string signature = kernel.value("signature", ""), layout = kernel.value("layout", "");
      described.variant = signature.empty() ? layout : layout.empty() ? signature : signature + " " + layout;
    }
    for (const auto& input : metadata["inputs"]) {
      described.inputs.emplace_back(input.at(0).get<std::string>(), input.at(1).get<std::string>());
    }
    entries.push_back(std::move(described));
  }
  return entries;
}

std::string joined(const std::vector<std::string>& values) {
  return values.empty() ? std::string("(none)") : fmt::format("{}", fmt::join(values, ", "));
}

}  // namespace

int run_cache_explain(const std::string& spec_path, const std::string& kernel, const std::string& target_list,
                      const std::string& format, const Config& config) {
  Spec spec = load_spec(spec_path);
  spec.find(kernel);  // throws, listing the spec's kernels, for an unknown name
  std::vector<Target> devices;
  for (const auto& name : split_list(target_list)) devices.push_back(Target::parse(name));
  if (devices.empty()) throw Error(ErrorCode::invalid_argument, "--target names no target");

  std::vector<SpecVariant> variants;
  for (auto& variant : spec.variants()) {
    if (variant.kernel == kernel) variants.push_back(std::move(variant));
  }
  Cache cache(config.cache_config());
  Compilers compilers(config.compiler_paths());
  std::size_t undescribed = 0;
  const std::vector<DescribedEntry> entries = described_entries(config, &undescribed);

  nlohmann::json report = {{"kernel", kernel}, {"locations", cache.locations()}, {"variants", nlohmann::json::array()},
                           {"entries_without_inputs", undescribed}};
  std::size_t missing = 0;
  for (const Target& device : devices) {
    for (const auto& variant : variants) {
      nlohmann::json row = {{"target", device.str()}, {"variant", variant.description}};
      if (auto hit = cache.find(variant.program, binary_ladder(device))) {
        row["served_by"] = {{"key", hit->key},
                            {"target", hit->program->target.str()},
                            {"compiler", hit->program->compiler},
                            {"location", hit->location.empty() ? "memory" : hit->location}};
        report["variants"].push_back(row);
        continue;
      }
      ++missing;
      // The inputs this variant's key hashes for the device's own binary (the first rung).
      const Inputs wanted = cache.key_inputs(variant.program, device, compilers.get(device.backend()));
      const DescribedEntry* nearest = nullptr;
      std::vector<InputDifference> nearest_differences;
      for (const auto& entry : entries) {
        auto found = differences(entry.inputs, wanted);
        // Fewest differing fields; on a tie, an entry of this kernel.
        bool better = !nearest || found.size() < nearest_differences.size() ||
                      (found.size() == nearest_differences.size() && entry.kernel == kernel && nearest->kernel != kernel);
        if (better) {
          nearest = &entry;
          nearest_differences = std::move(found);
        }
      }
      if (nearest) {
        nlohmann::json differ = nlohmann::json::array();
        for (const auto& d : nearest_differences) {
          differ.push_back({{"field", d.field}, {"entry", d.entry}, {"wanted", d.wanted}});
        }
        row["nearest"] = {{"key", nearest->key},       {"kernel", nearest->kernel}, {"variant", nearest->variant},
                          {"target", nearest->target}, {"differences", differ}};
      }
      report["variants"].push_back(row);
    }
  }
  report["ok"] = missing == 0;

  if (format == "json") {
    fmt::print("{}\n", report.dump(2));
    return missing == 0 ? kExitOk : kExitNotPrecompiled;
  }
  const auto locations = cache.locations();
  fmt::print("kernel {}: {} variant(s); searched {}\n", kernel, variants.size(),
             locations.empty() ? std::string("no cache directory") : fmt::format("{}", fmt::join(locations, ", ")));
  for (const auto& row : report["variants"]) {
    const std::string target = row["target"].get<std::string>();
    const std::string variant = row["variant"].get<std::string>();
    if (row.contains("served_by")) {
      const auto& by = row["served_by"];
      fmt::print("{:<8} {}: served by {} ({}, {}, from {})\n", target, variant, short_key(by["key"].get<std::string>()),
                 by["target"].get<std::string>(), by["compiler"].get<std::string>(), by["location"].get<std::string>());
      continue;
    }
    if (!row.contains("nearest")) {
      fmt::print("{:<8} {}: no entry serves it, and no entry records its inputs to compare\n", target, variant);
      continue;
    }
    const auto& nearest = row["nearest"];
    const std::string nearest_kernel = nearest["kernel"].get<std::string>();
    const std::string nearest_variant = nearest["variant"].get<std::string>();
    const std::string of = nearest_kernel.empty()    ? std::string("no recorded kernel")
                           : nearest_variant.empty() ? nearest_kernel
                                                     : nearest_kernel + " " + nearest_variant;
    fmt::print("{:<8} {}: no entry serves it; the nearest, {} ({}, for {}), differs in {} input(s):\n", target, variant,
               short_key(nearest["key"].get<std::string>()), of, nearest["target"].get<std::string>(),
               nearest["differences"].size());
    for (const auto& d : nearest["differences"]) {
      fmt::print("    {:<24} entry: {}\n    {:<24} wanted: {}\n", d["field"].get<std::string>(),
                 joined(d["entry"].get<std::vector<std::string>>()), "",
                 joined(d["wanted"].get<std::vector<std::string>>()));
    }
  }
  if (undescribed > 0) {
    fmt::print("note: {} entr{}, written by an older kernc, record{} no inputs and {} not compared\n", undescribed,
               undescribed == 1 ? "y" : "ies", undescribed == 1 ? "s" : "", undescribed == 1 ? "was" : "were");
  }
  return missing == 0 ? kExitOk : kExitNotPrecompiled;
}

}  // namespace kernc::cli
