#include "kernels/raw_module_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "cache/entry_trust.hpp"
#include "kernc/error.hpp"
#include "platform/files.hpp"
#include "base/log.hpp"
#include "base/nvtx_range.hpp"

namespace kernc {

const char* to_string(ModuleFileKind kind) noexcept {
  switch (kind) {
    case ModuleFileKind::cubin: return "cubin";
    case ModuleFileKind::ptx: return "PTX";
    case ModuleFileKind::fatbin: return "fatbin";
  }
  return "binary";
}

namespace detail {

namespace {

constexpr unsigned char kFatbinMagic[] = {0x50, 0xed, 0x55, 0xba};  // 0xba55ed50, little-endian
constexpr std::uint16_t kMachineCuda = 190;                         // EM_CUDA

std::uint32_t read_u32(std::string_view bytes, std::size_t at) {
  std::uint32_t value = 0;
  for (int k = 3; k >= 0; --k) value = value << 8 | static_cast<unsigned char>(bytes[at + static_cast<std::size_t>(k)]);
  return value;
}

// Skips blanks and C/C++ comments from `at`; npos when a block comment never ends.
std::size_t skip_blanks_and_comments(std::string_view text, std::size_t at) {
  while (at < text.size()) {
    char c = text[at];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      ++at;
    } else if (text.compare(at, 2, "//") == 0) {
      at = text.find('\n', at);
      if (at == std::string_view::npos) return text.size();
    } else if (text.compare(at, 2, "/*") == 0) {
      at = text.find("*/", at + 2);
      if (at == std::string_view::npos) return at;
      at += 2;
    } else {
      break;
    }
  }
  return at;
}

Error bad(const std::string& what, const std::string& why) {
  return Error(ErrorCode::invalid_argument, fmt::format("{}: {}", what, why));
}

// The architecture number and suffix of a target without the prefix: "90a" → (90, "a").
std::pair<int, std::string> split_arch(const Target& target) {
  const std::string& arch = target.arch();
  std::size_t digits = 0;
  while (digits < arch.size() && arch[digits] >= '0' && arch[digits] <= '9') ++digits;
  return {target.sm_number(), arch.substr(digits)};
}

// Whether a binary built for `built` may be tried at the ladder's rung `rung` on `device`.
bool on_rung(const Target& built, const Target& rung, const Target& device) {
  if (built.backend() != Backend::cuda || built.binary_kind() != rung.binary_kind()) return false;
  auto [sm, suffix] = split_arch(built);
  if (sm != rung.sm_number() || !split_arch(rung).second.empty()) return false;
  if (suffix == "a") return sm == device.sm_number();           // arch-specific: that GPU only
  if (suffix == "f") return sm / 10 == device.sm_number() / 10;  // family-specific: its major
  return suffix.empty();
}

std::string describe(const RawModuleBinary& binary) {
  return binary.target ? fmt::format("{} {} {}", binary.target->str(), to_string(binary.kind), binary.path)
                       : fmt::format("{} {}", to_string(binary.kind), binary.path);
}

std::string describe_all(const std::vector<RawModuleBinary>& binaries) {
  std::string all;
  for (const auto& binary : binaries) all += (all.empty() ? "" : ", ") + describe(binary);
  return all;
}

// How a binary was chosen for `device`, as Engine::Loaded::choice says it for cache hits.
std::string describe_choice(const RawModuleBinary& binary, const Target& device) {
  if (!binary.target) return fmt::format("fatbin {} (the driver picks its image for {})", binary.path, device.str());
  if (binary.kind == ModuleFileKind::ptx) {
    return fmt::format("{} PTX {}, JIT-compiled by the driver for {}", binary.target->str(), binary.path, device.str());
  }
  if (binary.target->sm_number() == device.sm_number()) return fmt::format("{} cubin {}", binary.target->str(), binary.path);
  return fmt::format("{} cubin {} (same major as {})", binary.target->str(), binary.path, device.str());
}

}  // namespace

std::optional<ModuleFileKind> module_file_kind(std::string_view bytes) {
  if (bytes.substr(0, 4) == std::string_view("\x7f" "ELF", 4)) return ModuleFileKind::cubin;
  if (bytes.size() >= 4 && std::memcmp(bytes.data(), kFatbinMagic, 4) == 0) return ModuleFileKind::fatbin;
  std::size_t at = skip_blanks_and_comments(bytes, 0);
  if (at != std::string_view::npos && bytes.compare(at, 8, ".version") == 0 && at + 8 < bytes.size() &&
      (bytes[at + 8] == ' ' || bytes[at + 8] == '\t')) {
    return ModuleFileKind::ptx;
  }
  return std::nullopt;
}

// NOTE [ cubin architecture ]
// A CUDA cubin is an ELF64 little-endian image with e_machine EM_CUDA (190). Where its
// e_flags keep the SM number depends on the ELF ABI version, e_ident[EI_ABIVERSION] (byte 8):
// version 7 and before, the low byte (EF_CUDA_SM), the accelerator ("a") flag 0x800; version
// 8 (CUDA 12.8+ for sm_100 and up, every cubin of CUDA 13), bits 8-15, the accelerator flag
// 0x8 (LLVM's BinaryFormat/ELF.h names both layouts). Checked on nvcc 13.0's cubins:
// sm_80 → e_flags 0x06005004, sm_90 → 0x06005a04, sm_120 → 0x06007802, all ABI version 8.
// nvcc 13.0 sets no accelerator flag for sm_90a or sm_100a (same e_flags as sm_90, sm_100),
// so an arch-specific cubin reads as its plain architecture: RawModuleFile::target says
// the suffix where it matters. Tested in tests/unit/test_raw_module_file.cpp on cubins
// built by NVRTC and nvcc, and on headers of both layouts made by hand.
Target cubin_target(std::string_view bytes, const std::string& what) {
  if (bytes.size() < 64) throw bad(what, fmt::format("an ELF file of {} bytes, shorter than an ELF64 header", bytes.size()));
  if (bytes[4] != 2 || bytes[5] != 1) {
    throw bad(what, "an ELF file that is not 64-bit little-endian: not a CUDA cubin");
  }
  const auto machine = static_cast<std::uint16_t>(static_cast<unsigned char>(bytes[18]) |
                                                  static_cast<unsigned char>(bytes[19]) << 8);
  if (machine != kMachineCuda) {
    throw bad(what, fmt::format("an ELF file for machine {}, not a CUDA cubin (machine {}): a host object or an AMD "
                                "code object cannot be loaded here",
                                machine, kMachineCuda));
  }
  const int abi_version = static_cast<unsigned char>(bytes[8]);
  const std::uint32_t flags = read_u32(bytes, 48);  // e_flags of an ELF64 header
  const bool new_layout = abi_version >= 8;
  const unsigned sm = new_layout ? (flags >> 8) & 0xff : flags & 0xff;
  const bool accelerated = new_layout ? (flags & 0x8) != 0 : (flags & 0x800) != 0;
  if (sm < 20) {
    throw bad(what, fmt::format("a CUDA cubin whose architecture cannot be read (ELF ABI version {}, e_flags 0x{:08x}); "
                                "give its target explicitly",
                                abi_version, flags));
  }
  return Target::parse(fmt::format("sm_{}{}", sm, accelerated ? "a" : ""));
}

Target ptx_target(std::string_view text, const std::string& what) {
  // Directives start a line (after blanks); the first .target names the architecture:
  // ".target sm_80", ".target sm_90a, texmode_independent".
  for (std::size_t line = 0; line < text.size();) {
    std::size_t end = text.find('\n', line);
    if (end == std::string_view::npos) end = text.size();
    std::string_view row = text.substr(line, end - line);
    line = end + 1;
    std::size_t at = row.find_first_not_of(" \t");
    if (at == std::string_view::npos || row.compare(at, 7, ".target") != 0) continue;
    at = row.find_first_not_of(" \t", at + 7);
    if (at == std::string_view::npos) break;
    std::size_t stop = row.find_first_of(" \t,\r/", at);
    std::string_view arch = row.substr(at, stop == std::string_view::npos ? std::string_view::npos : stop - at);
    if (arch.substr(0, 3) != "sm_") break;
    try {
      return Target::parse("compute_" + std::string(arch.substr(3)));
    } catch (const Error&) {
      throw bad(what, fmt::format("PTX whose .target \"{}\" is not a CUDA architecture", arch));
    }
  }
  throw bad(what, "PTX without a readable \".target sm_XY\" directive; give its target explicitly");
}

std::string read_trusted_file(const std::string& path, const std::string& module) {
  auto refused = [&](const std::string& why) {
    return Error(ErrorCode::io, fmt::format("RawModule {}: cannot load {}: {}", module, path, why));
  };
  // O_NOFOLLOW: a symlink is refused, never followed; O_NONBLOCK: a FIFO cannot hang the open.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ELOOP) throw refused("not trusted: it is a symbolic link");
    throw refused(std::strerror(errno));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0) throw refused(std::strerror(errno));
  // The rule cache entries are read under (cache/FORMAT.md, "Trust"): these bytes run on the GPU.
  if (std::string why = cache::untrusted(info); !why.empty()) throw refused("not trusted: " + why);
  try {
    return platform::read_all(fd, path);
  } catch (const Error& error) {
    throw refused(error.what());
  }
}

