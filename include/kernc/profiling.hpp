#pragma once
/// \file
/// Profiler markers: NVTX ranges around kernc's compiles, cache look-ups, module loads and
/// launches, in the NVTX domain "kernc", named after the kernel and its variant
/// ("compile saxpy<float32, float32 -> float32 contiguous-i32> sm_90"). Off by default,
/// when they cost one relaxed load of a flag; KERNC_NVTX=1 or set_nvtx_ranges(true) turns
/// them on. A range reaches a profiler only when one is attached (Nsight Systems:
/// `nsys profile --trace=nvtx,cuda`); without one, NVTX calls return at once.

#include "kernc/export.hpp"

namespace kernc {

/// Turns kernc's NVTX ranges on or off for the whole process (from any thread; a range
/// already open still closes). Turning them on in a build without NVTX (the CUDA toolkit's
/// nvtx3 headers were missing) throws kernc::Error(backend_disabled).
KERNC_API void set_nvtx_ranges(bool on);

/// Whether kernc's NVTX ranges are on.
KERNC_API bool nvtx_ranges() noexcept;

/// Whether this build of kernc can open NVTX ranges.
KERNC_API bool nvtx_ranges_built() noexcept;

}  // namespace kernc
