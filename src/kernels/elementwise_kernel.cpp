#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "codegen/kernel_codegen.hpp"
#include "dsl/definitions.hpp"
#include "dsl/type_resolution.hpp"
#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernc/pipeline.hpp"
#include "kernels/kernel_access.hpp"
#include "kernc/limits.hpp"
#include "kernels/handle_table.hpp"

namespace kernc {

ElementwiseKernel::ElementwiseKernel(std::string in_params, std::string out_params, std::string operation,
                                     std::string name, ElementwiseOptions options) {
  auto definition = std::make_shared<detail::ElementwiseDefinition>();
  definition->signature = dsl::parse_signature(in_params, out_params, name);
  if (definition->signature.out.empty()) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{}: an ElementwiseKernel needs at least one output", name));
  }
  const std::pair<const std::string*, const char*> snippets[] = {{&operation, "operation"},
                                                                 {&options.preamble, "preamble"},
                                                                 {&options.loop_prep, "loop_prep"},
                                                                 {&options.after_loop, "after_loop"}};
  for (const auto& [text, what] : snippets) {
    dsl::check_size(fmt::format("{}: {}", name, what), *text, limits::kMaxSourceBytes);
  }
  // Conservative: a word `i` or `_ind` anywhere (a comment too) keeps the C order.
  definition->any_loop_order = !std::any_of(std::begin(snippets), std::end(snippets), [](const auto& snippet) {
    return dsl::names_word(*snippet.first, "i") || dsl::names_word(*snippet.first, "_ind");
  });
  std::vector<std::string> output_names;
  for (const auto& out : definition->signature.out) output_names.push_back(out.name);
  definition->output_access = dsl::scan_output_access(operation, options.preamble, options.loop_prep, output_names);
  definition->name = std::move(name);
  definition->operation = std::move(operation);
  definition->options = std::move(options);
  validate(definition->options.compile);
  definition_ = std::move(definition);
  handles_ = std::make_shared<detail::HandleTable>();
}

ElementwiseKernel::~ElementwiseKernel() = default;
ElementwiseKernel::ElementwiseKernel(const ElementwiseKernel&) = default;
ElementwiseKernel& ElementwiseKernel::operator=(const ElementwiseKernel&) = default;

const std::string& ElementwiseKernel::name() const noexcept { return definition_->name; }
std::size_t ElementwiseKernel::input_count() const noexcept { return definition_->signature.in.size(); }
std::size_t ElementwiseKernel::output_count() const noexcept { return definition_->signature.out.size(); }
const std::vector<Parameter>& ElementwiseKernel::in_params() const noexcept { return definition_->signature.in; }
const std::vector<Parameter>& ElementwiseKernel::out_params() const noexcept { return definition_->signature.out; }
const ElementwiseOptions& ElementwiseKernel::options() const noexcept { return definition_->options; }
const std::string& ElementwiseKernel::operation() const noexcept { return definition_->operation; }

ResolvedTypes resolve(const ElementwiseKernel& kernel, const CallTypes& types) {
  const auto& def = detail::KernelAccess::definition(kernel);
  return dsl::resolve_types(def.signature, types, def.name);
}

Program program(const ElementwiseKernel& kernel, const CallTypes& types, const Layout& layout) {
  return codegen::render_elementwise(detail::KernelAccess::definition(kernel), types, resolve(kernel, types), layout);
}

std::string variant(const ElementwiseKernel& kernel, const CallTypes& types, const Layout& layout) {
  return codegen::elementwise_variant(detail::KernelAccess::definition(kernel), types, resolve(kernel, types), layout);
}

}  // namespace kernc
