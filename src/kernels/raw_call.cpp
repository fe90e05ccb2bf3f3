// Launching RawKernel and RawModule functions: loading per device and argument checks.

#include <algorithm>
#include <cctype>
#include <regex>

#include <fmt/format.h>

#include "kernc/error.hpp"
#include "kernc/kernels.hpp"
#include "kernels/call_support.hpp"
#include "kernels/raw_state.hpp"

namespace kernc {

namespace detail {

namespace {

std::string strip_words(std::string text, const std::vector<std::string>& words) {
  for (const auto& word : words) {
    std::regex pattern("\\b" + word + "\\b");
    text = std::regex_replace(text, pattern, " ");
  }
  return text;
}

std::string squeeze(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::optional<DType> scalar_type(const std::string& type) {
  static const std::pair<const char*, DType> kTypes[] = {
      {"bool", DType::bool_},           {"char", DType::int8},           {"signed char", DType::int8},
      {"int8_t", DType::int8},          {"unsigned char", DType::uint8}, {"uint8_t", DType::uint8},
      {"short", DType::int16},          {"int16_t", DType::int16},       {"unsigned short", DType::uint16},
      {"uint16_t", DType::uint16},      {"int", DType::int32},           {"int32_t", DType::int32},
      {"unsigned", DType::uint32},      {"unsigned int", DType::uint32}, {"uint32_t", DType::uint32},
      {"long", DType::int64},           {"long long", DType::int64},     {"int64_t", DType::int64},
      {"ptrdiff_t", DType::int64},      {"unsigned long", DType::uint64}, {"unsigned long long", DType::uint64},
      {"uint64_t", DType::uint64},      {"size_t", DType::uint64},       {"float", DType::float32},
      {"double", DType::float64},       {"__half", DType::float16},      {"half", DType::float16},
      {"__nv_bfloat16", DType::bfloat16}, {"long int", DType::int64},    {"long long int", DType::int64},
  };
  for (const auto& [name, dtype] : kTypes) {
    if (type == name) return dtype;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::vector<DeclaredParam>> declared_params(const std::string& source, const std::string& name) {
  std::regex head("__global__\\s+(?:__launch_bounds__\\s*\\([^)]*\\)\\s*)?void\\s+(?:__launch_bounds__\\s*\\([^)]*\\)\\s*)?" +
                  name + "\\s*\\(");
  std::smatch match;
  if (!std::regex_search(source, match, head)) return std::nullopt;
  size_t pos = static_cast<size_t>(match.position(0) + match.length(0));
  int depth = 1;
  size_t start = pos;
  std::vector<std::string> pieces;
  for (; pos < source.size() && depth > 0; ++pos) {
    char c = source[pos];
    if (c == '(' || c == '<' || c == '[') ++depth;
    if (c == ')' || c == '>' || c == ']') --depth;
    if ((c == ',' && depth == 1) || depth == 0) {
      pieces.push_back(source.substr(start, pos - start));
      start = pos + 1;
    }
  }
  if (depth != 0) return std::nullopt;
  std::vector<DeclaredParam> params;
  if (pieces.size() == 1 && squeeze(pieces[0]).empty()) return params;
  for (const auto& piece : pieces) {
    DeclaredParam param;
    param.text = squeeze(piece);
    param.pointer = piece.find_first_of("*&[") != std::string::npos;
    if (!param.pointer) {
      std::string type = squeeze(strip_words(piece, {"const", "volatile", "__restrict__", "register"}));
      auto last_space = type.find_last_of(' ');
      std::string without_name = last_space == std::string::npos ? type : type.substr(0, last_space);
      param.dtype = scalar_type(without_name);
      if (!param.dtype) param.dtype = scalar_type(type);  // a parameter without a name
    }
    params.push_back(std::move(param));
  }
  return params;
}

namespace {

// Packs `args` for `function`, checking them against what is known of its parameters.
void launch_checked(const Function& function, const std::optional<std::vector<DeclaredParam>>& declared,
                    const LaunchConfig& config, const std::vector<Arg>& args) {
  const std::string& name = function.name();
  std::vector<std::size_t> sizes = function.parameter_sizes();
  std::size_t expected = declared ? declared->size() : sizes.size();
  if ((declared || !sizes.empty()) && args.size() != expected) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("kernel {} takes {} argument(s), {} given", name, expected, args.size()));
  }
  ParamPack pack;
  for (size_t k = 0; k < args.size(); ++k) {
    const Arg& arg = args[k];
    const DeclaredParam* param = declared ? &(*declared)[k] : nullptr;
    if (arg.is_array()) {
      if (param && !param->pointer) {
        throw Error(ErrorCode::invalid_argument, fmt::format("kernel {}: argument {} is an array but parameter \"{}\" is "
                                                             "not a pointer",
                                                             name, k, param->text));
      }
      pack.begin(8);
      pack.field<std::uint64_t>(arg.array().data);
      continue;
    }
    if (param && param->pointer) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("kernel {}: argument {} is a scalar but parameter \"{}\" is a pointer", name, k, param->text));
    }
    if (param && param->dtype) {
      pack_scalar(pack, arg.scalar(), *param->dtype);  // converted to the declared type
      continue;
    }
    std::size_t own = itemsize(arg.scalar().dtype);
    if (k < sizes.size() && sizes[k] != own) {
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("kernel {}: parameter {} is {} bytes but the {} scalar given is {}; pass a scalar of the "
                              "parameter's own type",
                              name, k, sizes[k], to_string(arg.scalar().dtype), own));
    }
    pack_scalar(pack, arg.scalar(), arg.scalar().dtype);
  }
  function.launch(config, pack.pointers());
}

Engine::Loaded load_raw(RawState& state, const Program& program, const CallOptions& options) {
  Engine& engine = engine_of(options);
  const auto key = std::make_pair(static_cast<const Engine*>(&engine), options.device);
  {
    std::lock_guard<std::mutex> lock(state.mutex);
    auto found = state.loaded.find(key);
    if (found != state.loaded.end()) return found->second;
  }
  Device device = engine.device(options.device);
  Engine::Loaded loaded = engine.load(program, device);
  std::lock_guard<std::mutex> lock(state.mutex);
  return state.loaded.emplace(key, std::move(loaded)).first->second;
}

// The declared parameters of `name`, parsed once per kernel object.
std::optional<std::vector<DeclaredParam>> declared_once(RawState& state, const std::string& source, const std::string& name) {
  std::lock_guard<std::mutex> lock(state.mutex);
  auto found = state.declared.find(name);
  if (found == state.declared.end()) found = state.declared.emplace(name, declared_params(source, name)).first;
  return found->second;
}

}  // namespace
}  // namespace detail

