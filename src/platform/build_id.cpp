#include "platform/build_id.hpp"

#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>

namespace kernc::platform {

namespace {

struct Search {
  std::uintptr_t address;  // an address inside kernc's code
  std::string id;
  bool found_object = false;
};

// The NT_GNU_BUILD_ID note of one PT_NOTE segment, or empty.
std::string build_id_note(const unsigned char* notes, std::size_t size) {
  std::size_t offset = 0;
  auto align4 = [](std::size_t n) { return (n + 3) & ~std::size_t{3}; };
  while (offset + sizeof(ElfW(Nhdr)) <= size) {
    ElfW(Nhdr) header;
    std::memcpy(&header, notes + offset, sizeof header);
    const std::size_t name_at = offset + sizeof header;
    const std::size_t desc_at = name_at + align4(header.n_namesz);
    const std::size_t next = desc_at + align4(header.n_descsz);
    if (next > size || next <= offset) return {};
    if (header.n_type == NT_GNU_BUILD_ID && header.n_namesz == 4 && std::memcmp(notes + name_at, "GNU", 4) == 0) {
      static const char* kDigits = "0123456789abcdef";
      std::string hex;
      for (std::size_t k = 0; k < header.n_descsz; ++k) {
        hex += kDigits[notes[desc_at + k] >> 4];
        hex += kDigits[notes[desc_at + k] & 15];
      }
      return hex;
    }
    offset = next;
  }
  return {};
}

int visit(struct dl_phdr_info* info, std::size_t, void* data) {
  auto* search = static_cast<Search*>(data);
  bool holds = false;
  for (int k = 0; k < info->dlpi_phnum && !holds; ++k) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[k];
    if (segment.p_type != PT_LOAD) continue;
    const std::uintptr_t start = info->dlpi_addr + segment.p_vaddr;
    holds = search->address >= start && search->address < start + segment.p_memsz;
  }
  if (!holds) return 0;
  search->found_object = true;
  for (int k = 0; k < info->dlpi_phnum && search->id.empty(); ++k) {
    const ElfW(Phdr)& segment = info->dlpi_phdr[k];
    if (segment.p_type != PT_NOTE) continue;
    search->id = build_id_note(reinterpret_cast<const unsigned char*>(info->dlpi_addr + segment.p_vaddr),
                               segment.p_memsz);
  }
  return 1;  // this object holds kernc: stop
}

}  // namespace

const std::string& code_build_id() {
  static const std::string id = [] {
    Search search{reinterpret_cast<std::uintptr_t>(&build_id_note), {}};
    dl_iterate_phdr(visit, &search);
    return search.id;
  }();
  return id;
}

}  // namespace kernc::platform
