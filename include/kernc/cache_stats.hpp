#pragma once
/// \file
/// What the compile cache counts: where each lookup was answered (CacheOutcome) and the
/// counters of one Cache object or of a cache directory's stats file (CacheStats).

#include <cstdint>

#include "kernc/export.hpp"

namespace kernc {

/// Where a lookup was answered.
enum class CacheOutcome { memory_hit, disk_hit, remote_hit, compiled };
KERNC_API const char* to_string(CacheOutcome outcome) noexcept;

/// Counters of one Cache object (this process), or summed over processes on disk.
struct KERNC_API CacheStats {
  std::uint64_t memory_hits = 0;
  std::uint64_t disk_hits = 0;       ///< hits in the user's disk cache
  std::uint64_t read_only_hits = 0;  ///< hits in a read-only tier (KERNC_CACHE_PATH)
  std::uint64_t fallback_hits = 0;   ///< hits of a lower rung of the architecture ladder (also counted above)
  std::uint64_t compiles = 0;
  /// Binaries NVRTC took from the CUDA driver's compute cache (KERNC_DRIVER_COMPILE_CACHE=1):
  /// not compiles, and not in `compiles` or `compile_ms`.
  std::uint64_t driver_cache_hits = 0;
  std::uint64_t compile_failures = 0;
  double compile_ms = 0;       ///< total wall time spent compiling
  double load_ms = 0;          ///< total wall time spent reading and checking disk entries
  std::uint64_t corrupt_entries = 0;  ///< entries that failed their checks (damaged or untrusted): misses
  std::uint64_t evictions = 0;
  std::uint64_t store_failures = 0;   ///< entries that could not be written
  // The remote tier (KERNC_REMOTE_CACHE).
  std::uint64_t remote_hits = 0;
  std::uint64_t remote_misses = 0;
  std::uint64_t remote_rejected = 0;  ///< damaged, foreign, poisoned or unsigned remote entries: misses
  std::uint64_t remote_errors = 0;    ///< failed requests: down, timed out, refused writes (e.g. maxmemory)
  std::uint64_t remote_timeouts = 0;  ///< of remote_errors, the timeouts
  std::uint64_t remote_skipped = 0;   ///< lookups and writes skipped while the tier backs off after an error
  std::uint64_t remote_writes = 0;    ///< entries published
  std::uint64_t remote_bytes_read = 0;
  std::uint64_t remote_bytes_written = 0;
  double remote_ms = 0;  ///< total wall time spent in remote requests

  CacheStats& operator+=(const CacheStats& other);
};

}  // namespace kernc
