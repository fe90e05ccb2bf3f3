#include <algorithm>
#include <atomic>
#include <set>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string_view>
#include <vector>
#include <thread>
#include <variant>

#include <fmt/format.h>

#include "kernc/config.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernc/spec_file.hpp"
#include "kernels/precompile_order.hpp"
#include "platform/sha256.hpp"
#include "base/nvtx_range.hpp"

namespace kernc {

// NOTE [ precompile shards ]
// `--shard K/N` must give N CI jobs disjoint parts that together are the whole, of equal
// size, the same in every job whatever its -j or thread timing. Units are sorted by a
// SHA-256 of (kernel, description, target) — a fixed order that depends on nothing but the
// units, and that scatters the expensive kernels (reductions, many layouts of one kernel)
// over the shards instead of giving one job a whole kernel — then dealt round-robin:
// unit i goes to shard i mod N. Adding a unit to the spec moves the units after it in
// that order to other shards; that is harmless, every job reads the same spec.

// NOTE [ longest compiles first ]
// With several jobs a run ends when its last compile does. Taken in the shard order above,
// the costliest programs (an int8 reduction over the generic layout compiles 12x longer
// than a strided elementwise one) can start last and leave the other jobs idle: at -j 16
// the 106 programs of examples/kernels.json took 1.88 s where their CPU time over 16 cores
// is 1.63 s (tools/bench/NOTES.md, compile-v2). So a run starts its programs in the order
// of a cost estimated from what each is, the costliest first (longest processing time
// first, which leaves a tail of at most one short program). Only the order depends on the
// estimate, never which programs a shard holds or what they compile to.
// The factors are kernc_compile_bench's per-program times of examples/kernels.json (NOTES
// jobs-v3): a strided layout costs more with each axis its multi-index carries, the tiled
// and generic layouts more again, 64-bit indexing a third more, a raw array parameter (its
// run-time rank, NOTE [ rolled loops over a run-time rank ]) two fifths more each, and a
// reduction (two or three kernels) a little over twice its layout. Raw code that includes a
// header of the toolkit's or the system's is put near the front: what such a header brings
// in is not known here, and CUB's block reduction alone compiles for over a second, several
// generic reductions' worth (NOTES pch). Ordered by these factors, a simulated -j 16 of
// those times ends within 0.5% of the order by the measured times themselves; the coarser
// estimate before (layout class, i64, reduction) ended 3% later.
namespace {

std::size_t raw_array_parameters(const SpecKernel& kernel) {
  auto count = [](const std::vector<Parameter>& params) {
    return static_cast<std::size_t>(std::count_if(params.begin(), params.end(), [](const Parameter& p) { return p.raw; }));
  };
  if (const auto* e = std::get_if<ElementwiseKernel>(&kernel.kernel)) return count(e->in_params()) + count(e->out_params());
  if (const auto* r = std::get_if<ReductionKernel>(&kernel.kernel)) return count(r->in_params()) + count(r->out_params());
  return 0;
}

double estimated_compile_cost(const Spec& spec, const SpecVariant& variant) {
  const std::string& layout = variant.program.origin.layout;  // e.g. "strided3-i64"; empty for raw code
  auto has = [&](const char* part) { return layout.find(part) != std::string::npos; };
  double cost = 1.0;
  if (layout.empty()) {
    cost = variant.program.source.find("#include <") != std::string::npos ? 6.0 : 1.0;
  } else if (has("generic")) {
    cost = 2.8;
  } else if (has("tiled")) {
    cost = 1.7;
  } else if (has("contiguous")) {
    cost = 1.2;
  } else if (const std::size_t at = layout.find("strided"); at != std::string::npos) {
    cost = 0.7 + 0.2 * static_cast<double>(std::strtol(layout.c_str() + at + 7, nullptr, 10));  // the multi-index's axes
  }
  if (has("-i64")) cost *= 1.3;
  for (const auto& kernel : spec.kernels) {
    if (kernel.name() != variant.kernel) continue;
    cost *= 1.0 + 0.4 * static_cast<double>(raw_array_parameters(kernel));
    if (std::string_view(kernel.kind()) == "reduction") cost *= 2.2;
  }
  return cost;
}

}  // namespace

namespace detail {

std::vector<std::size_t> longest_compiles_first(const Spec& spec, const std::vector<PrecompileUnit>& units) {
  std::vector<std::size_t> order(units.size());
  std::vector<double> cost(units.size());
  for (std::size_t k = 0; k < units.size(); ++k) {
    order[k] = k;
    cost[k] = estimated_compile_cost(spec, *units[k].variant);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
  return order;
}

}  // namespace detail

PrecompileShard PrecompileShard::parse(const std::string& text, const std::string& what) {
  auto bad = [&] {
    return Error(ErrorCode::invalid_argument,
                 fmt::format("{} must be K/N with 1 <= K <= N <= 100000 (e.g. 2/4), not \"{}\"", what, text));
  };
  size_t slash = text.find('/');
  if (slash == std::string::npos) throw bad();
  auto number = [&](const std::string& part) -> std::size_t {
    if (part.empty() || part.size() > 6 || part.find_first_not_of("0123456789") != std::string::npos) throw bad();
    return std::stoul(part);
  };
  std::size_t k = number(text.substr(0, slash));
  std::size_t n = number(text.substr(slash + 1));
  if (n == 0 || n > 100000 || k == 0 || k > n) throw bad();
  return PrecompileShard{k - 1, n};
}

std::string PrecompileShard::str() const { return fmt::format("{}/{}", index + 1, count); }

std::vector<PrecompileUnit> precompile_units(const std::vector<SpecVariant>& variants, const std::vector<Target>& targets,
                                             const PrecompileShard& shard) {
  if (shard.count == 0 || shard.index >= shard.count) {
    throw Error(ErrorCode::invalid_argument, fmt::format("shard {} of {} does not exist", shard.index + 1, shard.count));
  }
  std::vector<std::pair<std::string, PrecompileUnit>> ordered;
  for (const auto& target : targets) {
    for (const auto& variant : variants) {
      std::string identity = variant.kernel + '\n' + variant.description + '\n' + target.str();
      ordered.push_back({platform::sha256_hex(identity) + identity, PrecompileUnit{&variant, target}});
    }
  }
  std::sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<PrecompileUnit> units;
  for (std::size_t i = shard.index; i < ordered.size(); i += shard.count) units.push_back(ordered[i].second);
  return units;
}

PrecompileSummary precompile(const Spec& spec, const std::vector<Target>& targets, Cache& cache,
                             const std::function<const Compiler&(Backend)>& compiler_for, unsigned jobs,
                             const std::function<void(const PrecompileEvent&, std::size_t, std::size_t)>& on_event,
                             const PrecompileShard& shard) {
  auto start = std::chrono::steady_clock::now();
  const std::vector<SpecVariant> variants = spec.variants();
  // Load each backend's compiler before the workers start: a missing library is one
  // error for the whole run, not one per variant.
  for (const auto& target : targets) compiler_for(target.backend()).check_target(target);

  const std::vector<PrecompileUnit> work = precompile_units(variants, targets, shard);
  PrecompileSummary summary;
  summary.total = work.size();
  summary.shard = shard;
  summary.all_units = variants.size() * targets.size();
  // See NOTE [ longest compiles first ].
  const std::vector<std::size_t> order = detail::longest_compiles_first(spec, work);
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  std::size_t done = 0;
  std::set<std::string> keys;  // of every variant that compiled or hit

  auto worker = [&] {
    for (std::size_t n = next++; n < work.size(); n = next++) {
      const std::size_t k = order[n];
      PrecompileEvent event;
      event.kernel = work[k].variant->kernel;
      event.description = work[k].variant->description;
      event.target = work[k].target;
      try {
        const detail::NvtxSubject subject([&] { return detail::nvtx_subject(event.kernel, event.description); });
        auto result = cache.get_or_compile(work[k].variant->program, event.target, compiler_for(event.target.backend()));
        event.outcome = result.outcome;
        event.read_only = result.read_only;
        event.key = result.key;
        event.elapsed_ms = result.elapsed_ms;
      } catch (const Error& error) {
        event.failed = true;
        event.error = std::make_shared<Error>(map_error_to_snippets(error));
      }
      std::lock_guard<std::mutex> lock(mutex);
      ++done;
      if (event.failed) {
        ++summary.failed;
        summary.failures.push_back(event);
      } else {
        ++(event.outcome == CacheOutcome::compiled ? summary.compiled : summary.hits);
        summary.read_only_hits += event.read_only ? 1 : 0;
        summary.remote_hits += event.outcome == CacheOutcome::remote_hit ? 1 : 0;
        keys.insert(event.key);
      }
      if (on_event) on_event(event, done, summary.total);
    }
  };
  jobs = std::max(1u, std::min<unsigned>(jobs, static_cast<unsigned>(work.size())));
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < jobs; ++t) threads.emplace_back(worker);
  worker();
  for (auto& thread : threads) thread.join();
  // A precompile exists to leave entries on disk: check that every one is there now (a
  // size cap can evict early entries of the same run; a write can fail).
  for (const auto& key : keys) summary.not_stored += cache.stored(key) ? 0 : 1;
  if (summary.not_stored > 0) {
    const CacheStats stats = cache.stats();
    if (!cache.disk_problem().empty()) {
      summary.not_stored_reason = cache.disk_problem();
    } else if (!cache.uses_disk()) {
      summary.not_stored_reason = "the disk cache is off";
    } else {
      summary.not_stored_reason =
          fmt::format("{} write(s) to {} failed and {} entr(ies) were evicted by the size cap ({}) during the run",
                      stats.store_failures, cache.config().directory, stats.evictions,
                      format_size(cache.config().max_size));
    }
  }
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace kernc
