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

ArrayRef ArrayRef::contiguous(std::uint64_t data, DType dtype, std::vector<std::int64_t> shape) {
  ArrayRef ref;
  ref.data = data;
  ref.dtype = dtype;
  ref.strides.assign(shape.size(), 0);
  std::int64_t stride = static_cast<std::int64_t>(itemsize(dtype));
  for (size_t k = shape.size(); k-- > 0;) {
    ref.strides[k] = stride;
    stride *= std::max<std::int64_t>(shape[k], 1);
  }
  ref.shape = std::move(shape);
  return ref;
}

std::int64_t ArrayRef::size() const noexcept {
  std::int64_t n = 1;
  for (auto extent : shape) n *= extent;
  return n;
}

bool ArrayRef::c_contiguous() const noexcept {
  std::int64_t expected = static_cast<std::int64_t>(itemsize(dtype));
  for (size_t k = shape.size(); k-- > 0;) {
    if (shape[k] != 1 && strides[k] != expected) return false;
    expected *= shape[k];
  }
  return true;
}

std::pair<std::uint64_t, std::uint64_t> ArrayRef::byte_range() const noexcept {
  if (size() == 0) return {data, data};
  std::int64_t low = 0, high = 0;
  for (size_t k = 0; k < shape.size(); ++k) {
    std::int64_t span = (shape[k] - 1) * strides[k];
    (span < 0 ? low : high) += span;
  }
  return {data + low, data + high + itemsize(dtype)};
}

void ArrayRef::validate(const char* what) const {
  // Called on every launch: format only when something is wrong.
  if (shape.size() != strides.size()) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{}: shape has {} dimensions but strides has {}", what,
                                                         shape.size(), strides.size()));
  }
  for (auto extent : shape) {
    if (extent < 0) throw Error(ErrorCode::invalid_argument, fmt::format("{}: negative extent in shape {}", what, shape));
  }
  if (size() > 0 && data == 0) throw Error(ErrorCode::invalid_argument, fmt::format("{}: null data pointer", what));
}

ArrayRef ArrayRef::transposed(const std::vector<int>& axes) const {
  if (axes.size() != shape.size()) {
    throw Error(ErrorCode::invalid_argument, fmt::format("transpose: {} axes given for a {}-D array", axes.size(), ndim()));
  }
  ArrayRef out = *this;
  std::vector<bool> seen(shape.size(), false);
  for (size_t k = 0; k < axes.size(); ++k) {
    int axis = axes[k] < 0 ? axes[k] + ndim() : axes[k];
    if (axis < 0 || axis >= ndim() || seen[axis]) {
      throw Error(ErrorCode::invalid_argument, fmt::format("transpose: axes {} are not a permutation of {} axes", axes, ndim()));
    }
    seen[axis] = true;
    out.shape[k] = shape[axis];
    out.strides[k] = strides[axis];
  }
  return out;
}

ArrayRef ArrayRef::transposed() const {
  std::vector<int> axes(shape.size());
  std::iota(axes.rbegin(), axes.rend(), 0);
  return transposed(axes);
}

ArrayRef ArrayRef::sliced(int axis, std::int64_t start, std::int64_t stop, std::int64_t step) const {
  if (axis < 0) axis += ndim();
  if (axis < 0 || axis >= ndim()) throw Error(ErrorCode::invalid_argument, fmt::format("slice: axis out of range"));
  if (step == 0) throw Error(ErrorCode::invalid_argument, "slice: step must not be zero");
  std::int64_t n = shape[axis];
  auto clamp = [n, step](std::int64_t v) {
    if (v < 0) v += n;
    return step > 0 ? std::clamp<std::int64_t>(v, 0, n) : std::clamp<std::int64_t>(v, -1, n - 1);
  };
  start = clamp(start);
  stop = clamp(stop);
  std::int64_t count = step > 0 ? std::max<std::int64_t>(0, (stop - start + step - 1) / step)
                                : std::max<std::int64_t>(0, (start - stop - step - 1) / -step);
  ArrayRef out = *this;
  if (count > 0) out.data = data + start * strides[axis];
  out.shape[axis] = count;
  out.strides[axis] = strides[axis] * step;
  return out;
}

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
  array.view_ = ArrayRef::contiguous(buffer->address(), dtype, std::move(shape));
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
