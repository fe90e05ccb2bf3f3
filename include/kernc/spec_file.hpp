#pragma once
/// \file
/// Spec files: kernels of every kind in one JSON document, with the dtype signatures to
/// prepare, so that `kernc precompile` can build every variant a later call could ask
/// for. The format is documented in docs/spec-format.md.

#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "kernc/cache.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernc/pipeline.hpp"
#include "kernc/export.hpp"

namespace kernc {

/// One kernel of a spec file, with the signatures it lists.
struct KERNC_API SpecKernel {
  std::variant<ElementwiseKernel, ReductionKernel, RawKernel, RawModule> kernel;
  /// Elementwise and Reduction kernels only; empty when the spec lists none (the kernel
  /// can be run, but nothing is precompiled for it).
  std::vector<CallTypes> signatures;
  const std::string& name() const;
  const char* kind() const;           ///< "elementwise", "reduction", "raw", "raw_module"
  /// Plans a call of the kernel, whatever its kind (see call.hpp): inputs and outputs of an
  /// elementwise or reduction kernel; a raw kernel's arguments in order (no outputs), with
  /// CallOptions::launch, and for a raw_module CallOptions::function.
  Call plan(ListView<Arg> arguments, ListView<ArrayRef> outputs = {}, const CallOptions& options = {}) const;
};

/// One program a spec needs, and what it is for.
struct KERNC_API SpecVariant {
  std::string kernel;       ///< the kernel's name
  std::string description;  ///< e.g. "float32, float32 -> float32 contiguous-i32"
  Program program;
};

struct KERNC_API Spec {
  std::vector<SpecKernel> kernels;
  /// Every program the runtime could request for the listed signatures: per
  /// Elementwise/Reduction signature, one per layout class it can select; one per
  /// Raw kernel or module of source. A raw_module of binary files ("path", "paths") has
  /// none: it is loaded as built, so precompile and `cache check` pass over it.
  std::vector<SpecVariant> variants() const;
  const SpecKernel& find(const std::string& name) const;
};

/// Parses a spec; `base_dir` resolves relative "code_file", "include_dirs", "path" and
/// "paths" (a raw_module's binary files, read and checked here by RawModule::from_files).
/// Throws kernc::Error(invalid_argument) naming the kernel and the field, for unknown
/// fields too (a typo is never ignored); kernc::Error(io) for a file it cannot read or trust.
KERNC_API Spec parse_spec(const std::string& json_text, const std::string& base_dir);
/// Reads and parses a spec file.
KERNC_API Spec load_spec(const std::string& path);

/// One job's part of a precompile split over `count` CI jobs: the units (variant, target)
/// are put in a fixed order that depends only on each unit's kernel, description and
/// target, then dealt round-robin, so the shards are disjoint, differ in size by at most
/// one, and together are exactly the whole (NOTE [ precompile shards ], precompile.cpp).
struct KERNC_API PrecompileShard {
  std::size_t index = 0;  ///< 0-based: job `index + 1` of `count`
  std::size_t count = 1;
  /// "K/N" with 1 <= K <= N (`--shard 2/4`); throws kernc::Error(invalid_argument) naming `what`.
  static PrecompileShard parse(const std::string& text, const std::string& what = "--shard");
  std::string str() const;  ///< "K/N"
};

/// One (variant, target) pair of a precompile.
struct KERNC_API PrecompileUnit {
  const SpecVariant* variant = nullptr;
  Target target = Target::parse("sm_80");
};

/// The units of `shard`, in the order a precompile works through them.
KERNC_API std::vector<PrecompileUnit> precompile_units(const std::vector<SpecVariant>& variants,
                                                       const std::vector<Target>& targets,
                                                       const PrecompileShard& shard = {});

/// What happened to one (variant, target) in precompile.
struct KERNC_API PrecompileEvent {
  std::string kernel;       ///< the variant's kernel name
  std::string description;  ///< the variant's description (signature and layout, or kind)
  Target target = Target::parse("sm_80");
  CacheOutcome outcome = CacheOutcome::compiled;
  bool read_only = false;   ///< a hit of a read-only tier (copied into the cache directory by `kernc precompile`)
  bool failed = false;
  std::string key;
  double elapsed_ms = 0;
  std::shared_ptr<Error> error;  ///< set when failed
};

struct KERNC_API PrecompileSummary {
  std::size_t total = 0, compiled = 0, hits = 0, failed = 0;
  /// Of `hits`, those a read-only tier (KERNC_CACHE_PATH) and the remote tier answered.
  std::size_t read_only_hits = 0, remote_hits = 0;
  PrecompileShard shard;          ///< the part this run did (1/1: all)
  std::size_t all_units = 0;      ///< units of every shard together
  /// Variants that compiled (or hit) but are not in the disk cache at the end: no disk
  /// cache, an unwritable one, a failed write, or evicted by the size cap.
  std::size_t not_stored = 0;
  /// Why, when not_stored > 0 (the cache's own problem, or a count of failed writes and evictions).
  std::string not_stored_reason;
  double seconds = 0;
  std::vector<PrecompileEvent> failures;
};

/// Compiles every variant of `spec` for every target through `cache`, with `jobs` threads,
/// then checks that each one is in the cache's disk store (PrecompileSummary::not_stored).
/// `compiler_for` returns the compiler of a backend; `on_event` (called under a lock, in
/// completion order) sees each result. Failures are collected, not thrown. With `shard`,
/// only that part of the units is built and checked.
KERNC_API PrecompileSummary precompile(const Spec& spec, const std::vector<Target>& targets, Cache& cache,
                             const std::function<const Compiler&(Backend)>& compiler_for, unsigned jobs,
                             const std::function<void(const PrecompileEvent&, std::size_t done, std::size_t total)>&
                                 on_event = {},
                             const PrecompileShard& shard = {});

}  // namespace kernc
