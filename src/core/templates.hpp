#pragma once
// Device code lives in templates/ as real files; CMake embeds them into the library
// (cmake/embed_templates.cmake) so that a kernc binary needs no files at run time.

#include <string>
#include <string_view>
#include <vector>

namespace kernc::codegen {

struct EmbeddedFile {
  std::string_view name;     ///< path relative to templates/, e.g. "elementwise.cu.in"
  std::string_view content;
};

/// Every file of templates/, as built into this library.
const std::vector<EmbeddedFile>& embedded_templates();

/// The content of one template; throws kernc::Error(not_found) naming the known ones.
std::string_view template_file(std::string_view name);

}  // namespace kernc::codegen
