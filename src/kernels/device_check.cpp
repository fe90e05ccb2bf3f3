// A call's arrays checked against the call's device before any launch.

#include "kernels/device_check.hpp"

#include <fmt/format.h>

#include "kernc/error.hpp"
#include "kernels/call_plan.hpp"
#include "runtime/driver.hpp"

namespace kernc::detail {

// NOTE [ arrays know their device ]
// A kernel given an address of another GPU faults (CUDA_ERROR_ILLEGAL_ADDRESS) and takes
// its context down for the rest of the process (NOTE [ sticky device faults ]); a host
// call given GPU memory would crash the process. So every array says where it lives
// (ArrayRef::device: a DeviceArray's view, a DLPack import's device) and every call, of
// every kind, one-shot or kept, checks its arrays against its own device in run()
// (src/kernels/call.cpp) before anything is launched: an array on another device is an
// invalid_argument error naming the argument and both devices, unless the call's device
// has peer access to it (Device::enable_peer_access), or it is managed or page-locked
// memory (DeviceId::shared), or host memory on a device that reaches pageable memory.
// A raw address (ArrayRef::contiguous) has no device: the call asks the driver
// (cuPointerGetAttributes: memory type, managed, device ordinal) through the call's device
// (a host call asks a CUDA device the process has open, if any; else it cannot tell).
// Unknown-to-CUDA memory is host memory from malloc, refused unless the GPU reaches
// pageable memory (HMM/ATS); a driver that cannot tell (HIP for memory it does not know,
// a host call with no CUDA device open) lets the call go ahead as before. That lookup is a driver call, too slow for every launch
// of a kept plan (tools/bench: ~1.15x a bare cuLaunchKernel is the budget), so the plan
// remembers per argument the last address it accepted (AddressMemo): a kept plan called
// over the same buffers pays one atomic load and compare per raw array, and a new address
// is looked up once. A known device costs a compare. The memo keys on the address alone:
// memory freed and allocated again on another GPU at the very same address between two
// calls of one plan is not noticed (the check is a guard against mistakes, not a proof).
// An array the caller knows better about (memory mapped on several GPUs with cuMemMap)
// can say where it is reachable with ArrayRef::on().

bool reachable(const DeviceId& where, const Device& device) noexcept {
  if (!where.known()) return true;
  const Backend backend = device.backend();
  if (where.is_shared()) return where.backend == backend || backend == Backend::cpu;
  if (where.backend == Backend::cpu) return device.pageable_memory_access();
  return where.backend == backend && (where.ordinal == device.ordinal() || device.peer_access_enabled(where));
}

namespace {

// Where a raw address lives: asked of the call's device, or for a host call of a GPU the
// process has open (the host backend's own driver cannot tell GPU memory from its own).
DeviceId locate(std::uint64_t address, const Device& device) {
  if (device.backend() != Backend::cpu) return device.locate(address);
  const std::optional<Device> gpu = open_device(Backend::cuda);
  return gpu ? gpu->locate(address) : DeviceId::unknown();
}

[[noreturn]] void refuse(const CallPlan& plan, const char* role, const std::string& name, const DeviceId& where,
                         const Device& device) {
  const DeviceId runs = device.id();
  std::string why;
  if (where.backend == Backend::cpu && !where.is_shared()) {
    why = fmt::format("{} \"{}\" is host memory ({}) but the call runs on {}, which cannot address pageable host memory; "
                      "copy it to the GPU (DeviceArray::from_host) or page-lock it",
                      role, name, where.str(), runs.str());
  } else {
    why = fmt::format("{} \"{}\" lives on {} but the call runs on {}", role, name, where.str(), runs.str());
    if (runs.backend == Backend::cpu) {
      why += " (the host backend cannot address GPU memory; copy it to the host)";
    } else if (where.backend == runs.backend && !where.is_shared()) {
      why += fmt::format("; copy it there, or let {} address {}'s memory with Device::enable_peer_access", runs.str(),
                         where.str());
    }
  }
  throw Error(ErrorCode::invalid_argument, fmt::format("{}: {}", plan.label, why));
}

std::string name_of(const std::vector<std::string>& names, std::size_t k) {
  return k < names.size() && !names[k].empty() ? names[k] : fmt::format("#{}", k);
}

// One array: a known device is compared; an unknown one looked up unless the memo has it.
void check_one(const CallPlan& plan, const ArrayRef& array, std::size_t slot, const Device& device, const char* role,
               const std::vector<std::string>& names, std::size_t k) {
  if (array.data == 0) return;  // an empty array: nothing is addressed
  if (array.device.known()) {
    if (!reachable(array.device, device)) refuse(plan, role, name_of(names, k), array.device, device);
    return;
  }
  if (plan.checked_addresses.seen(slot, array.data)) return;
  const DeviceId where = locate(array.data, device);
  if (!reachable(where, device)) refuse(plan, role, name_of(names, k), where, device);
  plan.checked_addresses.remember(slot, array.data);
}

}  // namespace

void check_devices(const CallPlan& plan, ListView<Arg> inputs, ListView<ArrayRef> outputs, const Device& device) {
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    if (inputs[k].is_array()) check_one(plan, inputs[k].array(), k, device, "argument", plan.input_names, k);
  }
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    check_one(plan, outputs[k], inputs.size() + k, device, "output", plan.output_names, k);
  }
}

}  // namespace kernc::detail
