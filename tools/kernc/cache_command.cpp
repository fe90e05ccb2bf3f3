// kernc cache stats|ls|verify|prune|clear|inspect|merge|check|explain: look after the disk cache.

#include <unistd.h>

#include <algorithm>
#include <ctime>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_context.hpp"
#include "kernc/cache_directory.hpp"
#include "kernc/cache_stats.hpp"
#include "kernc/files.hpp"

namespace kernc::cli {

namespace {

struct CacheCommandOptions {
  std::string format = "text";
  bool fix = false;
  bool zero = false;
  std::string max_size;
  std::string key;
  std::string kernel;  ///< ls, inspect, explain: only entries of this kernel
  std::string extract;
  std::string spec;
  std::string targets;
  std::vector<std::string> merge_sources;
};

std::string local_time(std::time_t when) {
  std::tm local{};
  localtime_r(&when, &local);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &local);
  return text;
}

// The cache directory the subcommands work on (CacheDirectory refuses an unusable one:
// looking after the cache is the whole point of the command).
CacheDirectory open_store(const Config& config) { return CacheDirectory(config.cache_config()); }

nlohmann::json stats_json(const CacheStats& s) {
  return {{"memory_hits", s.memory_hits}, {"disk_hits", s.disk_hits},   {"read_only_hits", s.read_only_hits},
          {"fallback_hits", s.fallback_hits}, {"compiles", s.compiles},
          {"driver_cache_hits", s.driver_cache_hits},
          {"compile_failures", s.compile_failures}, {"compile_ms", s.compile_ms}, {"load_ms", s.load_ms},
          {"corrupt_entries", s.corrupt_entries}, {"evictions", s.evictions}, {"store_failures", s.store_failures},
          {"remote_hits", s.remote_hits}, {"remote_misses", s.remote_misses}, {"remote_rejected", s.remote_rejected},
          {"remote_errors", s.remote_errors}, {"remote_timeouts", s.remote_timeouts},
          {"remote_skipped", s.remote_skipped}, {"remote_writes", s.remote_writes},
          {"remote_bytes_read", s.remote_bytes_read}, {"remote_bytes_written", s.remote_bytes_written},
          {"remote_ms", s.remote_ms}};
}

int run_stats(const CacheCommandOptions& options, const Config& config) {
  auto store = open_store(config);
  if (options.zero) {
    store.reset_stats();
    fmt::print("statistics zeroed\n");
    return kExitOk;
  }
  auto stats = store.read_stats();
  auto entries = store.list();
  std::uint64_t bytes = 0;
  for (const auto& entry : entries) bytes += entry.size;
  const CachePrecompiledHeaders pch = store.precompiled_headers();
  if (options.format == "json") {
    nlohmann::json out = stats_json(stats);
    out["directory"] = store.root();
    out["entries"] = entries.size();
    out["size_bytes"] = bytes;
    out["precompiled_header_files"] = pch.files;
    out["precompiled_header_bytes"] = pch.bytes;
    out["max_size_bytes"] = config.cache_max_size.value;
    out["remote_cache"] = config.remote_cache.value ? config.remote_cache.value->redacted() : "";
    fmt::print("{}\n", out.dump(2));
    return kExitOk;
  }
  fmt::print("cache directory   {}\n", store.root());
  fmt::print("entries           {}\n", entries.size());
  fmt::print("size              {} of {} ({})\n", format_size(bytes), format_size(config.cache_max_size.value),
             config.cache_max_size.source);
  // Not entries, and outside the size cap: the compilers' own, removed when unused for an hour.
  fmt::print("precompiled hdrs  {} file(s), {} (outside the size cap; removed by cache clear, or unused for an hour)\n",
             pch.files, format_size(pch.bytes));
  fmt::print("memory hits       {}\n", stats.memory_hits);
  fmt::print("disk hits         {}\n", stats.disk_hits);
  fmt::print("read only hits    {}\n", stats.read_only_hits);
  fmt::print("fallback hits     {}\n", stats.fallback_hits);
  fmt::print("compiles          {}\n", stats.compiles);
  fmt::print("compile failures  {}\n", stats.compile_failures);
  fmt::print("driver cache hits {}\n", stats.driver_cache_hits);
  fmt::print("compile time      {:.1f} ms\n", stats.compile_ms);
  fmt::print("load time         {:.1f} ms\n", stats.load_ms);
  fmt::print("corrupt entries   {}\n", stats.corrupt_entries);
  fmt::print("evictions         {}\n", stats.evictions);
  fmt::print("store failures    {}\n", stats.store_failures);
  // Remote counters are summed here by every process that used this cache directory.
  fmt::print("remote cache      {}\n", config.remote_cache.value ? config.remote_cache.value->redacted() : "none");
  fmt::print("remote hits       {}\n", stats.remote_hits);
  fmt::print("remote misses     {}\n", stats.remote_misses);
  fmt::print("remote rejected   {}\n", stats.remote_rejected);
  fmt::print("remote errors     {} ({} timeouts)\n", stats.remote_errors, stats.remote_timeouts);
  fmt::print("remote skipped    {}\n", stats.remote_skipped);
  fmt::print("remote writes     {}\n", stats.remote_writes);
  fmt::print("remote bytes      {} read, {} written\n", format_size(stats.remote_bytes_read),
             format_size(stats.remote_bytes_written));
  fmt::print("remote time       {:.1f} ms\n", stats.remote_ms);
  return kExitOk;
}

// The kernel and variant an entry records (NOTE [ entry description ] in
// src/cache/entry_format.hpp); entries of an older kernc have none and show "?".
std::string entry_kernel(const nlohmann::json& metadata) {
  return metadata.contains("kernel") ? metadata["kernel"].value("name", "") : "";
}

std::string entry_variant(const nlohmann::json& metadata) {
  if (!metadata.contains("kernel")) return "";
  const auto& kernel = metadata["kernel"];
  const std::string signature = kernel.value("signature", ""), layout = kernel.value("layout", "");
  return signature.empty() ? layout : layout.empty() ? signature : signature + " " + layout;
}

int run_ls(const CacheCommandOptions& options, const Config& config) {
  auto store = open_store(config);
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& file : store.list()) {
    std::string problem;
    std::optional<CacheEntryContents> entry;
    try {
      entry = store.read(file, &problem);
    } catch (const Error& error) {
      problem = error.what();
    }
    nlohmann::json row = {{"key", file.key}, {"size_bytes", file.size}, {"last_used", local_time(file.last_used)}};
    if (entry) {
      const auto metadata = nlohmann::json::parse(entry->metadata_json);
      row["target"] = metadata.value("target", "");
      row["compiler"] = metadata.value("compiler", "");
      row["created"] = metadata.value("created", "");
      row["lowered_names"] = metadata.value("lowered_names", nlohmann::json::object());
      row["kernel"] = entry_kernel(metadata);
      row["variant"] = entry_variant(metadata);
    } else {
      row["problem"] = problem;
    }
    // A damaged entry names no kernel, so a filter leaves it out; `cache verify` reports it.
    if (!options.kernel.empty() && row.value("kernel", "") != options.kernel) continue;
    rows.push_back(row);
  }
  if (options.format == "json") {
    fmt::print("{}\n", rows.dump(2));
    return kExitOk;
  }
  // The compiler column as wide as its longest name: a host compiler's ("host-c++ g++ (Debian
  // 12.2.0-14) 12.2.0 (x86_64-linux-gnu)") is much longer than NVRTC's.
  std::size_t compiler_width = 18, kernel_width = 6, variant_width = 7;
  auto shown = [](const nlohmann::json& row, const char* field) {
    std::string value = row.value(field, "");
    return value.empty() ? std::string("?") : value;
  };
  for (auto& row : rows) {
    // Raw code has no variant: "-", where "?" means an entry that records none.
    if (!row.value("kernel", "").empty() && row.value("variant", "").empty()) row["variant"] = "-";
    compiler_width = std::max(compiler_width, shown(row, "compiler").size());
    kernel_width = std::max(kernel_width, shown(row, "kernel").size());
    variant_width = std::max(variant_width, shown(row, "variant").size());
  }
  fmt::print("{:<14} {:<{}} {:<{}} {:<16} {:<{}} {:>10}  {}\n", "KEY", "KERNEL", kernel_width, "VARIANT", variant_width,
             "TARGET", "COMPILER", compiler_width, "SIZE", "LAST USED");
  for (const auto& row : rows) {
    fmt::print("{:<14} {:<{}} {:<{}} {:<16} {:<{}} {:>10}  {}{}\n", short_key(row["key"].get<std::string>()),
               shown(row, "kernel"), kernel_width, shown(row, "variant"), variant_width, shown(row, "target"),
               shown(row, "compiler"), compiler_width, format_size(row["size_bytes"].get<std::uint64_t>()),
               row["last_used"].get<std::string>(),
               row.contains("problem") ? "  BAD: " + row["problem"].get<std::string>() : "");
  }
  fmt::print("{} entr{}\n", rows.size(), rows.size() == 1 ? "y" : "ies");
  return kExitOk;
}

