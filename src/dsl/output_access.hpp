#pragma once
// NOTE [ outputs in registers ]
// The contiguous elementwise kernel keeps a thread's output elements in registers and
// stores them after the operation, as vectors when aligned (NOTE [ vectorized contiguous
// loop ], templates/array.cuh). A register holds what memory held only if it was loaded,
// and loading every output would add a read to every write-only output. So the operation's
// text decides, conservatively:
//  - outputs stay bound to memory, element by element (the kernel as before), when the
//    operation can leave the loop over a thread's elements early (`return`, `break`,
//    `goto`, `throw`, `asm`): registers stored after it would miss or garble elements; and
//    when it names an output's raw view (`_raw_y`): CuPy binds `y` as a reference into
//    `_raw_y`, so `_raw_y[i]` must read what `y = ...` just assigned;
//  - an output is write-only (its register is not loaded) when the operation's first
//    mention of it is a plain assignment `name = ...` that starts the operation or follows
//    a `;`, whose right side does not mention it, with no `{`, `continue`, `switch`,
//    `case` or `default` before it, no quote in the operation and no `#define` in any
//    snippet (a macro could read or skip it). Comments are ignored;
//  - any other output is loaded before the operation and stored after it: correct for
//    any operation, one more read.
// Pure host code on the snippet text; unit-tested (tests/unit/test_output_access.cpp).

#include <string>
#include <string_view>
#include <vector>

namespace kernc::dsl {

struct OutputAccess {
  /// False: outputs are bound to memory (the operation may leave the element loop early).
  bool in_registers = false;
  /// Per output, in signature order: its register needs no load before the operation.
  std::vector<bool> write_only;
};

/// Decides how the operation uses the outputs named `outputs` (see the NOTE above);
/// `preamble` and `loop_prep` are only searched for macro definitions.
OutputAccess scan_output_access(std::string_view operation, std::string_view preamble, std::string_view loop_prep,
                                const std::vector<std::string>& outputs);

}  // namespace kernc::dsl
