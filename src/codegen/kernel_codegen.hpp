#pragma once
// Renders a kernel definition for one call shape into a Program, from the templates.

#include "dsl/definitions.hpp"
#include "kernc/program.hpp"
#include "kernc/signature.hpp"

namespace kernc::codegen {

Program render_elementwise(const detail::ElementwiseDefinition& definition, const CallTypes& types,
                           const ResolvedTypes& resolved, const Layout& layout);

Program render_reduction(const detail::ReductionDefinition& definition, const CallTypes& types,
                         const ResolvedTypes& resolved, const Layout& layout);

/// What render_elementwise / render_reduction make the program from, as text: the
/// definition as written, the call's resolved types and the layout class. With the build of
/// kernc, it names the program exactly (NOTE [ variant index ]). Empty when the program also
/// depends on files, which it cannot name (include directories in the compile options).
std::string elementwise_variant(const detail::ElementwiseDefinition& definition, const CallTypes& types,
                                const ResolvedTypes& resolved, const Layout& layout);
std::string reduction_variant(const detail::ReductionDefinition& definition, const CallTypes& types,
                              const ResolvedTypes& resolved, const Layout& layout);

/// The device headers every generated program gets (kernc/prelude.cuh, ...), by name.
std::map<std::string, std::string> device_headers();

}  // namespace kernc::codegen
