#pragma once
/// \file
/// The pipeline behind a kernel call, for tools (precompile, cache checks, benchmarks,
/// tests): what a call shape resolves to, the one program it compiles, and the text that
/// names that program within this build of kernc. A program that only defines, plans and
/// launches kernels needs none of it (kernc/kernels.hpp).

#include <string>
#include <vector>

#include "kernc/export.hpp"
#include "kernc/kernels.hpp"
#include "kernc/program.hpp"
#include "kernc/signature.hpp"

namespace kernc {

/// Every parameter's dtype for a call of `types`; throws kernc::Error(invalid_argument).
KERNC_API ResolvedTypes resolve(const ElementwiseKernel& kernel, const CallTypes& types);
KERNC_API ResolvedTypes resolve(const ReductionKernel& kernel, const CallTypes& types);

/// The one program a call shape (types, layout class) uses: deterministic, so its cache key
/// is known without a GPU.
KERNC_API Program program(const ElementwiseKernel& kernel, const CallTypes& types, const Layout& layout);
KERNC_API Program program(const ReductionKernel& kernel, const CallTypes& types, const Layout& layout);
/// A raw kernel's or module's program: its code verbatim. Throws
/// kernc::Error(invalid_argument) for a module made from binary files (nothing to compile).
KERNC_API Program program(const RawKernel& kernel);
KERNC_API Program program(const RawModule& module);

/// What program(kernel, types, layout) is made from, as text that names it within this
/// build of kernc: the key of the cache directory's variant index (Engine::load); empty
/// when the compile options name include directories.
KERNC_API std::string variant(const ElementwiseKernel& kernel, const CallTypes& types, const Layout& layout);
KERNC_API std::string variant(const ReductionKernel& kernel, const CallTypes& types, const Layout& layout);

/// Every layout class a call of `kernel` can select (fewer when no parameter is a non-raw array).
KERNC_API std::vector<Layout> reachable_layouts(const ElementwiseKernel& kernel, const CallTypes& types);

}  // namespace kernc
