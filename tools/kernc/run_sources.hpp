#pragma once
// `kernc run`'s values on the host: what a SOURCE on the command line stands for (a .npy
// file, generated data, a scalar literal, a view of one, another argument's buffer). The
// values themselves are the library's (kernc/host_values.hpp); this is their syntax.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernc/dtype.hpp"
#include "kernc/host_values.hpp"
#include "kernc/scalar.hpp"

namespace kernc::cli {

/// One value for a kernel parameter, read from a SOURCE: a host array or a scalar (the
/// library's HostValue, include/kernc/host_values.hpp), its `description` the text to print
/// so that the value can be recognised and remade, e.g.
/// "float32 (1000,) random:1000:float32:2718281828" or "2.5 (float64 scalar)".
using SourceValue = HostValue;

/// A SOURCE "@NAME", optionally followed by a view ("@x[::2]"): no data of its own, but the
/// device buffer of the call's argument NAME (CuPy's in-place call k(x, y, x)). See NOTE
/// [ shared buffers ] in run_plan.cpp.
struct SharedSource {
  std::string name;    ///< a parameter name, or (raw kernels) a 0-based position
  std::string suffix;  ///< a view of that argument's view, as after any array SOURCE ("" for none)
};

/// The SOURCE syntax, for --help and the error for a malformed SOURCE.
extern const char* const kSourceSyntax;
/// The same in one line, for errors about missing arguments.
extern const char* const kSourceHint;

/// Reads or makes the value `text` stands for (see kSourceSyntax). Throws kernc::Error:
/// invalid_argument for a malformed SOURCE or .npy file, io for a file that cannot be read.
/// The message says what is wrong; the caller names the SOURCE (as `--in x=SOURCE: ...`).
SourceValue load_source(const std::string& text);

/// The "@NAME" SOURCE `text` stands for, or std::nullopt for any other SOURCE. Throws
/// kernc::Error(invalid_argument) for an "@" without a name or with one that is no
/// identifier or position ("@", "@x-y").
std::optional<SharedSource> parse_shared_source(const std::string& text);

/// The value of a SOURCE `shared` that views `target`'s buffer (`target_name`'s, once
/// resolved): its dtype, and `shared.suffix` applied to its view. It has no `data`: the
/// bytes are the target's, on the device. Throws kernc::Error(invalid_argument) for a
/// scalar target or a bad view.
SourceValue shared_value(const SharedSource& shared, const SourceValue& target, const std::string& target_name);

/// Parses "1000", "64x1000", "()" (0-d); throws kernc::Error(invalid_argument).
std::vector<std::int64_t> parse_shape(const std::string& text);

/// A scalar as its literal: "2.5", "-3", "true", "(1+2j)".
std::string format_scalar(const Scalar& scalar);

}  // namespace kernc::cli
