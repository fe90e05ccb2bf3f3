#include "kernc/spec_file.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dsl/definitions.hpp"
#include "kernc/error.hpp"
#include "kernc/limits.hpp"
#include "platform/files.hpp"

namespace kernc {

namespace {

using nlohmann::json;

Error bad(const std::string& where, const std::string& what) {
  return Error(ErrorCode::invalid_argument, fmt::format("{}: {}", where, what));
}

// The JSON library's message in kernc's words: without its internal tag
// ("[json.exception.parse_error.101] parse error at "), keeping the line and column.
std::string json_problem(const json::exception& error) {
  std::string message = error.what();
  if (message.rfind("[json.exception.", 0) == 0) {
    const std::size_t end = message.find("] ");
    if (end != std::string::npos) message.erase(0, end + 2);
  }
  for (const char* prefix : {"parse error at ", "parse error: "}) {
    if (message.rfind(prefix, 0) == 0) message.erase(0, std::string(prefix).size());
  }
  return message;
}

// Rejects keys outside `allowed`: a misspelt field must not be silently ignored.
void check_keys(const json& object, const std::string& where, const std::set<std::string>& allowed) {
  for (const auto& item : object.items()) {
    if (!allowed.count(item.key())) {
      std::string list;
      for (const auto& key : allowed) list += (list.empty() ? "" : ", ") + key;
      throw bad(where, fmt::format("unknown field \"{}\" (known fields: {})", item.key(), list));
    }
  }
}

std::string get_string(const json& object, const std::string& key, const std::string& where, bool required) {
  auto found = object.find(key);
  if (found == object.end()) {
    if (required) throw bad(where, fmt::format("missing field \"{}\"", key));
    return {};
  }
  if (!found->is_string()) throw bad(where, fmt::format("field \"{}\" must be a string", key));
  return found->get<std::string>();
}

bool get_bool(const json& object, const std::string& key, const std::string& where, bool fallback) {
  auto found = object.find(key);
  if (found == object.end()) return fallback;
  if (!found->is_boolean()) throw bad(where, fmt::format("field \"{}\" must be true or false", key));
  return found->get<bool>();
}

std::vector<std::string> get_strings(const json& object, const std::string& key, const std::string& where) {
  auto found = object.find(key);
  if (found == object.end()) return {};
  if (!found->is_array()) throw bad(where, fmt::format("field \"{}\" must be a list of strings", key));
  std::vector<std::string> items;
  for (const auto& item : *found) {
    if (!item.is_string()) throw bad(where, fmt::format("field \"{}\" must be a list of strings", key));
    items.push_back(item.get<std::string>());
  }
  return items;
}

std::map<std::string, std::string> get_string_map(const json& object, const std::string& key, const std::string& where) {
  auto found = object.find(key);
  if (found == object.end()) return {};
  if (!found->is_object()) throw bad(where, fmt::format("field \"{}\" must be an object of strings", key));
  std::map<std::string, std::string> items;
  for (const auto& item : found->items()) {
    if (!item.value().is_string()) throw bad(where, fmt::format("\"{}\".\"{}\" must be a string", key, item.key()));
    items[item.key()] = item.value().get<std::string>();
  }
  return items;
}

CompileOptions parse_options(const json& kernel, const std::string& where, const std::string& base_dir) {
  CompileOptions options;
  auto found = kernel.find("options");
  if (found == kernel.end()) return options;
  const std::string at = where + " options";
  if (!found->is_object()) throw bad(at, "must be an object");
  check_keys(*found, at, {"std", "defines", "include_dirs", "headers", "fast_math", "line_info", "debug", "flags"});
  if (auto std = get_string(*found, "std", at, false); !std.empty()) options.language_standard = std;
  options.defines = get_string_map(*found, "defines", at);
  for (auto dir : get_strings(*found, "include_dirs", at)) {
    options.include_dirs.push_back(!dir.empty() && dir[0] != '/' ? base_dir + "/" + dir : dir);
  }
  options.headers = get_string_map(*found, "headers", at);
  options.fast_math = get_bool(*found, "fast_math", at, false);
  options.line_info = get_bool(*found, "line_info", at, false);
  options.debug = get_bool(*found, "debug", at, false);
  options.raw_flags = get_strings(*found, "flags", at);
  try {
    validate(options);
  } catch (const Error& error) {
    throw bad(at, error.what());
  }
  return options;
}

std::string read_code(const json& kernel, const std::string& where, const std::string& base_dir) {
  bool has_code = kernel.contains("code"), has_file = kernel.contains("code_file");
  if (has_code == has_file) throw bad(where, "give exactly one of \"code\" and \"code_file\"");
  if (has_code) return get_string(kernel, "code", where, true);
  std::string path = get_string(kernel, "code_file", where, true);
  return platform::read_file(!path.empty() && path[0] != '/' ? base_dir + "/" + path : path);
}

// A raw_module of binary files (CuPy's RawModule(path=...)): "path": "k.cubin", or "paths":
// ["k.sm_80.cubin", {"path": "k.sm_90a.cubin", "target": "sm_90a"}, "k.ptx"]; relative
// paths are resolved against the spec file's directory. Nothing compiles, so the fields
// that feed a compile are refused rather than ignored.
std::vector<RawModuleFile> read_module_paths(const json& kernel, const std::string& where, const std::string& base_dir) {
  for (const char* field : {"code", "code_file", "options", "name_expressions"}) {
    if (kernel.contains(field)) {
      throw bad(where, fmt::format("\"{}\" cannot go with \"path\" or \"paths\": a module of binary files has no "
                                   "source{}",
                                   field,
                                   std::string(field) == "name_expressions"
                                       ? " and no lowered names (launch a template instance by its mangled name)"
                                       : " to compile"));
    }
  }
  if (kernel.contains("path") && kernel.contains("paths")) throw bad(where, "give one of \"path\" and \"paths\", not both");
  auto resolve = [&base_dir](const std::string& path) {
    return !path.empty() && path[0] != '/' ? base_dir + "/" + path : path;
  };
  std::vector<RawModuleFile> files;
  if (kernel.contains("path")) {
    std::string path = get_string(kernel, "path", where, true);
    if (path.empty()) throw bad(where, "\"path\" is empty");
    files.push_back({resolve(path), std::nullopt});
    return files;
  }
  const json& paths = kernel["paths"];
  const char* shape = "\"paths\" must be a non-empty list of paths or {\"path\": ..., \"target\": ...} objects";
  if (!paths.is_array() || paths.empty()) throw bad(where, shape);
  for (const auto& item : paths) {
    RawModuleFile file;
    if (item.is_string()) {
      file.path = item.get<std::string>();
    } else if (item.is_object()) {
      const std::string at = where + " paths";
      check_keys(item, at, {"path", "target"});
      file.path = get_string(item, "path", at, true);
      if (auto target = get_string(item, "target", at, false); !target.empty()) {
        try {
          file.target = Target::parse(target);
        } catch (const Error& error) {
          throw bad(at, error.what());
        }
      }
    } else {
      throw bad(where, shape);
    }
    if (file.path.empty()) throw bad(where, "a path in \"paths\" is empty");
    file.path = resolve(file.path);
    files.push_back(std::move(file));
  }
  return files;
}

// A kernel without "signatures" can be run (its argument types decide), but nothing is
// precompiled for it; an empty list is refused as a likely mistake.
std::vector<CallTypes> parse_signatures(const json& kernel, const std::string& where, size_t inputs, size_t outputs) {
  std::vector<CallTypes> signatures;
  if (!kernel.contains("signatures")) return signatures;
  for (const auto& text : get_strings(kernel, "signatures", where)) {
    CallTypes types;
    try {
      types = parse_call_signature(text);
    } catch (const Error& error) {
      throw bad(where, error.what());
    }
    if (types.inputs.size() != inputs || types.outputs.size() != outputs) {
      throw bad(where, fmt::format("signature \"{}\" has {} input(s) and {} output(s); the kernel has {} and {}", text,
                                   types.inputs.size(), types.outputs.size(), inputs, outputs));
    }
    signatures.push_back(std::move(types));
  }
  if (signatures.empty()) {
    throw bad(where, "lists no \"signatures\" to prepare (leave the field out for a kernel that is only run)");
  }
  return signatures;
}

SpecKernel parse_kernel(const json& kernel, size_t index, const std::string& base_dir) {
  std::string where = fmt::format("kernel #{}", index + 1);
  if (!kernel.is_object()) throw bad(where, "must be an object");
  if (kernel.contains("name") && kernel["name"].is_string()) where = fmt::format("kernel {}", kernel["name"].get<std::string>());
  std::string kind = get_string(kernel, "kind", where, true);
  std::string name = get_string(kernel, "name", where, true);
  // The library's own messages start with the kernel's name: "kernel k: ..." names it once.
  auto wrap = [&where, &name](auto&& make) {
    try {
      return make();
    } catch (const Error& error) {
      if (error.code() != ErrorCode::invalid_argument) throw;
      std::string message = error.what();
      if (message.rfind(where + ": ", 0) == 0) throw;  // a field of the spec, named already
      if (message.rfind(name + ": ", 0) == 0) message.erase(0, name.size() + 2);
      throw bad(where, message);
    }
  };
  if (kind == "elementwise") {
    check_keys(kernel, where, {"kind", "name", "in_params", "out_params", "operation", "preamble", "loop_prep",
                               "after_loop", "reduce_dims", "native_half_arithmetic", "options", "signatures"});
    ElementwiseOptions options;
    options.preamble = get_string(kernel, "preamble", where, false);
    options.loop_prep = get_string(kernel, "loop_prep", where, false);
    options.after_loop = get_string(kernel, "after_loop", where, false);
    options.reduce_dims = get_bool(kernel, "reduce_dims", where, true);
    options.native_half_arithmetic = get_bool(kernel, "native_half_arithmetic", where, false);
    options.compile = parse_options(kernel, where, base_dir);
    ElementwiseKernel k = wrap([&] {
      return ElementwiseKernel(get_string(kernel, "in_params", where, true), get_string(kernel, "out_params", where, true),
                               get_string(kernel, "operation", where, true), name, options);
    });
    auto signatures = parse_signatures(kernel, where, k.input_count(), k.output_count());
    for (const auto& types : signatures) wrap([&] { return kernc::resolve(k, types); });
    return SpecKernel{k, signatures};
  }
  if (kind == "reduction") {
    check_keys(kernel, where, {"kind", "name", "in_params", "out_params", "map_expr", "reduce_expr", "post_map_expr",
                               "identity", "reduce_type", "preamble", "reduce_dims", "native_half_arithmetic", "options",
                               "signatures"});
    ReductionOptions options;
    options.reduce_type = get_string(kernel, "reduce_type", where, false);
    options.preamble = get_string(kernel, "preamble", where, false);
    options.reduce_dims = get_bool(kernel, "reduce_dims", where, true);
    options.native_half_arithmetic = get_bool(kernel, "native_half_arithmetic", where, false);
    options.compile = parse_options(kernel, where, base_dir);
    ReductionKernel k = wrap([&] {
      return ReductionKernel(get_string(kernel, "in_params", where, true), get_string(kernel, "out_params", where, true),
                             get_string(kernel, "map_expr", where, true), get_string(kernel, "reduce_expr", where, true),
                             get_string(kernel, "post_map_expr", where, true), get_string(kernel, "identity", where, false),
                             name, options);
    });
    auto signatures = parse_signatures(kernel, where, k.input_count(), k.output_count());
    for (const auto& types : signatures) wrap([&] { return kernc::resolve(k, types); });
    return SpecKernel{k, signatures};
  }
  if (kind == "raw") {
    check_keys(kernel, where, {"kind", "name", "code", "code_file", "options"});
    auto options = parse_options(kernel, where, base_dir);
    return SpecKernel{wrap([&] { return RawKernel(read_code(kernel, where, base_dir), name, options); }), {}};
  }
  if (kind == "raw_module") {
    check_keys(kernel, where, {"kind", "name", "code", "code_file", "options", "name_expressions", "path", "paths"});
    if (kernel.contains("path") || kernel.contains("paths")) {
      auto files = read_module_paths(kernel, where, base_dir);
      try {
        return SpecKernel{RawModule::from_files(std::move(files), name), {}};
      } catch (const Error& error) {
        // "RawModule m: k.cubin: ..." → "kernel m: k.cubin: ..."; io errors keep their code.
        if (error.code() != ErrorCode::invalid_argument) throw;
        std::string message = error.what();
        if (const std::string own = "RawModule " + name + ": "; message.rfind(own, 0) == 0) message.erase(0, own.size());
        throw bad(where, message);
      }
    }
    auto options = parse_options(kernel, where, base_dir);
    auto expressions = get_strings(kernel, "name_expressions", where);
    return SpecKernel{wrap([&] { return RawModule(read_code(kernel, where, base_dir), options, expressions, name); }), {}};
  }
  throw bad(where, fmt::format("unknown kind \"{}\": expected elementwise, reduction, raw or raw_module", kind));
}

}  // namespace

const std::string& SpecKernel::name() const {
  return std::visit([](const auto& k) -> const std::string& { return k.name(); }, kernel);
}

const char* SpecKernel::kind() const {
  static const char* kKinds[] = {"elementwise", "reduction", "raw", "raw_module"};
  return kKinds[kernel.index()];
}

Call SpecKernel::plan(ListView<Arg> arguments, ListView<ArrayRef> outputs, const CallOptions& options) const {
  struct Planner {
    ListView<Arg> arguments;
    ListView<ArrayRef> outputs;
    const CallOptions& options;
    Call operator()(const ElementwiseKernel& k) const { return k.plan(arguments, outputs, options); }
    Call operator()(const ReductionKernel& k) const { return k.plan(arguments, outputs, options); }
    Call raw(const std::string& name) const {
      if (!outputs.empty()) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("kernel {}: a raw kernel's outputs are among its arguments; pass no outputs", name));
      }
      if (!options.launch) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("kernel {}: a raw kernel's call needs its LaunchConfig (CallOptions::launch)", name));
      }
      return Call();
    }
    Call operator()(const RawKernel& k) const {
      raw(k.name());
      return k.plan(*options.launch, arguments, options);
    }
    Call operator()(const RawModule& k) const {
      raw(k.name());
      if (options.function.empty()) {
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("kernel {} is a raw_module: name the function to call (CallOptions::function)", k.name()));
      }
      return k.plan(options.function, *options.launch, arguments, options);
    }
  };
  return std::visit(Planner{arguments, outputs, options}, kernel);
}