int run_verify(const CacheCommandOptions& options, const Config& config) {
  auto store = open_store(config);
  auto report = store.verify(options.fix);
  if (options.format == "json") {
    nlohmann::json bad = nlohmann::json::array();
    for (const auto& [path, problem] : report.bad) bad.push_back({{"path", path}, {"problem", problem}});
    fmt::print("{}\n", nlohmann::json{{"checked", report.checked}, {"bad", bad}, {"removed", report.removed}}.dump(2));
  } else {
    for (const auto& [path, problem] : report.bad) fmt::print("BAD {}: {}\n", path, problem);
    fmt::print("{} checked, {} bad, {} removed\n", report.checked, report.bad.size(), report.removed);
  }
  return report.bad.size() > report.removed ? kExitCacheDamaged : kExitOk;
}

// Merges every source, then reports: a bad entry in one artifact must not stop the good
// ones of the others, but it must fail the job.
int run_merge(const CacheCommandOptions& options, const Config& config) {
  auto store = open_store(config);
  nlohmann::json sources = nlohmann::json::array();
  CacheMergeReport total;
  for (const auto& directory : options.merge_sources) {
    auto report = store.merge_from(directory);
    nlohmann::json bad = nlohmann::json::array();
    for (const auto& [path, problem] : report.bad) {
      bad.push_back({{"path", path}, {"problem", problem}});
      if (options.format != "json") fmt::print(stderr, "kernc: error: not merged: {}\n", problem);
    }
    sources.push_back({{"directory", directory}, {"copied", report.copied},
                       {"already_present", report.already_present}, {"bytes_copied", report.bytes_copied},
                       {"evicted", report.evicted}, {"bad", bad}});
    if (options.format != "json") {
      fmt::print("{}: {} copied ({}), {} already present, {} bad\n", directory, report.copied,
                 format_size(report.bytes_copied), report.already_present, report.bad.size());
    }
    total.copied += report.copied;
    total.already_present += report.already_present;
    total.bytes_copied += report.bytes_copied;
    total.evicted += report.evicted;
    total.bad.insert(total.bad.end(), report.bad.begin(), report.bad.end());
  }
  if (options.format == "json") {
    fmt::print("{}\n", nlohmann::json{{"directory", store.root()}, {"sources", sources}, {"copied", total.copied},
                                      {"already_present", total.already_present},
                                      {"bytes_copied", total.bytes_copied}, {"evicted", total.evicted},
                                      {"bad", total.bad.size()}}
                           .dump(2));
  } else {
    fmt::print("into {}: {} copied, {} already present, {} bad{}\n", store.root(), total.copied, total.already_present,
               total.bad.size(), total.evicted ? fmt::format(", {} evicted by the size cap", total.evicted) : "");
  }
  return total.bad.empty() ? kExitOk : kExitCacheDamaged;
}

