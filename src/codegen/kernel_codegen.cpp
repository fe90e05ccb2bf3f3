#include "codegen/kernel_codegen.hpp"

#include <fmt/format.h>

#include "codegen/render.hpp"
#include "codegen/snippets.hpp"
#include "core/templates.hpp"
#include "dsl/loop_plan.hpp"
#include "dsl/type_resolution.hpp"
#include "kernc/error.hpp"

namespace kernc::codegen {

namespace {

// The C type of a parameter in generated code: its placeholder (typedef'd) or dtype.
std::string c_type(const dsl::Param& param, DType resolved) {
  return param.placeholder.empty() ? std::string(device_type(resolved)) : param.placeholder;
}

const char* index_type(const Layout& layout) { return layout.index64 ? "long long" : "int"; }

std::string type_defs(const ResolvedTypes& resolved) {
  std::string out;
  for (const auto& [letter, dtype] : resolved.placeholders) out += fmt::format("typedef {} {};\n", device_type(dtype), letter);
  return out;
}

bool is_scalar(const CallTypes& types, size_t input) { return input < types.inputs.size() && types.inputs[input].scalar; }

// The kernel parameter for one argument. Non-raw arrays are passed as _raw_<name> and
// bound to <name> per element; raw arrays and scalars keep their own name.
std::string param_decl(const dsl::Param& param, DType dtype, bool scalar, int rank, const Layout& layout) {
  std::string type = c_type(param, dtype);
  if (scalar) return fmt::format("{} {}, ", type, param.name);
  if (param.raw) return fmt::format("kernc::ArrayView<{}, -1, {}> {}, ", type, index_type(layout), param.name);
  return fmt::format("kernc::ArrayView<{}, {}, {}> _raw_{}, ", type, rank, index_type(layout), param.name);
}

// The variant named by resolved types only: a scalar is converted on the host to its
// parameter's type, so the type it arrived as must not make another program (a spec's
// "scalar float32" signature then covers a 2.0 passed as a double, or 2 as an int64).
std::string variant_text(const CallTypes& types, const ResolvedTypes& resolved, const Layout& layout) {
  return fmt::format("{} {}", format_call_signature(dsl::resolved_call_types(types, resolved)), layout.str());
}

// The optional device headers a program needs: float16.cuh for half types, float8.cuh
// (after float16.cuh, whose traits it uses) for the float8 types, complex.cuh for complex
// ones, each also when the user's own code names them. Leaving them out
// keeps a plain float kernel's compile close to a raw NVRTC compile.
std::string type_headers(const ResolvedTypes& resolved, const std::vector<const std::string*>& texts,
                         bool native_half_arithmetic) {
  bool half = false, float8 = false, complex = false;
  auto note = [&](DType d) {
    half = half || d == DType::float16 || d == DType::bfloat16;
    float8 = float8 || d == DType::float8_e4m3fn || d == DType::float8_e5m2;
    complex = complex || is_complex(d);
  };
  for (DType d : resolved.inputs) note(d);
  for (DType d : resolved.outputs) note(d);
  for (const auto& [letter, d] : resolved.placeholders) note(d);
  for (const std::string* text : texts) {
    half = half || text->find("float16") != std::string::npos;
    float8 = float8 || text->find("float8_e") != std::string::npos;
    complex = complex || text->find("complex") != std::string::npos || text->find("kernc::") != std::string::npos;
  }
  std::string out;
  // NOTE [ half arithmetic is float arithmetic ] (templates/float16.cuh): the opt-in is a
  // macro of the source, so it is part of the program and of its key.
  if ((half || float8 || complex) && native_half_arithmetic) out += "#define KERNC_NATIVE_HALF_ARITHMETIC 1\n";
  if (half || float8 || complex) out += "#include \"kernc/float16.cuh\"\n";
  if (float8) out += "#include \"kernc/float8.cuh\"\n";
  if (complex) out += "#include \"kernc/complex.cuh\"\n";
  return out;
}

// The kernel and variant a generated program is for, as its cache entry records them.
ProgramOrigin origin_of(const std::string& name, const CallTypes& types, const ResolvedTypes& resolved,
                        const Layout& layout) {
  return {name, format_call_signature(dsl::resolved_call_types(types, resolved)), layout.str()};
}

Program make_program(ProgramOrigin origin, std::string source, const CompileOptions& options) {
  Program program;
  program.name = origin.kernel + ".cu";
  program.origin = std::move(origin);
  program.source = finish_line_directives(std::move(source), program.name);
  program.options = options;
  for (auto& [header, content] : device_headers()) program.options.headers[header] = content;
  program.try_minimal_builtins = true;  // kernc's templates and CuPy-style snippets
  return program;
}

}  // namespace

std::map<std::string, std::string> device_headers() {
  std::map<std::string, std::string> headers;
  for (const char* name : {"prelude.cuh", "float16.cuh", "float8.cuh", "complex.cuh", "array.cuh"}) {
    headers[std::string("kernc/") + name] = std::string(template_file(name));
  }
  return headers;
}

Program render_elementwise(const detail::ElementwiseDefinition& definition, const CallTypes& types,
                           const ResolvedTypes& resolved, const Layout& layout) {
  const auto& sig = definition.signature;
  const std::string& name = definition.name;
  const int rank = layout.view_rank();
  const bool contiguous = rank == 0;
  const bool tiled = layout.kind == LayoutKind::tiled;
  // Inputs are preloaded into _v_<name>[_kUnroll] and bound from there (see
  // templates/elementwise_contiguous.cu.in, elementwise.cu.in and elementwise_tiled.cu.in),
  // at the flat index, through the multi-index, or (tiled, staged) from a shared tile.
  const char* indent = "        ";
  std::string params, refs, preload_decls, preload_loads, staged_loads, input_sizes;
  // The contiguous kernel's vector path (NOTE [ vectorized contiguous loop ]).
  std::string vector_loads, vector_stores, scalar_stores, vector_aligned;
  // The host's in-place path (templates/elementwise_contiguous.cu.in): every array bound to
  // its memory, taken when no output shares memory with another array.
  std::string host_refs;
  std::vector<std::string> inputs_in_memory, outputs_in_memory;
  bool raw_arrays = false;  // indexed freely: the in-place path cannot tell what they overlap
  const char* per_thread = contiguous ? "_kN" : "_kUnroll";
  const auto& access = definition.output_access;
  auto note_vector_array = [&](const std::string& type, const std::string& name) {
    vector_aligned += fmt::format("{}kernc::VectorAccess<{}, _kN>::aligned(_raw_{}.data_)",
                                  vector_aligned.empty() ? "" : " && ", type, name);
  };
  int array_input = 0;  // the bit of this input in the tiled kernel's _staged
  for (size_t k = 0; k < sig.in.size(); ++k) {
    const auto& p = sig.in[k];
    bool scalar = is_scalar(types, k);
    params += param_decl(p, resolved.inputs[k], scalar, rank, layout);
    raw_arrays = raw_arrays || (p.raw && !scalar);
    if (scalar || p.raw) continue;
    std::string type = c_type(p, resolved.inputs[k]);
    preload_decls += fmt::format("    {} _v_{}[{}];\n", type, p.name, per_thread);
    refs += fmt::format("{}const {}& {} __attribute__((unused)) = _v_{}[_k];\n", indent, type, p.name, p.name);
    host_refs += fmt::format("{}const {}& {} __attribute__((unused)) = _raw_{}.data_[i];\n", indent, type, p.name, p.name);
    inputs_in_memory.push_back(p.name);
    if (contiguous) {
      note_vector_array(type, p.name);
      vector_loads += fmt::format("      kernc::VectorAccess<{}, _kN>::load(_v_{}, _raw_{}.data_ + _base);\n", type,
                                  p.name, p.name);
    }
    if (!tiled) {
      preload_loads += fmt::format("{}_v_{}[_k] = _raw_{}[{}];\n", contiguous ? "          " : "        ", p.name, p.name,
                                   contiguous ? "_j" : "_ind.get()");
      continue;
    }
    input_sizes += fmt::format("{}sizeof({})", input_sizes.empty() ? "" : ", ", type);
    const int bit = array_input++;
    if (bit >= 32) {
      preload_loads += fmt::format("        _v_{}[_k] = _raw_{}[_ind.get()];\n", p.name, p.name);
      continue;
    }
    preload_loads += fmt::format("        if (!(_staged & {}u)) _v_{}[_k] = _raw_{}[_ind.get()];\n", 1u << bit, p.name, p.name);
    staged_loads += fmt::format(
        "    if (_staged & {bit}u) {{\n"
        "      {type}* const _tile_{name} = reinterpret_cast<{type}*>(_tile_bytes);\n"
        "      __syncthreads();  // the tile's previous reader is done\n"
        "#pragma unroll\n"
        "      for (int _k = 0; _k < _kUnroll; ++_k) {{\n"
        "        _ind.index[_kRows] = _row0 + _tx;\n"
        "        _ind.index[_kCols] = _col0 + _ty + _k * _kRowStep;\n"
        "        if (_ind.index[_kRows] < _rows && _ind.index[_kCols] < _cols) {{\n"
        "          _tile_{name}[(_ty + _k * _kRowStep) * (_kTile + 1) + _tx] = _raw_{name}[_ind.get()];\n"
        "        }}\n"
        "      }}\n"
        "      __syncthreads();\n"
        "#pragma unroll\n"
        "      for (int _k = 0; _k < _kUnroll; ++_k) {{\n"
        "        if (_row0 + _ty + _k * _kRowStep < _rows && _col0 + _tx < _cols) {{\n"
        "          _v_{name}[_k] = _tile_{name}[_tx * (_kTile + 1) + _ty + _k * _kRowStep];\n"
        "        }}\n"
        "      }}\n"
        "    }}\n",
        fmt::arg("bit", 1u << bit), fmt::arg("type", type), fmt::arg("name", p.name));
  }
  for (size_t k = 0; k < sig.out.size(); ++k) {
    const auto& p = sig.out[k];
    params += param_decl(p, resolved.outputs[k], false, rank, layout);
    raw_arrays = raw_arrays || p.raw;
    if (p.raw) continue;
    const std::string type = c_type(p, resolved.outputs[k]);
    if (!contiguous || !access.in_registers) {
      refs += fmt::format("{}{}& {} __attribute__((unused)) = _raw_{}[{}];\n", indent, type, p.name, p.name, contiguous ? "i" : "_ind.get()");
      host_refs += fmt::format("{}{}& {} __attribute__((unused)) = _raw_{}[i];\n", indent, type, p.name, p.name);
      continue;
    }
    // NOTE [ outputs in registers ] (src/dsl/output_access.hpp)
    note_vector_array(type, p.name);
    preload_decls += fmt::format("    {} _o_{}[_kN];\n", type, p.name);
    refs += fmt::format("{}{}& {} __attribute__((unused)) = _o_{}[_k];\n", indent, type, p.name, p.name);
    host_refs += fmt::format("{}{}& {} __attribute__((unused)) = _raw_{}.data_[i];\n", indent, type, p.name, p.name);
    outputs_in_memory.push_back(p.name);
    if (!access.write_only[k]) {
      vector_loads += fmt::format("      kernc::VectorAccess<{}, _kN>::load(_o_{}, _raw_{}.data_ + _base);\n", type,
                                  p.name, p.name);
      preload_loads += fmt::format("          _o_{}[_k] = _raw_{}[_j];\n", p.name, p.name);
    }
    vector_stores += fmt::format("      kernc::VectorAccess<{}, _kN>::store(_raw_{}.data_ + _base, _o_{});\n", type,
                                 p.name, p.name);
    scalar_stores += fmt::format("          _raw_{}[_j] = _o_{}[_k];\n", p.name, p.name);
  }
  const auto& o = definition.options;
  RenderValues values = {
      {"kernel_name", name},
      {"variant", variant_text(types, resolved, layout)},
      {"type_headers", type_headers(resolved, {&definition.operation, &o.preamble, &o.loop_prep, &o.after_loop},
                                      o.native_half_arithmetic)},
      {"type_defs", type_defs(resolved)},
      {"preamble", wrap_snippet(name, "preamble", o.preamble)},
      {"params", params},
      {"index_type", index_type(layout)},
      // CuPy ends loop_prep and after_loop with ";" as it does the operation: `int n = 0`
      // is a whole loop_prep there, so it must be here.
      {"loop_prep", wrap_snippet(name, "loop_prep", o.loop_prep, ";")},
      {"element_refs", refs},
      {"operation", wrap_snippet(name, "operation", definition.operation, ";")},
      {"after_loop", wrap_snippet(name, "after_loop", o.after_loop, ";")},
  };
  values["preload_decls"] = preload_decls;
  values["preload_loads"] = preload_loads;
  if (tiled) {
    values["rank"] = std::to_string(rank);
    values["staged_loads"] = staged_loads;
    values["input_sizes"] = input_sizes.empty() ? "1" : input_sizes;
    return make_program(origin_of(name, types, resolved, layout), render("elementwise_tiled.cu.in", template_file("elementwise_tiled.cu.in"), values), o.compile);
  }
  if (contiguous) {
    std::vector<std::size_t> item_sizes;
    for (size_t k = 0; k < sig.in.size(); ++k) {
      if (!is_scalar(types, k) && !sig.in[k].raw) item_sizes.push_back(itemsize(resolved.inputs[k]));
    }
    for (size_t k = 0; k < sig.out.size(); ++k) {
      if (!sig.out[k].raw) item_sizes.push_back(itemsize(resolved.outputs[k]));
    }
    values["elements_per_thread"] = std::to_string(dsl::contiguous_elements_per_thread(item_sizes));
    // Outputs bound to memory are written element by element: no vectors then.
    values["vector_aligned"] = access.in_registers && !vector_aligned.empty() ? vector_aligned : "false";
    values["vector_loads"] = vector_loads;
    values["vector_stores"] = vector_stores;
    std::string apart;
    for (size_t o = 0; o < outputs_in_memory.size(); ++o) {
      std::vector<std::string> others = inputs_in_memory;
      others.insert(others.end(), outputs_in_memory.begin() + static_cast<std::ptrdiff_t>(o) + 1, outputs_in_memory.end());
      for (const auto& other : others) {
        apart += fmt::format("{}kernc::apart(_raw_{}.data_, _raw_{}.data_, _ind.size())", apart.empty() ? "" : " && ",
                             outputs_in_memory[o], other);
      }
    }
    // Outputs bound to memory already, none, or raw arrays: the group takes the copies' path.
    values["host_apart"] =
        access.in_registers && !raw_arrays && !outputs_in_memory.empty() ? (apart.empty() ? "true" : apart) : "false";
    values["host_element_refs"] = host_refs;
    values["scalar_stores"] = scalar_stores;
    values["outputs_note"] = !access.in_registers ? "here the operation may leave the loop early: outputs are bound to memory"
                                                  : "NOTE [ outputs in registers ], src/dsl/output_access.hpp";
    return make_program(origin_of(name, types, resolved, layout), render("elementwise_contiguous.cu.in", template_file("elementwise_contiguous.cu.in"), values),
                        o.compile);
  }
  values["rank"] = std::to_string(rank);
  return make_program(origin_of(name, types, resolved, layout), render("elementwise.cu.in", template_file("elementwise.cu.in"), values), o.compile);
}

Program render_reduction(const detail::ReductionDefinition& definition, const CallTypes& types,
                         const ResolvedTypes& resolved, const Layout& layout) {
  if (layout.kind != LayoutKind::contiguous && layout.kind != LayoutKind::generic) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: reductions use the contiguous or generic layout, not {}", definition.name, layout.str()));
  }
  const auto& sig = definition.signature;
  const std::string& name = definition.name;
  int rank = layout.view_rank();
  std::string params, input_refs, output_refs, preload_decls, preload_loads, row_setup, row_decls;
  // The generic layout's columns kernel (templates/reduction_columns.cu.in).
  std::string column_decls, column_loads, column_refs, column_rows;
  // Its host body (NOTE [ host reduction ]): a band's rows as segments of side-by-side outputs.
  std::string host_flat_check, host_segments, host_row_pointers, host_refs;
  // The one-output kernel's host body: a row read through a pointer (contiguous) or its rows.
  std::string host_row_decls, host_element_refs;
  // NOTE [ reduction slots ]: the contiguous layout's lanes take 16 bytes of the widest input.
  std::vector<std::size_t> slot_sizes;
  std::string slot_check;
  const bool generic = layout.kind == LayoutKind::generic;
  for (size_t k = 0; k < sig.in.size(); ++k) {
    const auto& p = sig.in[k];
    bool scalar = is_scalar(types, k);
    params += param_decl(p, resolved.inputs[k], scalar, rank, layout);
    if (!scalar && !p.raw) {
      // Preloaded kUnroll at a time (see templates/reduction.cu.in), then bound by name. In
      // the generic layout an output's row is found once and its elements by the reduced
      // index alone (kernc::ReductionRows): no division per element.
      std::string type = c_type(p, resolved.inputs[k]);
      preload_decls += fmt::format("        {} _v_{}[_kUnroll][_kSlot];\n", type, p.name);
      slot_sizes.push_back(itemsize(resolved.inputs[k]));
      if (generic) {
        row_setup += fmt::format("  const kernc::ReductionRows<{}, _index_t> _rows_{}(_raw_{}, _reduce_size);\n", type,
                                 p.name, p.name);
        row_decls += fmt::format("      char* const _row_{} = _j_first < _j_end ? _rows_{}.row(_i) : nullptr;\n", p.name,
                                 p.name);
        preload_loads += fmt::format("            _v_{}[_k][0] = _rows_{}.at(_row_{}, _jl);\n", p.name, p.name, p.name);
        host_row_decls += fmt::format("    char* const _row_{0} = _j_first < _j_end ? _rows_{0}.row(_i) : nullptr;\n",
                                      p.name);
        host_element_refs += fmt::format("        const {0}& {1} = _rows_{1}.at(_row_{1}, _J);\n", type, p.name);
        column_rows += fmt::format("      char* const _row_{} = _rows_{}.row(_i0);\n", p.name, p.name);
        column_decls += fmt::format("        {} _v_{}[_kUnroll][_kColumns];\n", type, p.name);
        column_loads += fmt::format("            kernc::VectorAccess<{}, _kColumns>::load(_v_{}[_k], &_rows_{}.at(_row_{}, _jl));\n",
                                    type, p.name, p.name, p.name);
        column_refs += fmt::format("              const {}& {} __attribute__((unused)) = _v_{}[_k][_c];\n", type, p.name, p.name);
        host_flat_check += fmt::format("    _flat = _flat && _rows_{}.side_by_side(_i_first, _n);\n", p.name);
        host_segments += fmt::format(
            "    char* _segment_{0}[_kBand];\n"
            "    for (int _s = 0; _s < _segments; ++_s) _segment_{0}[_s] = _rows_{0}.row(_i_first + _s * _kColumns);\n",
            p.name);
        host_row_pointers +=
            fmt::format("        const {0}* const _p_{1} = &_rows_{1}.at(_segment_{1}[_s], _J);\n", type, p.name);
        host_refs += fmt::format("            const {0}& {1} = _p_{1}[_c];\n", type, p.name);
      } else {
        host_row_decls += fmt::format("    const {0}* const _p_{1} = _raw_{1}.data_ + _i * _reduce_size;\n", type, p.name);
        host_element_refs += fmt::format("        const {0}& {1} = _p_{1}[_J];\n", type, p.name);
        slot_check += fmt::format(" && kernc::VectorAccess<{}, _kSlot>::aligned(_raw_{}.data_)", type, p.name);
        preload_loads += fmt::format(
            "            if (_whole_slots) {{\n"
            "              kernc::VectorAccess<{0}, _kSlot>::load(_v_{1}[_k], _raw_{1}.data_ + _i * _reduce_size + _jl);\n"
            "            }} else {{\n"
            "#pragma unroll\n"
            "              for (int _e = 0; _e < _kSlot; ++_e) {{\n"
            "                if (_jl + _e < _j_end) _v_{1}[_k][_e] = _raw_{1}[_i * _reduce_size + _jl + _e];\n"
            "              }}\n"
            "            }}\n",
            type, p.name);
      }
      input_refs += fmt::format("              const {}& {} __attribute__((unused)) = _v_{}[_k][_e];\n", type, p.name, p.name);
    }
  }
  for (size_t k = 0; k < sig.out.size(); ++k) {
    const auto& p = sig.out[k];
    params += param_decl(p, resolved.outputs[k], false, rank, layout);
    if (!p.raw) output_refs += fmt::format("        {}& {} __attribute__((unused)) = _raw_{}[_i];\n", c_type(p, resolved.outputs[k]), p.name, p.name);
  }
  const auto& o = definition.options;
  std::string reduce_type = o.reduce_type;
  if (reduce_type.empty()) {
    reduce_type = c_type(sig.out.at(0), resolved.outputs.at(0));
  } else if (auto dtype = parse_dtype(reduce_type); dtype && reduce_type == to_string(*dtype)) {
    reduce_type = device_type(*dtype);  // canonical dtype names; anything else is a C type
  }
  bool has_identity = !definition.identity.empty();
  RenderValues values = {
      {"kernel_name", name},
      {"variant", variant_text(types, resolved, layout)},
      {"type_headers", type_headers(resolved, {&definition.map_expr, &definition.reduce_expr, &definition.post_map_expr,
                                               &definition.identity, &o.preamble, &reduce_type},
                                      o.native_half_arithmetic)},
      {"type_defs", type_defs(resolved)},
      {"reduce_type", reduce_type},
      {"preload_decls", preload_decls},
      {"preload_loads", preload_loads},
      {"row_setup", row_setup},
      {"row_decls", row_decls},
      {"host_row_decls", host_row_decls},
      {"host_refs", host_element_refs},
      {"preamble", wrap_snippet(name, "preamble", o.preamble)},
      {"has_identity", has_identity ? "true" : "false"},
      {"params", params},
      {"index_type", index_type(layout)},
      {"reduce_expr", wrap_snippet(name, "reduce_expr", definition.reduce_expr)},
      {"identity", has_identity ? "_type_reduce(\n" + wrap_snippet(name, "identity", definition.identity) + ")"
                                : std::string("_type_reduce()")},
      {"input_refs", input_refs},
      {"map_expr", wrap_snippet(name, "map_expr", definition.map_expr)},
      {"output_refs", output_refs},
      {"post_map_expr", wrap_snippet(name, "post_map_expr", definition.post_map_expr, ";")},
  };
  const int slot = generic ? 1 : dsl::reduction_columns(slot_sizes);
  values["slot_elements"] = std::to_string(slot);
  // Vector loads need every row aligned: the row length a whole number of slots too.
  values["slot_check"] = generic ? std::string()
                                 : "  const bool _whole_slots __attribute__((unused)) = _reduce_size % _kSlot == 0" +
                                       slot_check + ";\n";
  values["columns_kernel"] = "";
  const int columns = dsl::reduction_columns(slot_sizes);
  if (generic && columns > 1) {
    RenderValues column_values = values;
    for (const char* unused : {"type_headers", "type_defs", "reduce_type", "preamble", "has_identity", "params", "variant",
                               "slot_elements", "slot_check"}) {
      column_values.erase(unused);
    }
    column_values.erase("columns_kernel");
    column_values["columns"] = std::to_string(columns);
    column_values["row_decls"] = column_rows;
    column_values["preload_decls"] = column_decls;
    column_values["preload_loads"] = column_loads;
    column_values["input_refs"] = column_refs;
    column_values.erase("host_row_decls");
    column_values["host_flat_check"] = host_flat_check;
    column_values["host_segments"] = host_segments;
    column_values["host_row_pointers"] = host_row_pointers;
    column_values["host_refs"] = host_refs;
    values["columns_kernel"] = render("reduction_columns.cu.in", template_file("reduction_columns.cu.in"), column_values);
  }
  return make_program(origin_of(name, types, resolved, layout), render("reduction.cu.in", template_file("reduction.cu.in"), values), o.compile);
}

