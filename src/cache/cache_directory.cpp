// CacheDirectory: the public face of one writable LocalStore, for `kernc cache` and hosts.

#include <filesystem>

#include <fmt/format.h>

#include "cache/entry_format.hpp"
#include "cache/local_store.hpp"
#include "kernc/cache_directory.hpp"
#include "kernc/error.hpp"
#include "platform/files.hpp"

namespace kernc {

// The directory's disk store. Defined in the class: a nested class of an exported one
// exports its out-of-line members.
struct CacheDirectory::Impl {
  explicit Impl(const CacheConfig& config) : store(config.directory, config.max_size) {}
  cache::LocalStore store;
};

CacheDirectory::CacheDirectory(const CacheConfig& config) {
  if (config.directory.empty()) {
    throw Error(ErrorCode::io, "no cache directory: set KERNC_CACHE_DIR, XDG_CACHE_HOME or HOME, or pass --cache-dir");
  }
  impl_ = std::make_unique<Impl>(config);
}

CacheDirectory::~CacheDirectory() = default;
CacheDirectory::CacheDirectory(CacheDirectory&&) noexcept = default;
CacheDirectory& CacheDirectory::operator=(CacheDirectory&&) noexcept = default;

const std::string& CacheDirectory::root() const noexcept { return impl_->store.root(); }
std::vector<CacheEntryFile> CacheDirectory::list() const { return impl_->store.list(); }

std::optional<CacheEntryContents> CacheDirectory::read(const CacheEntryFile& file, std::string* problem) const {
  auto entry = cache::decode_entry(platform::read_file(file.path), file.key, problem);
  if (!entry) return std::nullopt;
  return CacheEntryContents{entry->key, entry->metadata.dump(), std::move(entry->program)};
}

CacheVerifyReport CacheDirectory::verify(bool remove) const { return impl_->store.verify(remove); }
CachePruneReport CacheDirectory::prune(std::uint64_t max_size) { return impl_->store.prune(max_size); }
std::uint64_t CacheDirectory::clear() { return impl_->store.clear(); }

CachePrecompiledHeaders CacheDirectory::precompiled_headers() const {
  const auto [files, bytes] = impl_->store.precompiled_header_usage();
  return {files, bytes};
}

CacheEntryFile CacheDirectory::find(const std::string& prefix) const {
  CacheEntryFile file;
  file.key = impl_->store.resolve(prefix);
  file.path = impl_->store.entry_path(file.key);
  return file;
}

CacheMergeReport CacheDirectory::merge_from(const std::string& directory) {
  std::error_code error;
  if (std::filesystem::equivalent(directory, impl_->store.root(), error)) {
    throw Error(ErrorCode::io, fmt::format("{} is the cache directory itself: nothing to merge", directory));
  }
  // The source is treated as a read-only tier: its entries are code, checked as a
  // KERNC_CACHE_PATH tier's are (NOTE [ entry trust ]).
  cache::LocalStore source(directory, 0, cache::LocalStore::Mode::read_only);
  CacheMergeReport report;
  for (const auto& file : source.list()) {
    if (!file.regular) {
      report.bad.push_back({file.path, "not a regular file"});
      continue;
    }
    auto lookup = source.get(file.key);
    if (lookup.status != cache::StoreLookup::Status::hit) {
      report.bad.push_back({file.path, lookup.problem.empty() ? "no longer there" : lookup.problem});
      continue;
    }
    if (impl_->store.get(file.key).status == cache::StoreLookup::Status::hit) {
      ++report.already_present;
      continue;
    }
    report.evicted += impl_->store.put(file.key, lookup.encoded);
    ++report.copied;
    report.bytes_copied += lookup.encoded.size();
  }
  return report;
}

std::string CacheDirectory::source_path(const std::string& key) const { return impl_->store.source_path(key); }
CacheStats CacheDirectory::read_stats() const { return impl_->store.read_stats(); }
void CacheDirectory::add_stats(const CacheStats& delta) { impl_->store.add_stats(delta); }
void CacheDirectory::reset_stats() { impl_->store.reset_stats(); }

}  // namespace kernc