int run_prune(const CacheCommandOptions& options, const Config& config) {
  auto store = open_store(config);
  std::uint64_t cap = options.max_size.empty() ? config.cache_max_size.value : parse_size(options.max_size, "--max-size");
  auto report = store.prune(cap);
  if (options.format == "json") {
    fmt::print("{}\n", nlohmann::json{{"removed", report.removed},
                                      {"freed_bytes", report.freed_bytes},
                                      {"remaining_bytes", report.remaining_bytes},
                                      {"temp_files_removed", report.temp_files_removed}}
                           .dump(2));
  } else {
    fmt::print("removed {} entr{} ({}), {} remain; removed {} abandoned temp file(s)\n", report.removed,
               report.removed == 1 ? "y" : "ies", format_size(report.freed_bytes), format_size(report.remaining_bytes),
               report.temp_files_removed);
  }
  if (report.removed > 0) {
    CacheStats delta;
    delta.evictions = report.removed;
    store.add_stats(delta);
  }
  return kExitOk;
}

int run_clear(const CacheCommandOptions& options, const Config& config) {
  auto store = open_store(config);
  auto removed = store.clear();
  if (options.format == "json") {
    fmt::print("{}\n", nlohmann::json{{"removed", removed}}.dump(2));
  } else {
    fmt::print("removed {} entr{}\n", removed, removed == 1 ? "y" : "ies");
  }
  return kExitOk;
}

int inspect_entry(const CacheCommandOptions& options, const CacheDirectory& store, const CacheEntryFile& file);

