#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kernc/array.hpp"
#include "kernc/error.hpp"
#include "kernc/npy.hpp"

namespace kernc {

DeviceArray DeviceArray::empty(const Device& device, DType dtype, std::vector<std::int64_t> shape) {
  // The byte count, checked: a shape whose size overflows 64 bits is refused, not wrapped.
  std::uint64_t bytes = itemsize(dtype);
  for (auto extent : shape) {
    if (extent < 0) throw Error(ErrorCode::invalid_argument, fmt::format("negative extent in shape {}", shape));
    if (extent != 0 && bytes > std::numeric_limits<std::uint64_t>::max() / static_cast<std::uint64_t>(extent)) {
      throw Error(ErrorCode::out_of_memory, fmt::format("an array of shape {} {} needs more than 2^64 bytes",
                                                        format_numpy_shape(shape), to_string(dtype)));
    }
    bytes *= static_cast<std::uint64_t>(extent);
  }
  if (bytes > std::numeric_limits<std::size_t>::max()) {
    throw Error(ErrorCode::out_of_memory, fmt::format("an array of shape {} {} needs {} bytes, more than this host can address",
                                                      format_numpy_shape(shape), to_string(dtype), bytes));
  }
  std::shared_ptr<DeviceBuffer> buffer;
  try {
    buffer = std::make_shared<DeviceBuffer>(device.allocate(static_cast<std::size_t>(bytes)));
  } catch (const Error& error) {
    if (error.code() != ErrorCode::out_of_memory) throw;
    throw Error(ErrorCode::out_of_memory, fmt::format("cannot allocate an array of shape {} {} ({} bytes) on the GPU: {}",
                                                      format_numpy_shape(shape), to_string(dtype), bytes, error.what()));
  }
  DeviceArray array;
  array.device_ = device;
  array.view_ = ArrayRef::contiguous(buffer->address(), dtype, std::move(shape)).on(device.id());
  array.buffer_ = std::move(buffer);
  return array;
}

DeviceArray DeviceArray::from_host(const Device& device, DType dtype, std::vector<std::int64_t> shape, const void* host,
                                   StreamRef stream) {
  DeviceArray array = empty(device, dtype, std::move(shape));
  device.copy_to_device(array.view_.data, host, static_cast<std::size_t>(array.size()) * itemsize(dtype), stream);
  return array;
}

DeviceArray DeviceArray::wrap(const Device& device, ArrayRef view) {
  view.validate("wrapped array");
  // A view that says where it lives keeps saying so; `device` must be able to reach it.
  if (!view.device.known()) {
    view.device = device.id();
  } else if (!view.device.is_shared() && view.device != device.id() && !device.peer_access_enabled(view.device)) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("wrapped array: the view lives on {} but is wrapped as an array of {}", view.device.str(),
                            device.id().str()));
  }
  DeviceArray array;
  array.device_ = device;
  array.view_ = std::move(view);
  return array;
}

void DeviceArray::check_host_element(std::size_t bytes, const char* what) const {
  if (bytes == itemsize(view_.dtype)) return;
  throw Error(ErrorCode::invalid_argument,
              fmt::format("{}: the array holds {} ({}-byte elements) but the host element type has {} bytes", what,
                          to_string(view_.dtype), itemsize(view_.dtype), bytes));
}

void DeviceArray::to_host(void* host, StreamRef stream) const {
  const std::size_t item = itemsize(view_.dtype);
  if (size() == 0) return;
  if (view_.c_contiguous()) {
    device_.copy_to_host(host, view_.data, static_cast<std::size_t>(size()) * item, stream);
    return;
  }
  // Gather: copy the bytes the view spans, then pick the elements in C order on the host.
  auto [low, high] = view_.byte_range();
  std::vector<unsigned char> span(high - low);
  device_.copy_to_host(span.data(), low, span.size(), stream);
  auto* out = static_cast<unsigned char*>(host);
  std::vector<std::int64_t> index(view_.shape.size(), 0);
  const std::int64_t base = static_cast<std::int64_t>(view_.data - low);
  for (std::int64_t n = 0; n < size(); ++n) {
    std::int64_t offset = base;
    for (size_t d = 0; d < index.size(); ++d) offset += index[d] * view_.strides[d];
    std::memcpy(out + n * item, span.data() + offset, item);
    for (size_t d = index.size(); d-- > 0;) {
      if (++index[d] < view_.shape[d]) break;
      index[d] = 0;
    }
  }
}

}  // namespace kernc
