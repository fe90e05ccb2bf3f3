#pragma once
// Packs kernel parameters into one buffer for cuLaunchKernel, laid out as the device
// compiler lays out each parameter (natural alignment of every field).
// NOTE [ kernel parameter layout ]: pack_view / pack_shape mirror the structs of
// templates/array.cuh field by field.

#include <cstdint>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "kernc/error.hpp"

namespace kernc::detail {

/// A pack's bytes and the offset of each parameter in them: what a kept plan packs once, so
/// that a launch restores it and writes only the addresses and scalars (NOTE [ kept plan ],
/// src/kernels/elementwise_call.cpp).
struct PackedParams {
  std::vector<unsigned char> bytes;
  std::vector<std::size_t> offsets;
};

class ParamPack {
 public:
  ParamPack() = default;
  // The parameter pointers point into this object's own buffer: it is not copied or moved.
  ParamPack(const ParamPack&) = delete;
  ParamPack& operator=(const ParamPack&) = delete;

  /// Starts a parameter whose alignment is `align`.
  void begin(std::size_t align) {
    pad_to(align);
    add_pointer(bytes_ + size_);
  }
  template <class T>
  void field(T value) {
    pad_to(alignof(T));
    append(&value, sizeof value);
  }
  void bytes(const void* data, std::size_t size, std::size_t align) {
    pad_to(align);
    append(data, size);
  }
  /// A pointer per parameter (cuLaunchKernel's kernelParams), valid while the pack lives.
  void** pointers() { return count_ <= kInlineParams ? inline_pointers_ : spilled_.data(); }
  /// The first byte of parameter `k` (written in place after restore()).
  unsigned char* parameter(std::size_t k) { return static_cast<unsigned char*>(pointers()[k]); }

  /// The bytes packed so far and where each parameter starts.
  PackedParams snapshot() {
    PackedParams packed;
    packed.bytes.assign(bytes_, bytes_ + size_);
    for (std::size_t k = 0; k < count_; ++k) packed.offsets.push_back(static_cast<std::size_t>(parameter(k) - bytes_));
    return packed;
  }
  /// Makes this new (empty) pack a copy of `packed` (made by snapshot()).
  void restore(const PackedParams& packed) {
    if (!packed.bytes.empty()) std::memcpy(bytes_, packed.bytes.data(), packed.bytes.size());
    size_ = packed.bytes.size();
    for (std::size_t offset : packed.offsets) add_pointer(bytes_ + offset);
  }

 private:
  void add_pointer(void* start) {
    if (count_ < kInlineParams) {
      inline_pointers_[count_] = start;
    } else {
      if (count_ == kInlineParams) spilled_.assign(inline_pointers_, inline_pointers_ + kInlineParams);
      spilled_.push_back(start);
    }
    ++count_;
  }
  void pad_to(std::size_t align) { size_ = (size_ + align - 1) / align * align; }
  void append(const void* data, std::size_t size) {
    if (size_ + size > sizeof bytes_) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("kernel parameters need more than {} bytes (too many array parameters)", sizeof bytes_));
    }
    std::memcpy(bytes_ + size_, data, size);
    size_ += size;
  }
  // Inline storage: packing allocates nothing on the hot path. The driver accepts at most
  // 32764 bytes of parameters; 8 KiB holds 29 run-time-rank views with 64-bit indices.
  alignas(16) unsigned char bytes_[8192];  // not zeroed: only written bytes and padding reach the driver
  std::size_t size_ = 0;
  // The pointers of the first kInlineParams parameters are kept inline (no allocation on a
  // launch); a kernel with more spills them all into a vector.
  static constexpr std::size_t kInlineParams = 64;
  void* inline_pointers_[kInlineParams];
  std::vector<void*> spilled_;
  std::size_t count_ = 0;
};

inline constexpr int kMaxDims = 16;  // templates/array.cuh kMaxDims

/// One index-typed field: int for 32-bit layouts, long long for 64-bit ones.
inline void pack_index(ParamPack& pack, std::int64_t value, bool index64) {
  if (index64) {
    pack.field<std::int64_t>(value);
  } else {
    pack.field<std::int32_t>(static_cast<std::int32_t>(value));
  }
}

/// `slots` index fields from `values`, padded with `fill` (unused dimensions).
inline void pack_indices(ParamPack& pack, const std::vector<std::int64_t>& values, int slots, std::int64_t fill,
                         bool index64) {
  for (int d = 0; d < slots; ++d) pack_index(pack, d < static_cast<int>(values.size()) ? values[d] : fill, index64);
}

/// kernc::ArrayView<T, rank, Index>: rank 0 (flat), 1..4, or -1 (run-time rank).
inline void pack_view(ParamPack& pack, std::uint64_t data, std::int64_t size, const std::vector<std::int64_t>& shape,
                      const std::vector<std::int64_t>& strides, int rank, bool index64, bool contiguous) {
  pack.begin(8);
  pack.field<std::uint64_t>(data);
  pack_index(pack, size, index64);
  if (rank == 0) return;
  int slots = rank;
  if (rank < 0) {
    pack.field<std::int32_t>(static_cast<std::int32_t>(shape.size()));
    pack.field<std::int32_t>(contiguous ? 1 : 0);
    slots = kMaxDims;
  }
  pack_indices(pack, shape, slots, 1, index64);
  pack_indices(pack, strides, slots, 0, index64);
}

/// kernc::Shape<rank, Index>.
inline void pack_shape(ParamPack& pack, std::int64_t size, const std::vector<std::int64_t>& shape, int rank, bool index64) {
  pack.begin(index64 ? 8 : 4);
  pack_index(pack, size, index64);
  if (rank == 0) return;
  int slots = rank;
  if (rank < 0) {
    pack.field<std::int32_t>(static_cast<std::int32_t>(shape.size()));
    slots = kMaxDims;
  }
  pack_indices(pack, shape, slots, 1, index64);
}

}  // namespace kernc::detail
