#include "kernc/target.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "kernc/error.hpp"

namespace kernc {

const char* to_string(Backend backend) noexcept {
  switch (backend) {
    case Backend::cuda: return "cuda";
    case Backend::hip: return "hip";
    case Backend::cpu: return "cpu";
  }
  return "unknown";
}

const char* to_string(BinaryKind kind) noexcept {
  switch (kind) {
    case BinaryKind::cubin: return "cubin";
    case BinaryKind::ptx: return "ptx";
    case BinaryKind::hsaco: return "hsaco";
    case BinaryKind::shared_object: return "so";
  }
  return "unknown";
}

BinaryKind parse_binary_kind(std::string_view text) {
  if (text == "cubin") return BinaryKind::cubin;
  if (text == "ptx") return BinaryKind::ptx;
  if (text == "hsaco") return BinaryKind::hsaco;
  if (text == "so") return BinaryKind::shared_object;
  throw Error(ErrorCode::invalid_argument,
              fmt::format("unknown binary kind \"{}\": expected cubin, ptx, hsaco or so", text));
}

namespace {
Error bad_target(std::string_view text, std::string_view why) {
  return Error(ErrorCode::invalid_argument,
               fmt::format("invalid target \"{}\": {}; expected sm_NN or compute_NN (optionally "
                           "with suffix a or f, e.g. sm_90a) for CUDA, or gfxNNN with optional "
                           "features (e.g. gfx90a:xnack-) for HIP, or cpu, cpu-x86-64[-v2|-v3|-v4] or "
                           "cpu-armv8-a for the host",
                           text, why));
}

// Parses "90", "90a", "100f": digits, then at most one of the suffixes NVRTC knows.
int parse_sm(std::string_view text, std::string_view arch) {
  size_t digits = 0;
  while (digits < arch.size() && std::isdigit(static_cast<unsigned char>(arch[digits]))) ++digits;
  if (digits == 0 || digits > 3) throw bad_target(text, "the architecture must start with 2 or 3 digits");
  std::string_view suffix = arch.substr(digits);
  if (!suffix.empty() && suffix != "a" && suffix != "f") {
    throw bad_target(text, fmt::format("unknown architecture suffix \"{}\"", suffix));
  }
  return std::stoi(std::string(arch.substr(0, digits)));
}

void check_gfx(std::string_view text) {
  std::string_view processor = text.substr(0, text.find(':'));
  if (processor.size() < 4) throw bad_target(text, "a gfx processor name needs a number after gfx");
  for (char c : processor.substr(3)) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) {
      throw bad_target(text, "the gfx processor number must be hexadecimal digits");
    }
  }
  // Each feature is a name followed by + or -, e.g. ":xnack-:sramecc+".
  size_t pos = processor.size();
  while (pos < text.size()) {
    size_t end = text.find(':', pos + 1);
    std::string_view feature = text.substr(pos + 1, end == std::string_view::npos ? end : end - pos - 1);
    if (feature.size() < 2 || (feature.back() != '+' && feature.back() != '-')) {
      throw bad_target(text, fmt::format("target feature \"{}\" must be a name followed by + or -", feature));
    }
    pos = end == std::string_view::npos ? text.size() : end;
  }
}
// The host ISA levels, lowest first per family: a binary of a level runs on every CPU of a
// later level of its family.
const std::vector<std::string>& host_levels(std::string_view family) {
  static const std::vector<std::string> x86 = {"x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"};
  static const std::vector<std::string> arm = {"armv8-a"};
  return family == "arm" ? arm : x86;
}

bool is_host_level(std::string_view arch) {
  for (const char* family : {"x86", "arm"}) {
    for (const auto& level : host_levels(family)) {
      if (level == arch) return true;
    }
  }
  return false;
}
}  // namespace

Target Target::parse(std::string_view text) {
  if (text.rfind("sm_", 0) == 0) {
    return Target(Backend::cuda, BinaryKind::cubin, std::string(text.substr(3)), parse_sm(text, text.substr(3)));
  }
  if (text.rfind("compute_", 0) == 0) {
    return Target(Backend::cuda, BinaryKind::ptx, std::string(text.substr(8)), parse_sm(text, text.substr(8)));
  }
  if (text.rfind("gfx", 0) == 0) {
    check_gfx(text);
    return Target(Backend::hip, BinaryKind::hsaco, std::string(text), 0);
  }
  if (text == "cpu") return host_target();
  if (text.rfind("cpu-", 0) == 0) {
    if (!is_host_level(text.substr(4))) {
      throw bad_target(text, "unknown host ISA level (x86-64, x86-64-v2, x86-64-v3, x86-64-v4 or armv8-a)");
    }
    return Target(Backend::cpu, BinaryKind::shared_object, std::string(text.substr(4)), 0);
  }
  throw bad_target(text, text.empty() ? "it is empty" : "unknown prefix");
}

