#pragma once
/// \file
/// Compilation targets: which backend, which architecture, which kind of binary.

#include <string>
#include <string_view>
#include <vector>
#include "kernc/export.hpp"

namespace kernc {

/// NOTE [ host backend ]: `cpu` runs kernels on the host's own cores. Its programs are
/// the same CUDA C++ as a GPU's, compiled by the system C++ compiler into a shared object
/// (src/compiler/host_compiler.cpp) and launched over a thread pool
/// (src/runtime/host_driver.cpp).
enum class Backend { cuda, hip, cpu };

/// The kind of binary a compile produces.
enum class BinaryKind { cubin, ptx, hsaco, shared_object };

KERNC_API const char* to_string(Backend backend) noexcept;
KERNC_API const char* to_string(BinaryKind kind) noexcept;
/// Parses "cubin", "ptx", "hsaco" or "so"; throws kernc::Error(invalid_argument) otherwise.
KERNC_API BinaryKind parse_binary_kind(std::string_view text);

/// One architecture to compile for, as the caller names it.
///
/// CUDA: "sm_90" (cubin), "compute_90" (PTX), with NVRTC's suffixes "a" and "f"
/// ("sm_90a"). HIP: "gfx90a", optionally with target features ("gfx90a:xnack-"). The host
/// (Backend::cpu, a shared object): "cpu-x86-64", "cpu-x86-64-v2", "cpu-x86-64-v3",
/// "cpu-x86-64-v4" (the x86-64 micro-architecture levels) or "cpu-armv8-a"; "cpu" alone is
/// the level of the machine that parses it (host_target()).
class KERNC_API Target {
 public:
  /// Parses a target name; throws kernc::Error(invalid_argument) naming what was expected.
  static Target parse(std::string_view text);

  Backend backend() const noexcept { return backend_; }
  BinaryKind binary_kind() const noexcept { return kind_; }
  /// CUDA: the architecture without prefix ("90a"). HIP: the whole name ("gfx90a:xnack-").
  /// The host: the ISA level without prefix ("x86-64-v3").
  const std::string& arch() const noexcept { return arch_; }
  /// CUDA only: the numeric compute capability (90 for "sm_90a").
  int sm_number() const noexcept { return sm_number_; }
  /// The canonical name ("sm_90", "compute_90", "gfx90a:xnack-").
  std::string str() const;
  /// The same architecture producing another kind of binary (sm_90 → compute_90 for PTX).
  /// Throws kernc::Error(invalid_argument) if the kind does not fit the backend.
  Target with_binary_kind(BinaryKind kind) const;

  friend bool operator==(const Target& a, const Target& b) {
    return a.backend_ == b.backend_ && a.kind_ == b.kind_ && a.arch_ == b.arch_;
  }
  friend bool operator!=(const Target& a, const Target& b) { return !(a == b); }

 private:
  Target(Backend backend, BinaryKind kind, std::string arch, int sm_number)
      : backend_(backend), kind_(kind), arch_(std::move(arch)), sm_number_(sm_number) {}
  Backend backend_;
  BinaryKind kind_;
  std::string arch_;
  int sm_number_ = 0;
};

/// The binaries a device of architecture `device` can run, best first — the ladder a
/// look-up climbs down (see NOTE [ architecture ladder ] in src/kernels/engine.cpp):
///   CUDA sm_XY: sm_XY; then sm_X(Y-1) ... sm_X0 (a cubin runs on later minors of its
///   major); then compute_NN for every NN <= XY that NVIDIA has shipped, newest first (PTX,
///   compiled by the driver's JIT).
///   HIP gfxNNN:features: the exact target; then gfxNNN without features (built for any
///   xnack/sramecc setting).
///   The host cpu-x86-64-vN: that level, then each lower one down to cpu-x86-64 (a binary
///   for a level runs on every CPU of a higher one).
/// `device` must be an sm_, gfx or cpu- target.
KERNC_API std::vector<Target> binary_ladder(const Target& device);

/// The host target of the machine this runs on: the highest ISA level its CPU supports
/// ("cpu-x86-64-v3").
KERNC_API Target host_target();

/// Whether the CPU this runs on can run code built for host target `target`.
KERNC_API bool host_can_run(const Target& target) noexcept;

}  // namespace kernc
