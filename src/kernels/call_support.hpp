#pragma once
// Pieces shared by the kernel kinds' plans and launches (the call path itself is
// src/kernels/call_plan.hpp).

#include <string>
#include <vector>

#include "dsl/definitions.hpp"
#include "kernels/handle_table.hpp"
#include "kernc/engine.hpp"
#include "kernc/kernels.hpp"
#include "runtime/param_pack.hpp"

namespace kernc::detail {

/// The argument types of a call, as CallTypes (and a compact key for memo tables).
CallTypes call_types(ListView<Arg> inputs, ListView<ArrayRef> outputs,
                     const std::map<std::string, DType>& bindings);
std::string types_key(const CallTypes& types);

/// The TypeEntry for `types`, resolving them on first use with `resolve`.
template <class Resolve>
TypeEntry& type_entry(HandleTable& table, const std::string& key, Resolve&& resolve) {
  std::lock_guard<std::mutex> lock(table.mutex);
  auto found = table.entries.find(key);
  if (found != table.entries.end()) return found->second;
  TypeEntry entry;
  entry.resolved = resolve();  // throws before anything is stored
  return table.entries.emplace(key, std::move(entry)).first->second;
}

/// Names (engine, layout class, device ordinal) in the memo tables of the hot path: a
/// kernel called through two engines loads through each (their caches differ).
/// The device is a field of its own: packing it into the layout code collided at ordinal 1024.
inline FunctionKey function_key(const Engine& engine, const Layout& layout, const Device& device) {
  return {engine.id(), (static_cast<int>(layout.kind) * 8 + layout.rank) * 2 + (layout.index64 ? 1 : 0),
          device.ordinal() * 4 + static_cast<int>(device.backend())};
}

/// The functions of `entry`'s program variant `layout` on `device`: from the memo, or
/// loaded with `load` (an Engine::Loaded) and picked with `pick` (→ LoadedFunctions). The
/// table's lock is not held while loading: compiling must not block other calls.
template <class Load, class Pick>
const LoadedFunctions& find_or_load(HandleTable& table, TypeEntry& entry, const Engine& engine, const Device& device,
                                    const Layout& layout, Load&& load, Pick&& pick) {
  const auto key = function_key(engine, layout, device);
  {
    std::lock_guard<std::mutex> lock(table.mutex);
    auto found = entry.functions.find(key);
    if (found != entry.functions.end()) return found->second;
  }
  LoadedFunctions loaded = pick(load());
  loaded.engine = engine.id();
  std::lock_guard<std::mutex> lock(table.mutex);
  return entry.functions.emplace(key, std::move(loaded)).first->second;
}

/// The error a call path throws when loading its program failed: compile errors mapped to
/// the user's snippets; a not_precompiled error prefixed with the kernel, its signature
/// (resolved types) and layout class, and the spec-file line that would add it.
Error load_error(const Error& error, const std::string& kernel, const CallTypes& types, const ResolvedTypes& resolved,
                 const Layout& layout);

/// The functions of a generated program (elementwise or reduction) for `layout` on
/// `device`: through the kernel's memo (find_or_load), loading on a miss through the
/// engine's variant index (`variant()`, else `make_program()`), with a load error mapped to
/// the user's snippets or the spec line to add (load_error).
template <class Variant, class MakeProgram, class Pick>
const LoadedFunctions& load_generated(HandleTable& table, TypeEntry& entry, Engine& engine, const Device& device,
                                      const std::string& kernel, const CallTypes& types, const ResolvedTypes& resolved,
                                      const Layout& layout, Variant&& variant, MakeProgram&& make_program, Pick&& pick) {
  return find_or_load(table, entry, engine, device, layout, [&] {
    try {
      return engine.load(variant(), make_program, device);
    } catch (const Error& error) {
      throw load_error(error, kernel, types, resolved, layout);
    }
  }, pick);
}

/// Packs a scalar converted to `dtype`.
void pack_scalar(ParamPack& pack, const Scalar& scalar, DType dtype);

[[noreturn]] void throw_scalar_out_of_range(const std::string& kernel, const std::string& parameter, const Scalar& scalar,
                                            DType dtype);
/// Throws invalid_argument when `scalar` is an integer outside the range of the integer
/// `dtype` it is converted to, or a NaN going to one (Scalar::fits), naming the value, the
/// kernel's parameter (`parameter`: its text as declared) and the type: never a silent
/// wrap-around or zero.
inline void check_scalar_range(const std::string& kernel, const std::string& parameter, const Scalar& scalar, DType dtype) {
  if (!scalar.fits(dtype)) throw_scalar_out_of_range(kernel, parameter, scalar, dtype);
}

/// Writes a call's array addresses and scalar values (converted to `input_types`) at the
/// start of their parameters in a pack restored from a kept plan (NOTE [ kept plan ]):
/// input k is parameter k, output k parameter inputs.size() + k.
void write_call_arguments(ParamPack& pack, ListView<Arg> inputs, ListView<ArrayRef> outputs,
                          const std::vector<DType>& input_types);

/// Packs a raw parameter: a run-time-rank view of the whole array.
void pack_raw(ParamPack& pack, const ArrayRef& array, bool index64);


}  // namespace kernc::detail
