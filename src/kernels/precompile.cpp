#include <atomic>
#include <set>
#include <chrono>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "kernc/config.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernc/spec_file.hpp"

namespace kernc {

PrecompileSummary precompile(const Spec& spec, const std::vector<Target>& targets, Cache& cache,
                             const std::function<const Compiler&(Backend)>& compiler_for, unsigned jobs,
                             const std::function<void(const PrecompileEvent&, std::size_t, std::size_t)>& on_event) {
  auto start = std::chrono::steady_clock::now();
  const std::vector<SpecVariant> variants = spec.variants();
  // Load each backend's compiler before the workers start: a missing library is one
  // error for the whole run, not one per variant.
  for (const auto& target : targets) compiler_for(target.backend()).check_target(target);

  struct Work {
    const SpecVariant* variant;
    const Target* target;
  };
  std::vector<Work> work;
  for (const auto& target : targets) {
    for (const auto& variant : variants) work.push_back({&variant, &target});
  }
  PrecompileSummary summary;
  summary.total = work.size();
  std::atomic<std::size_t> next{0};
  std::mutex mutex;
  std::size_t done = 0;
  std::set<std::string> keys;  // of every variant that compiled or hit

  auto worker = [&] {
    for (std::size_t k = next++; k < work.size(); k = next++) {
      PrecompileEvent event;
      event.kernel = work[k].variant->kernel;
      event.description = work[k].variant->description;
      event.target = *work[k].target;
      try {
        auto result = cache.get_or_compile(work[k].variant->program, event.target, compiler_for(event.target.backend()));
        event.outcome = result.outcome;
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
    } else if (!cache.store()) {
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
