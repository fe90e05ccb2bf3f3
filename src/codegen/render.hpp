#pragma once
// The strict template renderer. One placeholder syntax, ${name} (name: letters, digits,
// underscores). Every placeholder in the template must be given a value and every value
// must be used, otherwise rendering fails: a template and the code that fills it cannot
// drift apart silently.

#include <map>
#include <string>
#include <string_view>

namespace kernc::codegen {

using RenderValues = std::map<std::string, std::string>;

/// Renders `text`; throws kernc::Error(invalid_argument) naming `template_name` and the
/// unknown or unused placeholder, or a malformed "${" sequence.
std::string render(std::string_view template_name, std::string_view text, const RenderValues& values);

}  // namespace kernc::codegen