ModuleFiles read_module_files(std::vector<RawModuleFile> files, const std::string& module) {
  if (files.empty()) throw bad("RawModule " + module, "no binary file given");
  ModuleFiles out;
  out.module = module;
  for (auto& file : files) {
    const std::string what = fmt::format("RawModule {}: {}", module, file.path);
    if (file.path.empty()) throw bad("RawModule " + module, "a binary file's path is empty");
    std::string bytes = read_trusted_file(file.path, module);
    if (bytes.empty()) throw bad(what, "the file is empty");
    const auto kind = module_file_kind(bytes);
    if (!kind) {
      throw bad(what, "not a cubin (\\x7fELF), fatbin (magic 0xba55ed50) or PTX (text starting with .version): "
                      "kernc loads binaries built with nvcc -cubin, -fatbin or -ptx");
    }
    RawModuleBinary binary;
    binary.path = file.path;
    binary.kind = *kind;
    binary.bytes = bytes.size();
    if (*kind == ModuleFileKind::fatbin) {
      if (file.target) {
        throw bad(what, fmt::format("a fatbin holds images for several targets and the driver picks among them: give "
                                    "no target (not {})",
                                    file.target->str()));
      }
    } else {
      const BinaryKind wanted = *kind == ModuleFileKind::cubin ? BinaryKind::cubin : BinaryKind::ptx;
      if (file.target && (file.target->backend() != Backend::cuda || file.target->binary_kind() != wanted)) {
        throw bad(what, fmt::format("the file is {} but the target given, {}, is not a {} target ({})",
                                    to_string(*kind), file.target->str(), to_string(*kind),
                                    wanted == BinaryKind::cubin ? "sm_NN" : "compute_NN"));
      }
      Target read = *kind == ModuleFileKind::cubin ? cubin_target(bytes, what) : ptx_target(bytes, what);
      if (file.target && file.target->sm_number() != read.sm_number()) {
        throw bad(what, fmt::format("the file was built for {} but the target given is {}", read.str(),
                                    file.target->str()));
      }
      binary.target = file.target ? *file.target : read;  // the given one may add a suffix the file lacks
    }
    out.binaries.push_back(std::move(binary));
    out.images.push_back(std::move(bytes));
  }
  const auto& binaries = out.binaries;
  for (std::size_t k = 0; k < binaries.size(); ++k) {
    if (binaries[k].kind == ModuleFileKind::fatbin && binaries.size() > 1) {
      throw bad("RawModule " + module, fmt::format("{} is a fatbin, which must be the only file: the driver picks among "
                                                   "its images, and kernc among files (given: {})",
                                                   binaries[k].path, describe_all(binaries)));
    }
    for (std::size_t j = 0; j < k; ++j) {
      if (binaries[j].target && binaries[k].target && *binaries[j].target == *binaries[k].target) {
        throw bad("RawModule " + module, fmt::format("two files for {}: {} and {}", binaries[k].target->str(),
                                                     binaries[j].path, binaries[k].path));
      }
    }
  }
  return out;
}

