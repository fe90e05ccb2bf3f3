#include "run_views.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "kernc/error.hpp"

namespace kernc::cli {

const char* const kViewSyntax =
    "A view may follow any array SOURCE, as in NumPy (basic indexing, no copy):\n"
    "  SOURCE[ITEMS]                 ITEMS joined by commas: an index (2, -1), a slice (start:stop:step,\n"
    "                                any part optional: :, ::2, ::-1, 1:-1), None (a new axis of extent 1,\n"
    "                                to broadcast), ... (every axis not named)\n"
    "  SOURCE.T, SOURCE.transpose(AXES)  axes reversed, or reordered\n"
    "  joined: 'm.npy[:, ::2].T', 'row.npy[None, :]', 'random:4x6:float32[::-1, 1::2]'\n"
    "  (quote them for the shell). A Fortran-ordered .npy file is such a view already.";

namespace {

Error bad_view(const std::string& what) { return Error(ErrorCode::invalid_argument, what); }

std::string trim(const std::string& text) {
  std::size_t first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

std::vector<std::string> split_items(const std::string& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (true) {
    std::size_t comma = text.find(',', start);
    items.push_back(trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

std::optional<std::int64_t> parse_integer(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::size_t digits = text[0] == '-' || text[0] == '+' ? 1 : 0;
  if (digits == text.size() || text.find_first_not_of("0123456789", digits) != std::string::npos) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (errno == ERANGE || *end != '\0') return std::nullopt;
  return value;
}

// One item of an index: an integer, a slice, None or "...".
struct Item {
  enum Kind { integer, slice, new_axis, ellipsis } kind = integer;
  std::int64_t index = 0;
  std::optional<std::int64_t> start, stop, step;
};

Item parse_item(const std::string& text) {
  Item item;
  if (text == "...") {
    item.kind = Item::ellipsis;
    return item;
  }
  if (text == "None" || text == "newaxis" || text == "np.newaxis") {
    item.kind = Item::new_axis;
    return item;
  }
  if (text.find(':') == std::string::npos) {
    auto index = parse_integer(text);
    if (!index) {
      throw bad_view(fmt::format("\"{}\" is not an index: expected an integer, a slice start:stop:step, None or ...",
                                 text));
    }
    item.index = *index;
    return item;
  }
  item.kind = Item::slice;
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t colon = text.find(':', start);
    parts.push_back(trim(text.substr(start, colon == std::string::npos ? std::string::npos : colon - start)));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (parts.size() > 3) throw bad_view(fmt::format("\"{}\" is not a slice: expected start:stop:step", text));
  std::optional<std::int64_t>* fields[] = {&item.start, &item.stop, &item.step};
  for (std::size_t k = 0; k < parts.size(); ++k) {
    if (parts[k].empty()) continue;
    auto value = parse_integer(parts[k]);
    if (!value) throw bad_view(fmt::format("slice \"{}\": \"{}\" is not an integer", text, parts[k]));
    *fields[k] = *value;
  }
  if (item.step && *item.step == 0) throw bad_view(fmt::format("slice \"{}\": slice step cannot be zero", text));
  return item;
}

// NumPy's (Python's) slice bounds: start, step and length over an extent.
struct SliceBounds {
  std::int64_t start = 0, step = 1, length = 0;
};

SliceBounds bounds(const Item& item, std::int64_t extent) {
  SliceBounds out;
  out.step = item.step.value_or(1);
  auto adjust = [&](std::optional<std::int64_t> value, bool is_start) {
    if (!value) return is_start ? (out.step > 0 ? 0 : extent - 1) : (out.step > 0 ? extent : -1);
    std::int64_t v = *value;
    if (v < 0) {
      v += extent;
      if (v < 0) v = out.step < 0 ? -1 : 0;
    } else if (v >= extent) {
      v = out.step < 0 ? extent - 1 : extent;
    }
    return v;
  };
  out.start = adjust(item.start, true);
  const std::int64_t stop = adjust(item.stop, false);
  if (out.step > 0) {
    out.length = out.start < stop ? (stop - out.start - 1) / out.step + 1 : 0;
  } else {
    // -step would overflow for the most negative step; any step that large takes one element.
    const std::int64_t span = out.step == INT64_MIN ? 0 : (out.start - stop - 1) / -out.step;
    out.length = stop < out.start ? span + 1 : 0;
  }
  return out;
}

ArrayRef indexed(const ArrayRef& view, const std::string& text) {
  std::vector<std::string> texts = split_items(text);
  // A trailing comma makes a tuple in Python: "x[0,]" is x[0].
  if (texts.size() > 1 && texts.back().empty()) texts.pop_back();
  if (texts.size() == 1 && texts[0].empty()) {
    throw bad_view("[] indexes nothing: give an index per axis, e.g. [0], [:, ::2], [None, :] or [...]");
  }
  std::vector<Item> items;
  int consuming = 0, ellipses = 0;
  for (const auto& item_text : texts) {
    if (item_text.empty()) throw bad_view(fmt::format("[{}]: an empty index between commas", text));
    items.push_back(parse_item(item_text));
    consuming += items.back().kind == Item::integer || items.back().kind == Item::slice;
    ellipses += items.back().kind == Item::ellipsis;
  }
  if (ellipses > 1) throw bad_view(fmt::format("[{}]: an index can only have a single ellipsis ('...')", text));
  if (consuming > view.ndim()) {
    throw bad_view(fmt::format("[{}]: too many indices for array: array is {}-dimensional, but {} were indexed", text,
                               view.ndim(), consuming));
  }
  ArrayRef out = view;
  out.shape.clear();
  out.strides.clear();
  std::int64_t offset = static_cast<std::int64_t>(view.data);
  std::size_t axis = 0;
  auto keep_axes = [&](std::size_t count) {
    for (std::size_t k = 0; k < count; ++k, ++axis) {
      out.shape.push_back(view.shape[axis]);
      out.strides.push_back(view.strides[axis]);
    }
  };
  const std::size_t unnamed = static_cast<std::size_t>(view.ndim() - consuming);
  for (const auto& item : items) {
    switch (item.kind) {
      case Item::ellipsis: keep_axes(unnamed); break;
      case Item::new_axis:
        out.shape.push_back(1);
        out.strides.push_back(0);
        break;
      case Item::integer: {
        const std::int64_t extent = view.shape[axis];
        const std::int64_t index = item.index < 0 ? item.index + extent : item.index;
        if (index < 0 || index >= extent) {
          throw bad_view(fmt::format("index {} is out of bounds for axis {} with size {}", item.index, axis, extent));
        }
        offset += index * view.strides[axis];
        ++axis;
        break;
      }
      case Item::slice: {
        SliceBounds b = bounds(item, view.shape[axis]);
        if (b.length > 0) offset += b.start * view.strides[axis];
        out.shape.push_back(b.length);
        // A step past the axis's extent (x[::-10**18]) leaves at most one element, whose
        // stride is never used: keep the axis's own rather than overflow multiplying.
        std::int64_t stride = 0;
        if (__builtin_mul_overflow(view.strides[axis], b.step, &stride)) {
          if (b.length > 1) throw bad_view(fmt::format("the step {} overflows axis {}'s stride", b.step, axis));
          stride = view.strides[axis];
        }
        out.strides.push_back(stride);
        ++axis;
        break;
      }
    }
  }
  if (ellipses == 0) keep_axes(unnamed);
  out.data = static_cast<std::uint64_t>(offset);
  return out;
}

ArrayRef transposed(const ArrayRef& view, const std::string& axes_text) {
  std::string inner = trim(axes_text);
  // transpose((1, 0)) and transpose(1, 0) are the same in NumPy.
  if (inner.size() >= 2 && inner.front() == '(' && inner.back() == ')') inner = trim(inner.substr(1, inner.size() - 2));
  if (inner.empty()) return view.transposed();
  std::vector<std::string> texts = split_items(inner);
  if (texts.size() > 1 && texts.back().empty()) texts.pop_back();
  std::vector<int> axes;
  for (const auto& text : texts) {
    auto axis = parse_integer(text);
    if (!axis || *axis < -64 || *axis > 64) {
      throw bad_view(fmt::format("transpose({}): \"{}\" is not an axis", axes_text, text));
    }
    axes.push_back(static_cast<int>(*axis));
  }
  try {
    return view.transposed(axes);
  } catch (const Error& error) {
    throw bad_view(fmt::format("transpose({}): {}", axes_text, error.what()));
  }
}

bool ends_with(const std::string& text, std::size_t end, const char* suffix) {
  const std::string tail(suffix);
  return end >= tail.size() && text.compare(end - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

std::pair<std::string, std::string> split_view_suffix(const std::string& text) {
  std::size_t end = text.size();
  while (end > 0) {
    if (ends_with(text, end, ".T")) {
      end -= 2;
    } else if (text[end - 1] == ']') {
      std::size_t open = text.rfind('[', end - 1);
      if (open == std::string::npos) break;
      end = open;
    } else if (text[end - 1] == ')') {
      std::size_t open = text.rfind(".transpose(", end - 1);
      if (open == std::string::npos) break;
      end = open;
    } else {
      break;
    }
  }
  return {text.substr(0, end), text.substr(end)};
}

ArrayRef apply_view(const ArrayRef& view, const std::string& suffix) {
  ArrayRef out = view;
  const std::string transpose_call = ".transpose(";
  std::size_t at = 0;
  while (at < suffix.size()) {
    if (suffix[at] == '[') {
      std::size_t close = suffix.find(']', at);
      if (close == std::string::npos) throw bad_view(fmt::format("\"{}\": a [ without its ]", suffix.substr(at)));
      out = indexed(out, suffix.substr(at + 1, close - at - 1));
      at = close + 1;
    } else if (suffix.compare(at, transpose_call.size(), transpose_call) == 0) {
      std::size_t close = suffix.find(')', at);
      // A nested "(1, 0)" closes twice.
      if (close != std::string::npos && suffix.find('(', at + transpose_call.size()) < close) close = suffix.find(')', close + 1);
      if (close == std::string::npos) throw bad_view(fmt::format("\"{}\": a ( without its )", suffix.substr(at)));
      const std::size_t args = at + transpose_call.size();
      out = transposed(out, suffix.substr(args, close - args));
      at = close + 1;
    } else if (suffix.compare(at, 2, ".T") == 0) {
      out = out.transposed();
      at += 2;
    } else {
      throw bad_view(fmt::format("\"{}\": expected [ITEMS], .T or .transpose(AXES)", suffix.substr(at)));
    }
  }
  return out;
}

}  // namespace kernc::cli