namespace {

// Tagged, length-prefixed fields (as canonical_bytes writes options): no two different
// definitions share a text, whatever bytes their snippets hold.
class VariantText {
 public:
  explicit VariantText(std::string_view kind) { field("kind", kind); }
  void field(std::string_view tag, std::string_view value) {
    text_ += fmt::format("{}={}:", tag, value.size());
    text_.append(value.data(), value.size());
    text_ += ';';
  }
  void params(const dsl::Signature& signature) {
    for (const auto& p : signature.in) field("in", p.text);
    for (const auto& p : signature.out) field("out", p.text);
  }
  std::string finish(const CompileOptions& compile, const CallTypes& types, const ResolvedTypes& resolved,
                     const Layout& layout) {
    if (!compile.include_dirs.empty()) return {};
    field("compile", canonical_bytes(compile));
    field("variant", variant_text(types, resolved, layout));
    return std::move(text_);
  }

 private:
  std::string text_;
};

}  // namespace

std::string elementwise_variant(const detail::ElementwiseDefinition& definition, const CallTypes& types,
                                const ResolvedTypes& resolved, const Layout& layout) {
  VariantText text("elementwise");
  text.field("name", definition.name);
  text.params(definition.signature);
  text.field("operation", definition.operation);
  text.field("preamble", definition.options.preamble);
  text.field("loop_prep", definition.options.loop_prep);
  text.field("after_loop", definition.options.after_loop);
  text.field("reduce_dims", definition.options.reduce_dims ? "1" : "0");
  text.field("native_half", definition.options.native_half_arithmetic ? "1" : "0");
  return text.finish(definition.options.compile, types, resolved, layout);
}

std::string reduction_variant(const detail::ReductionDefinition& definition, const CallTypes& types,
                              const ResolvedTypes& resolved, const Layout& layout) {
  VariantText text("reduction");
  text.field("name", definition.name);
  text.params(definition.signature);
  text.field("map", definition.map_expr);
  text.field("reduce", definition.reduce_expr);
  text.field("post_map", definition.post_map_expr);
  text.field("identity", definition.identity);
  text.field("reduce_type", definition.options.reduce_type);
  text.field("preamble", definition.options.preamble);
  text.field("reduce_dims", definition.options.reduce_dims ? "1" : "0");
  text.field("native_half", definition.options.native_half_arithmetic ? "1" : "0");
  return text.finish(definition.options.compile, types, resolved, layout);
}

}  // namespace kernc::codegen