Function RawKernel::function(const CallOptions& options) const {
  return detail::load_raw(*state_, program(), options).module.function(name_);
}

void RawKernel::operator()(const LaunchConfig& config, const std::vector<Arg>& args, const CallOptions& options) const {
  Function f = function(options);
  LaunchConfig c = config;
  if (!c.stream.handle) c.stream = options.stream;
  detail::launch_checked(f, detail::declared_once(*state_, code_, name_), c, args);
}

Function RawModule::get_function(const std::string& name, const CallOptions& options) const {
  auto loaded = detail::load_raw(*state_, program(), options);
  auto lowered = loaded.program->lowered_names.find(name);
  return loaded.module.function(lowered != loaded.program->lowered_names.end() ? lowered->second : name);
}

std::pair<std::uint64_t, std::size_t> RawModule::get_global(const std::string& name, const CallOptions& options) const {
  auto loaded = detail::load_raw(*state_, program(), options);
  auto lowered = loaded.program->lowered_names.find(name);
  return loaded.module.global(lowered != loaded.program->lowered_names.end() ? lowered->second : name);
}

void RawModule::launch(const std::string& function, const LaunchConfig& config, const std::vector<Arg>& args,
                       const CallOptions& options) const {
  Function f = get_function(function, options);
  LaunchConfig c = config;
  if (!c.stream.handle) c.stream = options.stream;
  // Template instances have no readable declaration; their parameter sizes still are checked.
  bool is_expression = std::find(name_expressions_.begin(), name_expressions_.end(), function) != name_expressions_.end();
  detail::launch_checked(f, is_expression ? std::nullopt : detail::declared_once(*state_, code_, function), c, args);
}

}  // namespace kernc
