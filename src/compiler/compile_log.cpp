#include "compiler/compile_log.hpp"

namespace kernc::compiler {

std::string first_error_line(const std::string& log) {
  size_t start = 0;
  std::string first;
  while (start < log.size()) {
    size_t end = log.find('\n', start);
    std::string line = log.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (first.empty() && !line.empty()) first = line;
    if (line.find("error") != std::string::npos) return line;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return first;
}

}  // namespace kernc::compiler
