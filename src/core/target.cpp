#include "kernc/target.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "kernc/error.hpp"

namespace kernc {

const char* to_string(Backend backend) noexcept { return backend == Backend::cuda ? "cuda" : "hip"; }

const char* to_string(BinaryKind kind) noexcept {
  switch (kind) {
    case BinaryKind::cubin: return "cubin";
    case BinaryKind::ptx: return "ptx";
    case BinaryKind::hsaco: return "hsaco";
  }
  return "unknown";
}

BinaryKind parse_binary_kind(std::string_view text) {
  if (text == "cubin") return BinaryKind::cubin;
  if (text == "ptx") return BinaryKind::ptx;
  if (text == "hsaco") return BinaryKind::hsaco;
  throw Error(ErrorCode::invalid_argument,
              fmt::format("unknown binary kind \"{}\": expected cubin, ptx or hsaco", text));
}

namespace {
Error bad_target(std::string_view text, std::string_view why) {
  return Error(ErrorCode::invalid_argument,
               fmt::format("invalid target \"{}\": {}; expected sm_NN or compute_NN (optionally "
                           "with suffix a or f, e.g. sm_90a) for CUDA, or gfxNNN with optional "
                           "features (e.g. gfx90a:xnack-) for HIP",
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
  throw bad_target(text, text.empty() ? "it is empty" : "unknown prefix");
}

std::string Target::str() const {
  switch (kind_) {
    case BinaryKind::cubin: return "sm_" + arch_;
    case BinaryKind::ptx: return "compute_" + arch_;
    case BinaryKind::hsaco: return arch_;
  }
  return arch_;
}

Target Target::with_binary_kind(BinaryKind kind) const {
  bool fits = backend_ == Backend::cuda ? kind != BinaryKind::hsaco : kind == BinaryKind::hsaco;
  if (!fits) {
    throw Error(ErrorCode::invalid_argument,
                fmt::format("target {} cannot produce {}: CUDA targets emit cubin or ptx, HIP targets hsaco",
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

}  // namespace kernc
