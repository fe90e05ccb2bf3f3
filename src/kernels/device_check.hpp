#pragma once
// The call's check that its arrays live where its kernel can address them (NOTE [ arrays
// know their device ], src/kernels/device_check.cpp).

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "kernc/array_ref.hpp"
#include "kernc/call.hpp"
#include "kernc/runtime.hpp"

namespace kernc::detail {

class CallPlan;

/// Per plan: the raw addresses (arrays whose device is unknown) found usable on the plan's
/// device, one slot per argument (inputs, then outputs), so that a kept plan called with
/// the same memory asks the driver only once. A copy (a replanned plan) starts empty.
class AddressMemo {
 public:
  static constexpr std::size_t kSlots = 16;  ///< arguments past these are looked up at every call
  AddressMemo() noexcept { clear(); }
  AddressMemo(const AddressMemo&) noexcept { clear(); }
  AddressMemo& operator=(const AddressMemo&) noexcept {
    clear();
    return *this;
  }
  bool seen(std::size_t slot, std::uint64_t address) const noexcept {
    return slot < kSlots && addresses_[slot].load(std::memory_order_relaxed) == address;
  }
  void remember(std::size_t slot, std::uint64_t address) const noexcept {
    if (slot < kSlots) addresses_[slot].store(address, std::memory_order_relaxed);
  }

 private:
  void clear() noexcept {
    for (auto& address : addresses_) address.store(0, std::memory_order_relaxed);
  }
  mutable std::array<std::atomic<std::uint64_t>, kSlots> addresses_;
};

/// Throws kernc::Error(invalid_argument) naming the argument and both devices unless every
/// array of the call can be addressed by a kernel on `device`: it lives there, or on a GPU
/// `device` has peer access to, or is shared (managed, page-locked) memory, or is host
/// memory and `device` reaches pageable memory. Before any launch, so the context survives.
void check_devices(const CallPlan& plan, ListView<Arg> inputs, ListView<ArrayRef> outputs, const Device& device);

/// Whether a kernel on `device` can address memory that lives at `where` (true when
/// `where` is unknown: nothing can be said).
bool reachable(const DeviceId& where, const Device& device) noexcept;

}  // namespace kernc::detail
