// libFuzzer target: the cache entry decoder (header, sizes, checksum, metadata JSON).
// The checksum makes random bytes fail early, so the input's first byte chooses whether
// the checksum is first recomputed over the rest: then the metadata parser is reached.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cache/entry_format.hpp"
#include "platform/sha256.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 1) && bytes.size() >= kernc::cache::kEntryHeaderSize) {
    const std::string digest = kernc::platform::sha256_raw(std::string_view(bytes).substr(kernc::cache::kEntryHeaderSize));
    bytes.replace(24, 32, digest);
  }
  std::string problem;
  auto entry = kernc::cache::decode_entry(bytes, "", &problem);
  (void)entry;
  return 0;
}
