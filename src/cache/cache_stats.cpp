// CacheStats and CacheOutcome (include/kernc/cache_stats.hpp).

#include "kernc/cache_stats.hpp"

namespace kernc {

const char* to_string(CacheOutcome outcome) noexcept {
  switch (outcome) {
    case CacheOutcome::memory_hit: return "memory hit";
    case CacheOutcome::disk_hit: return "disk hit";
    case CacheOutcome::remote_hit: return "remote hit";
    case CacheOutcome::compiled: return "compiled";
  }
  return "unknown";
}

CacheStats& CacheStats::operator+=(const CacheStats& o) {
  memory_hits += o.memory_hits;
  disk_hits += o.disk_hits;
  read_only_hits += o.read_only_hits;
  fallback_hits += o.fallback_hits;
  compiles += o.compiles;
  driver_cache_hits += o.driver_cache_hits;
  compile_failures += o.compile_failures;
  compile_ms += o.compile_ms;
  load_ms += o.load_ms;
  corrupt_entries += o.corrupt_entries;
  evictions += o.evictions;
  store_failures += o.store_failures;
  remote_hits += o.remote_hits;
  remote_misses += o.remote_misses;
  remote_rejected += o.remote_rejected;
  remote_errors += o.remote_errors;
  remote_timeouts += o.remote_timeouts;
  remote_skipped += o.remote_skipped;
  remote_writes += o.remote_writes;
  remote_bytes_read += o.remote_bytes_read;
  remote_bytes_written += o.remote_bytes_written;
  remote_ms += o.remote_ms;
  return *this;
}

}  // namespace kernc
