#pragma once
// kernc's own reach behind the Cache facade (include/kernc/cache.hpp), which keeps its
// tiers out of the public API: the engine's variant index and the tests need the user's
// disk store itself.

#include "cache/local_store.hpp"
#include "kernc/cache.hpp"

namespace kernc {

namespace detail {
struct CacheInternals {
  /// The user's disk store of `cache`, or nullptr when the disk layer is off.
  static cache::LocalStore* disk_store(Cache& cache) noexcept;
};
}  // namespace detail

namespace cache {
/// The user's disk store of `cache`, or nullptr when the disk layer is off (Cache::uses_disk()).
inline LocalStore* disk_store(Cache& cache) noexcept { return detail::CacheInternals::disk_store(cache); }
}  // namespace cache

}  // namespace kernc