std::string Target::str() const {
  switch (kind_) {
    case BinaryKind::cubin: return "sm_" + arch_;
    case BinaryKind::ptx: return "compute_" + arch_;
    case BinaryKind::hsaco: return arch_;
    case BinaryKind::shared_object: return "cpu-" + arch_;
  }
  return arch_;
}

Target Target::with_binary_kind(BinaryKind kind) const {
  const bool fits = backend_ == Backend::cuda  ? kind == BinaryKind::cubin || kind == BinaryKind::ptx
                    : backend_ == Backend::hip ? kind == BinaryKind::hsaco
                                               : kind == BinaryKind::shared_object;
  if (!fits) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("target {} cannot produce {}: CUDA targets emit cubin or ptx, HIP targets hsaco, "
                            "host targets so",
                            str(), to_string(kind)));
  }
  return Target(backend_, kind, arch_, sm_number_);
}

std::vector<Target> binary_ladder(const Target& device) {
  std::vector<Target> ladder;
  if (device.backend() == Backend::hip) {
    ladder.push_back(device);
    const std::string& name = device.arch();
    if (auto colon = name.find(':'); colon != std::string::npos) ladder.push_back(Target::parse(name.substr(0, colon)));
    return ladder;
  }
  if (device.backend() == Backend::cpu) {
    const auto& levels = host_levels(device.arch().rfind("arm", 0) == 0 ? "arm" : "x86");
    for (auto level = levels.rbegin(); level != levels.rend(); ++level) {
      if (ladder.empty() && *level != device.arch()) continue;
      ladder.push_back(Target::parse("cpu-" + *level));
    }
    return ladder;
  }
  if (device.binary_kind() != BinaryKind::cubin) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("binary_ladder needs a device architecture (sm_NN), not {}", device.str()));
  }
  // Compute capabilities NVIDIA has shipped; PTX of any of them at or below the device's
  // runs through the driver's JIT.
  static const int kShipped[] = {121, 120, 110, 103, 101, 100, 90, 89, 88, 87, 86, 80, 75,
                                 72,  70,  62,  61,  60,  53,  52, 50};
  const int sm = device.sm_number();
  ladder.push_back(Target::parse(fmt::format("sm_{}", sm)));
  for (int minor = sm % 10 - 1; minor >= 0; --minor) ladder.push_back(Target::parse(fmt::format("sm_{}", sm / 10 * 10 + minor)));
  if (std::find(std::begin(kShipped), std::end(kShipped), sm) == std::end(kShipped)) {
    ladder.push_back(Target::parse(fmt::format("compute_{}", sm)));  // a device newer than this list
  }
  for (int cc : kShipped) {
    if (cc <= sm) ladder.push_back(Target::parse(fmt::format("compute_{}", cc)));
  }
  return ladder;
}

Target host_target() {
#if defined(__x86_64__)
  const auto& levels = host_levels("x86");
  for (auto level = levels.rbegin(); level != levels.rend(); ++level) {
    if (host_can_run(Target::parse("cpu-" + *level))) return Target::parse("cpu-" + *level);
  }
  return Target::parse("cpu-x86-64");
#else
  return Target::parse("cpu-armv8-a");
#endif
}

bool host_can_run(const Target& target) noexcept {
  if (target.backend() != Backend::cpu) return false;
  const std::string& arch = target.arch();
#if defined(__x86_64__)
  // The features of each level that both g++ and clang can ask by name (the rest of a
  // level's list, e.g. movbe or xsave, comes with these on every CPU that has them).
  __builtin_cpu_init();
  const bool v2 = __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("sse3") &&
                  __builtin_cpu_supports("ssse3") && __builtin_cpu_supports("sse4.1") &&
                  __builtin_cpu_supports("sse4.2");
  const bool v3 = v2 && __builtin_cpu_supports("avx") && __builtin_cpu_supports("avx2") &&
                  __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("fma");
  const bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
                  __builtin_cpu_supports("avx512vl");
  if (arch == "x86-64") return true;
  if (arch == "x86-64-v2") return v2;
  if (arch == "x86-64-v3") return v3;
  if (arch == "x86-64-v4") return v4;
  return false;
#elif defined(__aarch64__)
  return arch == "armv8-a";
#else
  return false;
#endif
}

}  // namespace kernc
