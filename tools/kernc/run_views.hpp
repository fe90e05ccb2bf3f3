#pragma once
// `kernc run`'s NumPy-like views on a SOURCE: "m.npy[:, ::2].T", "row.npy[None, :]",
// "random:4x5x6:float32.transpose(2, 0, 1)". A view is shape and byte strides over the
// source's bytes plus a byte offset (an ArrayRef whose `data` is that offset), so that
// strided, permuted and broadcast layouts reach the kernel as they would from NumPy.

#include <string>
#include <utility>

#include "kernc/array_ref.hpp"

namespace kernc::cli {

/// The view syntax, for --help.
extern const char* const kViewSyntax;

/// Splits "m.npy[:, ::2].T" into {"m.npy", "[:, ::2].T"}: the trailing `[...]`, `.T` and
/// `.transpose(...)` groups. A text without them comes back whole, with an empty suffix.
std::pair<std::string, std::string> split_view_suffix(const std::string& text);

/// Applies a suffix to `view` (its `data` a byte offset): basic indexing as NumPy's
/// (integers, slices start:stop:step, None, ...), .T and .transpose(AXES). Throws
/// kernc::Error(invalid_argument) with NumPy's reasons (an index out of bounds, too many
/// indices, a zero step, axes that are no permutation) for anything else.
ArrayRef apply_view(const ArrayRef& view, const std::string& suffix);

}  // namespace kernc::cli