std::vector<std::size_t> ladder_order(const std::vector<RawModuleBinary>& binaries, const Target& device) {
  std::vector<std::size_t> order;
  if (device.backend() != Backend::cuda) return order;
  for (std::size_t k = 0; k < binaries.size(); ++k) {
    if (!binaries[k].target) order.push_back(k);  // a fatbin: the driver's choice
  }
  for (const Target& rung : binary_ladder(device)) {
    for (std::size_t k = 0; k < binaries.size(); ++k) {
      const auto& target = binaries[k].target;
      if (target && on_rung(*target, rung, device) && std::find(order.begin(), order.end(), k) == order.end()) {
        order.push_back(k);
      }
    }
  }
  return order;
}

Engine::Loaded load_module_files(const ModuleFiles& files, const Device& device) {
  const Target target = device.target();
  const std::vector<std::size_t> order = ladder_order(files.binaries, target);
  std::string refusals;
  for (std::size_t k : order) {
    const RawModuleBinary& binary = files.binaries[k];
    Engine::Loaded loaded;
    try {
      const NvtxRange range([&] {
        return nvtx_range_name(NvtxPhase::module_load, nvtx_subject_or(files.module),
                               binary.target ? binary.target->str() : target.str());
      });
      loaded.module = device.load(files.images[k]);
    } catch (const Error& error) {
      if (error.code() == ErrorCode::device_fault || error.code() == ErrorCode::no_device) throw;
      refusals += fmt::format("; the driver refused {}: {}", describe(binary), error.what());
      logger().warn("RawModule {}: {} passed over: the driver cannot load it: {}", files.module, describe(binary),
                    error.what());
      continue;
    }
    auto program = std::make_shared<CompiledProgram>();
    program->target = binary.target ? *binary.target : target;
    program->binary = files.images[k];
    program->compiler = "loaded from " + binary.path;
    loaded.program = std::move(program);
    loaded.outcome = CacheOutcome::disk_hit;
    loaded.location = binary.path;
    loaded.choice = describe_choice(binary, target);
    logger().debug("RawModule {} on device {} ({}): {}", files.module, device.ordinal(), target.str(), loaded.choice);
    return loaded;
  }
  throw Error(ErrorCode::unsupported_target,
              fmt::format("RawModule {}: no binary runs on {} (device {}): given {}{}{}", files.module, target.str(),
                          device.ordinal(), describe_all(files.binaries),
                          order.empty() && target.backend() == Backend::cuda
                              ? fmt::format("; {} runs an {} cubin, a cubin of its major with a lower minor, "
                                                      "or PTX of compute_NN with NN <= {}",
                                            target.str(), target.str(), target.sm_number())
                              : std::string(),
                          refusals));
}

}  // namespace detail
}  // namespace kernc
