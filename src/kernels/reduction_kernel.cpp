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

ReductionKernel::ReductionKernel(std::string in_params, std::string out_params, std::string map_expr,
                                 std::string reduce_expr, std::string post_map_expr, std::string identity,
                                 std::string name, ReductionOptions options) {
  auto definition = std::make_shared<detail::ReductionDefinition>();
  definition->signature = dsl::parse_signature(in_params, out_params, name);
  if (definition->signature.out.empty()) {
    throw Error(ErrorCode::invalid_argument, fmt::format("{}: a ReductionKernel needs at least one output", name));
  }
  // The generated code binds the reduced values as a and b (CuPy's names in reduce_expr
  // and post_map_expr); a parameter of that name would clash with them.
  for (const auto* list : {&definition->signature.in, &definition->signature.out}) {
    for (const auto& p : *list) {
      if (p.name == "a" || p.name == "b") {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("{}: \"{}\": the names a and b are reserved in a ReductionKernel (they are the values "
                                "reduce_expr combines)",
                                name, p.text));
      }
    }
  }
  auto require = [&name](const std::string& text, const char* what) {
    if (text.find_first_not_of(" \t\n") == std::string::npos) {
      throw Error(ErrorCode::invalid_argument, fmt::format("{}: {} is empty", name, what));
    }
  };
  const std::pair<const std::string*, const char*> snippets[] = {
      {&map_expr, "map_expr"},         {&reduce_expr, "reduce_expr"},       {&post_map_expr, "post_map_expr"},
      {&identity, "identity"},         {&options.preamble, "preamble"},     {&options.reduce_type, "reduce_type"}};
  for (const auto& [text, what] : snippets) {
    dsl::check_size(fmt::format("{}: {}", name, what), *text, limits::kMaxSourceBytes);
  }
  require(map_expr, "map_expr");
  require(reduce_expr, "reduce_expr");
  require(post_map_expr, "post_map_expr");
  definition->name = std::move(name);
  definition->map_expr = std::move(map_expr);
  definition->reduce_expr = std::move(reduce_expr);
  definition->post_map_expr = std::move(post_map_expr);
  definition->identity = identity.find_first_not_of(" \t\n") == std::string::npos ? std::string() : std::move(identity);
  definition->options = std::move(options);
  validate(definition->options.compile);
  definition_ = std::move(definition);
  handles_ = std::make_shared<detail::HandleTable>();
}

ReductionKernel::~ReductionKernel() = default;
ReductionKernel::ReductionKernel(const ReductionKernel&) = default;
ReductionKernel& ReductionKernel::operator=(const ReductionKernel&) = default;

const std::string& ReductionKernel::name() const noexcept { return definition_->name; }
std::size_t ReductionKernel::input_count() const noexcept { return definition_->signature.in.size(); }
std::size_t ReductionKernel::output_count() const noexcept { return definition_->signature.out.size(); }
const std::vector<Parameter>& ReductionKernel::in_params() const noexcept { return definition_->signature.in; }
const std::vector<Parameter>& ReductionKernel::out_params() const noexcept { return definition_->signature.out; }
const ReductionOptions& ReductionKernel::options() const noexcept { return definition_->options; }
bool ReductionKernel::has_identity() const noexcept { return !definition_->identity.empty(); }

ResolvedTypes resolve(const ReductionKernel& kernel, const CallTypes& types) {
  const auto& def = detail::KernelAccess::definition(kernel);
  return dsl::resolve_types(def.signature, types, def.name);
}

Program program(const ReductionKernel& kernel, const CallTypes& types, const Layout& layout) {
  return codegen::render_reduction(detail::KernelAccess::definition(kernel), types, resolve(kernel, types), layout);
}

std::string variant(const ReductionKernel& kernel, const CallTypes& types, const Layout& layout) {
  return codegen::reduction_variant(detail::KernelAccess::definition(kernel), types, resolve(kernel, types), layout);
}

}  // namespace kernc