std::vector<Layout> reachable_layouts(const ElementwiseKernel& kernel, const CallTypes& types) {
  bool array_input = false, array_output = false;
  const auto& in = kernel.in_params();
  for (size_t k = 0; k < in.size(); ++k) array_input = array_input || (!in[k].raw && !types.inputs.at(k).scalar);
  for (const auto& p : kernel.out_params()) array_output = array_output || !p.raw;
  if (!array_input && !array_output) {
    // Only raw arrays and scalars: the loop is flat whatever the arrays look like.
    return {{LayoutKind::contiguous, 0, false}, {LayoutKind::contiguous, 0, true}};
  }
  std::vector<Layout> layouts = Layout::elementwise_classes();
  if (!array_input || !array_output) {
    // Tiles stage inputs transposed against outputs (NOTE [ tiled elementwise ]).
    layouts.erase(std::remove_if(layouts.begin(), layouts.end(), [](const Layout& l) { return l.kind == LayoutKind::tiled; }),
                  layouts.end());
  }
  return layouts;
}

std::vector<SpecVariant> Spec::variants() const {
  std::vector<SpecVariant> out;
  for (const auto& entry : kernels) {
    std::visit(
        [&](const auto& k) {
          using K = std::decay_t<decltype(k)>;
          if constexpr (std::is_same_v<K, ElementwiseKernel> || std::is_same_v<K, ReductionKernel>) {
            for (const auto& types : entry.signatures) {
              std::vector<Layout> layouts;
              if constexpr (std::is_same_v<K, ElementwiseKernel>) {
                layouts = reachable_layouts(k, types);
              } else {
                layouts = Layout::reduction_classes();
              }
              for (const auto& layout : layouts) {
                out.push_back({k.name(), format_call_signature(types) + " " + layout.str(), kernc::program(k, types, layout)});
              }
            }
          } else if constexpr (std::is_same_v<K, RawModule>) {
            if (!k.is_binary()) out.push_back({k.name(), entry.kind(), kernc::program(k)});  // binaries: nothing to compile
          } else {
            out.push_back({k.name(), entry.kind(), kernc::program(k)});
          }
        },
        entry.kernel);
  }
  return out;
}

