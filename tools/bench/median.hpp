#pragma once
// The median of a benchmark's samples (the upper one of an even count; 0 for none).

#include <algorithm>
#include <vector>

namespace bench {

inline double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace bench
