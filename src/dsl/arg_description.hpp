#pragma once
// What planning knows of an argument: an array's description (dtype, shape, strides; its
// address is not part of it) or a scalar's dtype. Plans are made from these, so a call can
// be planned without memory or a GPU.

#include <cstdint>

#include "kernc/array_ref.hpp"
#include "kernc/dtype.hpp"

namespace kernc::dsl {

struct ArgDescription {
  bool is_array = false;
  ArrayRef array;  // data 0
  DType scalar_dtype = DType::float32;
};

/// The largest index or byte offset a kernel may compute for `array` (for the 32-bit
/// index check): its element count, or the byte span of its strides plus a 16-byte margin.
std::int64_t index_extent(const ArrayRef& array);

}  // namespace kernc::dsl
