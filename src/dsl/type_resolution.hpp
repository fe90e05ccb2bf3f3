#pragma once
// CuPy's type resolution, with errors that say how to fix them.
//
// Outputs are looked at first, then inputs. A concrete parameter needs an array of
// exactly its dtype; a placeholder binds on first sight and must agree afterwards;
// scalars never bind (they are converted to their parameter's type). A placeholder left
// unbound is an error naming it and the remedies.

#include <string_view>

#include "dsl/params.hpp"
#include "kernc/signature.hpp"

namespace kernc::dsl {

ResolvedTypes resolve_types(const Signature& signature, const CallTypes& types, std::string_view kernel_name);

/// A call's types as a spec file's signature writes them, from resolved types only: each
/// scalar as its parameter's type (it is converted on the host), each output as resolved,
/// no explicit bindings. Two calls with the same resolved types give the same result, and
/// so the same program.
CallTypes resolved_call_types(const CallTypes& types, const ResolvedTypes& resolved);

}  // namespace kernc::dsl