const SpecKernel& Spec::find(const std::string& name) const {
  std::string names;
  for (const auto& k : kernels) {
    if (k.name() == name) return k;
    names += (names.empty() ? "" : ", ") + k.name();
  }
  throw Error(ErrorCode::not_found, fmt::format("the spec has no kernel named {}; it has: {}", name, names));
}

Spec parse_spec(const std::string& json_text, const std::string& base_dir) {
  if (json_text.size() > limits::kMaxSpecFileBytes) {
    throw Error(ErrorCode::invalid_argument, fmt::format("spec is {} bytes, over kernc's limit of {} (see kernc/limits.hpp)",
                                                         json_text.size(), limits::kMaxSpecFileBytes));
  }
  json document;
  try {
    document = json::parse(json_text);
  } catch (const json::exception& error) {
    // parse_error, and out_of_range for a number too large for a double ("1E400"):
    // found by tests/fuzz/fuzz_spec.
    throw Error(ErrorCode::invalid_argument, fmt::format("spec is not valid JSON: {}", json_problem(error)));
  }
  if (!document.is_object()) throw Error(ErrorCode::invalid_argument, "spec: the top level must be an object");
  check_keys(document, "spec", {"kernels", "comment"});
  auto kernels = document.find("kernels");
  if (kernels == document.end() || !kernels->is_array() || kernels->empty()) {
    throw Error(ErrorCode::invalid_argument, "spec: \"kernels\" must be a non-empty list");
  }
  Spec spec;
  std::set<std::string> names;
  for (size_t k = 0; k < kernels->size(); ++k) {
    spec.kernels.push_back(parse_kernel((*kernels)[k], k, base_dir));
    if (!names.insert(spec.kernels.back().name()).second) {
      throw Error(ErrorCode::invalid_argument, fmt::format("spec: two kernels are named {}", spec.kernels.back().name()));
    }
  }
  return spec;
}

Spec load_spec(const std::string& path) {
  auto slash = path.find_last_of('/');
  std::string base_dir = slash == std::string::npos ? "." : path.substr(0, slash);
  try {
    return parse_spec(platform::read_file(path), base_dir);
  } catch (const Error& error) {
    if (error.code() == ErrorCode::invalid_argument) throw Error(ErrorCode::invalid_argument, path + ": " + error.what());
    throw;
  }
}

}  // namespace kernc