// One entry (by key), or with --kernel every entry of that kernel.
int run_inspect(const CacheCommandOptions& options, const Config& config) {
  auto store = open_store(config);
  if (options.key.empty() && options.kernel.empty()) {
    throw Error(ErrorCode::invalid_argument, "cache inspect needs a key (or a prefix of one), or --kernel NAME");
  }
  if (!options.key.empty()) {
    const CacheEntryFile file = store.find(options.key);
    if (!options.kernel.empty()) {
      std::string problem;
      auto entry = store.read(file, &problem);
      const std::string kernel = entry ? entry_kernel(nlohmann::json::parse(entry->metadata_json)) : "";
      if (kernel != options.kernel) {
        throw Error(ErrorCode::not_found, fmt::format("entry {} is {}, not of kernel {}", short_key(file.key),
                                                      kernel.empty() ? "of no recorded kernel" : "of kernel " + kernel,
                                                      options.kernel));
      }
    }
    return inspect_entry(options, store, file);
  }
  // Several entries: blank lines between them, or one JSON array of their objects.
  const bool json = options.format == "json";
  int status = kExitOk, shown = 0;
  for (const auto& file : store.list()) {
    std::string problem;
    auto entry = store.read(file, &problem);
    if (!entry || entry_kernel(nlohmann::json::parse(entry->metadata_json)) != options.kernel) continue;
    if (shown++ == 0) {
      if (json) fmt::print("[\n");
    } else {
      fmt::print(json ? ",\n" : "\n");
    }
    status = std::max(status, inspect_entry(options, store, file));
  }
  if (json && shown > 0) fmt::print("]\n");
  if (shown == 0) {
    throw Error(ErrorCode::not_found, fmt::format("no entry in {} records kernel {} (entries written before kernc "
                                                  "recorded kernel names show \"?\" in `kernc cache ls`)",
                                                  store.root(), options.kernel));
  }
  return status;
}

int inspect_entry(const CacheCommandOptions& options, const CacheDirectory& store, const CacheEntryFile& file) {
  const std::string& key = file.key;
  const std::string& path = file.path;
  std::string problem;
  auto entry = store.read(file, &problem);
  if (!entry) {
    fmt::print(stderr, "kernc: error: entry {} is damaged: {}\n", key, problem);
    return kExitCacheDamaged;
  }
  if (!options.extract.empty()) write_file_atomic(options.extract, entry->program.binary, 0644);
  if (options.format == "json") {
    nlohmann::json out = nlohmann::json::parse(entry->metadata_json);
    out["path"] = path;
    out["payload_bytes"] = entry->program.binary.size();
    fmt::print("{}\n", out.dump(2));
    return kExitOk;
  }
  const auto m = nlohmann::json::parse(entry->metadata_json);
  fmt::print("key        {}\npath       {}\n", key, path);
  if (m.contains("kernel")) {
    fmt::print("kernel     {}\n", entry_kernel(m));
    if (!entry_variant(m).empty()) fmt::print("variant    {}\n", entry_variant(m));
  } else {
    fmt::print("kernel     ? (written by a kernc that did not record it)\n");
  }
  fmt::print("target     {} ({})\n", m.value("target", ""), m.value("binary_kind", ""));
  fmt::print("compiler   {} ({})\n", m.value("compiler", ""), m.value("compiler_library", ""));
  fmt::print("created    {}\ncompile    {:.2f} ms\n", m.value("created", ""), m.value("compile_ms", 0.0));
  fmt::print("payload    {}\n", format_size(entry->program.binary.size()));
  std::string flags;
  for (const auto& flag : entry->program.flags) flags += " " + flag;
  fmt::print("flags     {}\n", flags);
  for (const auto& [expression, lowered] : entry->program.lowered_names) fmt::print("name       {} -> {}\n", expression, lowered);
  if (::access(store.source_path(key).c_str(), R_OK) == 0) fmt::print("source     {}\n", store.source_path(key));
  if (m.contains("inputs")) {
    fmt::print("inputs of the key\n");
    for (const auto& input : m["inputs"]) {
      fmt::print("    {:<24} {}\n", input.at(0).get<std::string>(), input.at(1).get<std::string>());
    }
  }
  if (!entry->program.log.empty()) fmt::print("log\n{}\n", entry->program.log);
  if (!options.extract.empty()) fmt::print("wrote      {}\n", options.extract);
  return kExitOk;
}

}  // namespace

Subcommand setup_cache(CLI::App& app, const GlobalOptions& global) {
  auto options = std::make_shared<CacheCommandOptions>();
  auto* sub = app.add_subcommand("cache", "Inspect and look after the disk cache");
  sub->require_subcommand(1);
  sub->footer(exit_codes_help({kExitIo, kExitCacheDamaged, kExitNotFound, kExitEnvironment, kExitNotPrecompiled}));
  auto add_format = [&options](CLI::App* command) {
    command->add_option("--format", options->format, "Output format")->check(CLI::IsMember({"text", "json"}));
  };
  auto* stats = sub->add_subcommand("stats", "Counters summed over every process that used this cache");
  add_format(stats);
  stats->footer(exit_codes_help({kExitIo}));
  stats->add_flag("--zero", options->zero, "Reset the counters");
  auto* ls = sub->add_subcommand("ls", "List entries, least recently used first, with the kernel and variant each is for");
  add_format(ls);
  ls->footer(exit_codes_help({kExitIo}));
  ls->add_option("--kernel", options->kernel, "Only the entries of this kernel");
  auto* verify = sub->add_subcommand("verify", "Check every entry's header, checksum and metadata");
  add_format(verify);
  verify->footer(exit_codes_help({kExitIo, kExitCacheDamaged}));
  verify->add_flag("--fix", options->fix, "Remove the bad entries");
  auto* prune = sub->add_subcommand("prune", "Evict least recently used entries down to a size");
  prune->add_option("--max-size", options->max_size, "Size to prune to (default: KERNC_CACHE_MAX_SIZE)");
  add_format(prune);
  prune->footer(exit_codes_help({kExitIo}));
  auto* clear = sub->add_subcommand("clear", "Remove every entry, and the host compiler's precompiled headers kept for later processes");
  add_format(clear);
  clear->footer(exit_codes_help({kExitIo}));
  auto* inspect = sub->add_subcommand("inspect", "Show one entry's metadata: kernel, variant, target, compiler, "
                                      "the inputs of its key");
  add_format(inspect);
  inspect->footer(exit_codes_help({kExitIo, kExitCacheDamaged, kExitNotFound}));
  inspect->add_option("key", options->key, "The key, or a unique prefix of it (or --kernel)");
  inspect->add_option("--kernel", options->kernel, "Every entry of this kernel (with a key: check the entry is of it)");
  inspect->add_option("--extract", options->extract, "Write the entry's binary to this file");

  auto* merge = sub->add_subcommand("merge", "Copy the entries of other cache directories (CI shards' artifacts) "
                                    "into this one, checking each; exit 5 if any was bad");
  add_format(merge);
  merge->footer(exit_codes_help({kExitIo, kExitCacheDamaged}));
  merge->add_option("directories", options->merge_sources, "Cache directories to merge from")->required();

  auto* check = sub->add_subcommand("check", "Exit 0 only if every variant of a spec can be served without compiling");
  add_format(check);
  check->footer(exit_codes_help({kExitEnvironment, kExitIo, kExitNotFound, kExitNotPrecompiled}));
  check->add_option("spec", options->spec, "Spec file (JSON; see docs/spec-format.md)")->required();  // a missing file: exit 4
  check->add_option("-t,--target", options->targets, "Comma-separated device architectures: sm_86, sm_90, gfx90a, cpu-x86-64-v3, cpu (this machine), ... (repeatable: -t sm_80 -t sm_90)")
      ->join(',')->required();

  auto* explain = sub->add_subcommand("explain", "Say which entry serves each variant of a spec kernel for a target; "
                                      "for one that none serves, which inputs the nearest entry differs in; exit 8 "
                                      "if any variant is not served");
  add_format(explain);
  explain->footer(exit_codes_help({kExitEnvironment, kExitIo, kExitNotFound, kExitNotPrecompiled}));
  explain->add_option("spec", options->spec, "Spec file (JSON; see docs/spec-format.md)")->required();
  explain->add_option("--kernel", options->kernel, "The spec's kernel to explain")->required();
  explain->add_option("-t,--target", options->targets, "Comma-separated device architectures, as for cache check (repeatable: -t sm_80 -t sm_90)")
      ->join(',')->required();

  auto run = [options, &global, stats, ls, verify, prune, clear, inspect, merge, check, explain]() -> int {
    Config config = resolve_config(global);
    if (stats->parsed()) return run_stats(*options, config);
    if (ls->parsed()) return run_ls(*options, config);
    if (verify->parsed()) return run_verify(*options, config);
    if (prune->parsed()) return run_prune(*options, config);
    if (clear->parsed()) return run_clear(*options, config);
    if (inspect->parsed()) return run_inspect(*options, config);
    if (merge->parsed()) return run_merge(*options, config);
    if (check->parsed()) return run_cache_check(options->spec, options->targets, options->format, config);
    if (explain->parsed()) {
      return run_cache_explain(options->spec, options->kernel, options->targets, options->format, config);
    }
    return kExitUsage;
  };
  return {sub, run};
}

}  // namespace kernc::cli
